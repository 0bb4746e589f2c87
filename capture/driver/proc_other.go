//go:build !unix

package driver

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd)               {}
func terminate(p *os.Process)          { _ = p.Kill() }
func kill(p *os.Process)               { _ = p.Kill() }
func exitCode(st *os.ProcessState) int { return st.ExitCode() }
