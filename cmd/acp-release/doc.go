// Command acp-release builds a release of acp-normalize into a directory
// (`make release VERSION=x.y.z` writes dist/): one archive per platform,
// SHA256SUMS and the npm packages, reproducibly (package
// internal/release).
//
//	acp-release --version 0.1.0 --out dist --platforms "linux/amd64 darwin/arm64 ..."
package main
