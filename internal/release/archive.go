package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"time"
)

// entry is one file of an archive, in the order written.
type entry struct {
	name string
	mode int64
	data []byte
}

// archiveEntries are the files of a platform's archive: the binary, then
// the license, readme and changelog.
func archiveEntries(p Platform, bin []byte, d docs) []entry {
	return []entry{
		{p.exe(), 0o755, bin},
		{"LICENSE", 0o644, d.license},
		{"README.md", 0o644, d.readme},
		{"CHANGELOG.md", 0o644, d.changelog},
	}
}

// writeArchive writes the platform's archive into out and returns its
// file name: a .tar.gz (a .zip for Windows) whose files are in one
// directory named like the archive.
func writeArchive(out, version string, p Platform, binPath string, d docs, mtime time.Time) (string, error) {
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return "", err
	}
	base := p.archiveName(version)
	entries := archiveEntries(p, bin, d)
	var buf bytes.Buffer
	name := base + ".tar.gz"
	if p.OS == "windows" {
		name = base + ".zip"
		err = writeZip(&buf, base, entries, mtime)
	} else {
		err = writeTarGz(&buf, base, entries, mtime)
	}
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return name, os.Chtimes(path, mtime, mtime)
}

// writeTarGz writes a gzip-compressed ustar archive with fixed headers:
// numeric owner 0, no owner names, mtime the commit's, no gzip name or
// time.
func writeTarGz(w io.Writer, dir string, entries []entry, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode int64, typ byte, size int64) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: mtime, Format: tar.FormatUSTAR}
	}
	if err := tw.WriteHeader(hdr(dir+"/", 0o755, tar.TypeDir, 0)); err != nil {
		return err
	}
	for _, e := range entries {
		if err := tw.WriteHeader(hdr(dir+"/"+e.name, e.mode, tar.TypeReg, int64(len(e.data)))); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes a deflated zip with fixed headers: the commit's time
// (UTC), fixed modes, no other extra fields.
func writeZip(w io.Writer, dir string, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, e := range entries {
		h := &zip.FileHeader{Name: dir + "/" + e.name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
