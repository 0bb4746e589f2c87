// Package release builds acp-normalize's release: for each platform a
// static binary in an archive (.tar.gz, .zip for Windows), SHA256SUMS,
// and the npm packages (a launcher package whose optionalDependencies are
// one package per platform carrying its binary, the way ACP agents ship).
//
// Builds are reproducible: the same commit and Go toolchain give the same
// bytes on any machine and at any time. Binaries are built with -trimpath,
// CGO off, an empty build id and explicit GOAMD64/GOARM64 levels; the only
// time in the build info, the archives and the npm files is the commit's.
// The archives are written here, with fixed headers (no owner names, the
// commit's time, fixed modes and order), rather than by the host's tar,
// gzip and zip, whose output differs between versions and which a bare
// machine may not have.
//
// The version comes from the caller (make release VERSION=x.y.z) and is
// stamped with -ldflags -X together with the commit and its time (the go
// command's own VCS stamps are off: it writes them in a clone but not in a
// git worktree, so the same commit would give two binaries); the binary
// reads them as it reads the build info (cmd/acp-normalize/version.go). A
// release refuses uncommitted changes, a version without a CHANGELOG.md
// entry and a tag v<version> on another commit; a trial build
// (AllowDirty) checks none of them.
package release
