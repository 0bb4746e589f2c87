package main

import (
	"os"

	"github.com/acp-normalize/acp-normalize/proxy"
)

func main() {
	// First thing: this binary, re-executed, is the proxy's subreaper
	// (Linux; rule F5).
	if code, ok := proxy.SubreaperMain(); ok {
		os.Exit(code)
	}
	// Started by the npm launcher: end when it dies (launcher_unix.go).
	watchLauncher()
	os.Exit(runMain(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
