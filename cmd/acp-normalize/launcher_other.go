//go:build !unix

package main

// watchLauncher does nothing here: the npm launcher passes no descriptor
// on Windows (the proxy still ends when the editor closes its pipes, and
// the job object ends the agent's tree with it).
func watchLauncher() {}
