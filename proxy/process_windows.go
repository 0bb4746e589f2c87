//go:build windows

package proxy

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// processGroup is a Windows job object holding the agent. The job is
// created with KILL_ON_JOB_CLOSE, so when the proxy exits for any reason
// (its handle closes) Windows ends the agent and every process it started
// after joining the job. Windows has no SIGTERM: terminate and kill both
// end the job, and forwarded signals end it too.
type processGroup struct {
	job  windows.Handle
	proc *os.Process // fallback when no job could be made
}

func newProcessGroup(p *os.Process) processGroup {
	g := jobFor(p)
	g.proc = p
	return g
}

func jobFor(p *os.Process) processGroup {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return processGroup{}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return processGroup{}
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return processGroup{}
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return processGroup{}
	}
	return processGroup{job: job}
}

// alive reports false: what is left of the job is ended when the proxy
// closes the job's handle (KILL_ON_JOB_CLOSE).
func (g processGroup) alive() bool { return false }

func (g processGroup) signal(os.Signal) error { return g.kill() }
func (g processGroup) terminate() error       { return g.kill() }

func (g processGroup) kill() error {
	if g.job == 0 {
		return g.proc.Kill()
	}
	return windows.TerminateJobObject(g.job, 1)
}

func (g processGroup) release() {
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
	}
}

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }

// ForwardedSignals returns the signals the proxy forwards (rule F5): on
// Windows only os.Interrupt exists, and it ends the agent's job.
func ForwardedSignals() []os.Signal { return []os.Signal{os.Interrupt} }

func catchSIGPIPE() func() { return func() {} }

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
