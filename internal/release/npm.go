package release

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// launcherJS is the launcher package's bin: plain Node, no dependencies.
//
//go:embed npm/launcher.js
var launcherJS []byte

// aboutJSON is the launcher package's description and keywords: product
// text, which names the agents as the README does, kept as data beside
// the launcher (no code lists the vendors but the module list).
//
//go:embed npm/about.json
var aboutJSON []byte

// about is the launcher package's description and search keywords.
type about struct {
	Description string   `json:"description"`
	Keywords    []string `json:"keywords"`
}

const (
	repoURL  = "git+https://github.com/acp-normalize/acp-normalize.git"
	homepage = "https://github.com/acp-normalize/acp-normalize#readme"
	bugs     = "https://github.com/acp-normalize/acp-normalize/issues"
)

type repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// packageJSON holds the package.json fields the release writes, in the
// order written.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	Keywords             []string          `json:"keywords,omitempty"`
	License              string            `json:"license"`
	Repository           repository        `json:"repository"`
	Homepage             string            `json:"homepage"`
	Bugs                 string            `json:"bugs"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Files                []string          `json:"files"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Engines              map[string]string `json:"engines,omitempty"`
	PreferUnplugged      bool              `json:"preferUnplugged,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
}

// PlatformPackage is the npm package carrying the platform's binary:
// acp-normalize-<process.platform>-<process.arch>.
func PlatformPackage(p Platform) string { return Name + "-" + p.npmOS() + "-" + p.npmCPU() }

// writePlatformPackage writes npm/<package>/ and returns its binary's path.
func writePlatformPackage(npm, version string, p Platform, binPath string, d docs, mtime time.Time) (string, error) {
	name := PlatformPackage(p)
	dir := filepath.Join(npm, name)
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return "", err
	}
	pj := packageJSON{
		Name:            name,
		Version:         version,
		Description:     fmt.Sprintf("The %s binary for %s (%s/%s), installed by the %s package", Name, p, p.npmOS(), p.npmCPU(), Name),
		License:         "Apache-2.0",
		Repository:      repository{"git", repoURL},
		Homepage:        homepage,
		Bugs:            bugs,
		Files:           []string{"bin/" + p.exe(), "LICENSE", "README.md"},
		OS:              []string{p.npmOS()},
		CPU:             []string{p.npmCPU()},
		PreferUnplugged: true,
	}
	readme := fmt.Sprintf("# %s\n\nThe `%s` binary for %s, %s %s. It is installed by the [`%s`](https://www.npmjs.com/package/%s)\npackage, which runs it: install that one (`npx -y %s -- AGENT ...`).\n",
		name, Name, p, Name, version, Name, Name, Name)
	files := []npmFile{
		{"package.json", 0o644, nil, pj},
		{"bin/" + p.exe(), 0o755, bin, nil},
		{"LICENSE", 0o644, d.license, nil},
		{"README.md", 0o644, []byte(readme), nil},
	}
	if err := writeFiles(dir, files, mtime); err != nil {
		return "", err
	}
	return filepath.Join(dir, "bin", p.exe()), nil
}

// writeLauncherPackage writes npm/acp-normalize/: the launcher, whose
// optionalDependencies are the platform packages (npm installs the one
// whose os and cpu match).
func writeLauncherPackage(npm, version string, platforms []Platform, d docs, mtime time.Time) error {
	deps := map[string]string{}
	for _, p := range platforms {
		deps[PlatformPackage(p)] = version
	}
	var ab about
	if err := json.Unmarshal(aboutJSON, &ab); err != nil {
		return fmt.Errorf("npm/about.json: %w", err)
	}
	pj := packageJSON{
		Name:                 Name,
		Version:              version,
		Description:          ab.Description,
		Keywords:             ab.Keywords,
		License:              "Apache-2.0",
		Repository:           repository{"git", repoURL},
		Homepage:             homepage,
		Bugs:                 bugs,
		Bin:                  map[string]string{Name: "bin/" + Name + ".js"},
		Files:                []string{"bin/" + Name + ".js", "LICENSE", "README.md", "CHANGELOG.md"},
		Engines:              map[string]string{"node": ">=16"},
		OptionalDependencies: deps,
	}
	files := []npmFile{
		{"package.json", 0o644, nil, pj},
		{"bin/" + Name + ".js", 0o755, launcherJS, nil},
		{"LICENSE", 0o644, d.license, nil},
		{"README.md", 0o644, d.readme, nil},
		{"CHANGELOG.md", 0o644, d.changelog, nil},
	}
	return writeFiles(filepath.Join(npm, Name), files, mtime)
}

// npmFile is a file of a package: data, or json encoded.
type npmFile struct {
	name string
	mode os.FileMode
	data []byte
	json any
}

func writeFiles(dir string, files []npmFile, mtime time.Time) error {
	for _, f := range files {
		data := f.data
		if f.json != nil {
			// As npm writes package.json: ">=16", not encoding/json's
			// HTML-safe "\u003e=16", which the registry shows as is.
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(f.json); err != nil {
				return err
			}
			data = b.Bytes()
		}
		path := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, f.mode); err != nil {
			return err
		}
		// WriteFile's mode is masked by the umask: the bytes npm packs
		// must not depend on it.
		if err := os.Chmod(path, f.mode); err != nil {
			return err
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// Packages lists the npm package directories of a release under npm, the
// platform packages first: the order to publish them in (the launcher
// names them).
func Packages(npm string, platforms []Platform) []string {
	var dirs []string
	for _, p := range platforms {
		dirs = append(dirs, filepath.Join(npm, PlatformPackage(p)))
	}
	return append(dirs, filepath.Join(npm, Name))
}

// HostPlatform returns the platform of goos/goarch if the release has one.
func HostPlatform(goos, goarch string) (Platform, bool) {
	p, err := ParsePlatform(goos + "/" + goarch)
	return p, err == nil
}
