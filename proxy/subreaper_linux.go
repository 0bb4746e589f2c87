//go:build linux

package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The subreaper is the proxy's own binary, re-executed (/proc/self/exe)
// between the proxy and the agent (rule F5). It marks itself a child
// subreaper, so every process the agent's tree orphans, whatever group or
// session it moved to, becomes its child; it starts the agent with the
// proxy's pipes as its stdio (it copies no bytes), forwards what the proxy
// asks, and when the agent exits or the proxy goes away (even SIGKILLed)
// it ends every descendant: SIGTERM, the grace, SIGKILL, reaping each one.
// It exits with the agent's exit code (128+N for signal N).
//
// It talks to the proxy over two pipes: fd 3 carries commands from the
// proxy ("signal N", "kill"; EOF means the proxy is gone), fd 4 one status
// line back ("started PID" or "error MESSAGE").

// envSubreaper marks the re-executed binary as the subreaper; its value
// is "PROXYPID GRACE" (GRACE in nanoseconds). It is removed from the
// agent's environment.
const envSubreaper = "ACP_NORMALIZE_SUBREAPER"

const (
	subreaperControlFD = 3
	subreaperStatusFD  = 4
	// subreaperArgv0 names the process in ps; the agent's argv follows.
	subreaperArgv0 = "acp-normalize-subreaper"
	// parentDeathSignal is the subreaper's parent-death signal: a signal
	// nothing else sends it, so it always means "check the proxy".
	parentDeathSignal = syscall.SIGUSR2
)

// SubreaperMain runs the subreaper when this process was started as one
// and returns its exit code and true; otherwise it returns false at once.
// A program that calls Run must call it first thing in main (and a test
// binary that calls Run, first thing in TestMain).
func SubreaperMain() (int, bool) {
	spec, ok := os.LookupEnv(envSubreaper)
	if !ok {
		return 0, false
	}
	return runSubreaper(spec, os.Args[1:]), true
}

func runSubreaper(spec string, argv []string) int {
	// The parent-death signal is tied to the thread that forked: keep the
	// agent's forking thread alive for the subreaper's whole life.
	runtime.LockOSThread()
	status := os.NewFile(subreaperStatusFD, "status")
	control := os.NewFile(subreaperControlFD, "control")
	if status == nil || control == nil {
		fmt.Fprintln(os.Stderr, "acp-normalize-subreaper: started without its pipes")
		return 1
	}
	syscall.CloseOnExec(subreaperStatusFD)
	syscall.CloseOnExec(subreaperControlFD)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(status, "error "+format+"\n", args...)
		return 127
	}
	parent, grace, err := parseSubreaperSpec(spec)
	if err != nil {
		return fail("%v", err)
	}
	if len(argv) == 0 {
		return fail("no agent command")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("becoming a child subreaper: %v", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, parentDeathSignal)
	if os.Getppid() != parent {
		return fail("the proxy is gone")
	}
	agent, err := forkAgent(argv)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(status, "started %d\n", agent)
	_ = status.Close()
	detachStdio()

	s := &subreaper{agent: agent, grace: grace, parent: parent, code: -1}
	return s.run(sigs, readControl(control))
}

func parseSubreaperSpec(spec string) (parent int, grace time.Duration, err error) {
	f := strings.Fields(spec)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("bad %s value %q", envSubreaper, spec)
	}
	parent, err = strconv.Atoi(f[0])
	if err != nil {
		return 0, 0, fmt.Errorf("bad %s value %q: %w", envSubreaper, spec, err)
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || ns <= 0 {
		return 0, 0, fmt.Errorf("bad %s value %q", envSubreaper, spec)
	}
	return parent, time.Duration(ns), nil
}

// forkAgent starts argv in its own process group with the subreaper's
// stdio and environment (minus the subreaper marker).
func forkAgent(argv []string) (int, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envSubreaper+"=") {
			env = append(env, kv)
		}
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		// If the subreaper itself is killed (it never exits before the
		// agent otherwise), the agent goes with it.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, describeExecError(path, err)
	}
	return pid, nil
}

// describeExecError says why an agent could not be run, in words a user
// can act on (the kernel's ENOENT for a missing #! interpreter names the
// agent, which exists).
func describeExecError(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT):
		if _, statErr := os.Stat(path); statErr == nil {
			return fmt.Errorf("%s: its interpreter (the #! line) was not found: %w", path, err)
		}
	case errors.Is(err, syscall.ENOEXEC):
		return fmt.Errorf("%s: not a program the system can run (empty, or no #! line): %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// detachStdio points the subreaper's stdin and stdout at /dev/null: the
// agent has the proxy's pipes, and the proxy must see the agent's stdout
// end when the agent's tree closes it, not when the subreaper exits.
// stderr stays, for the subreaper's own complaints.
func detachStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	_ = unix.Dup3(int(null.Fd()), 0, 0)
	_ = unix.Dup3(int(null.Fd()), 1, 0)
}

// controlCommand is one line from the proxy; eof is set when the proxy's
// end closed (the proxy exited or died).
type controlCommand struct {
	line string
	eof  bool
}

func readControl(f *os.File) <-chan controlCommand {
	ch := make(chan controlCommand)
	go func() {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			ch <- controlCommand{line: sc.Text()}
		}
		ch <- controlCommand{eof: true}
	}()
	return ch
}

// subreaper is the state of the subreaper's loop.
type subreaper struct {
	agent  int // pid, also the agent's process group id
	grace  time.Duration
	parent int
	code   int // the agent's exit code, -1 while it runs

	ending  bool // SIGTERM went to every descendant
	killing bool // SIGKILL goes to every descendant
}

// reaped is one child the reaper collected.
type reaped struct {
	pid    int
	status syscall.WaitStatus
}

// reap waits for children, one at a time, and closes none when there is
// no child left: then no descendant is left either (every living
// descendant has a living ancestor that is a child of the subreaper).
func reap(got chan<- reaped, none chan<- struct{}) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			close(none)
			return
		}
		got <- reaped{pid: pid, status: ws}
	}
}

func (s *subreaper) run(sigs <-chan os.Signal, control <-chan controlCommand) int {
	got := make(chan reaped)
	none := make(chan struct{})
	go reap(got, none)
	var graceOver <-chan time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-got:
			if r.pid == s.agent {
				s.code = waitStatusCode(r.status)
				graceOver = s.endAll(graceOver)
			}
			if s.killing {
				signalDescendants(syscall.SIGKILL) // orphans of the one that died
			}
		case <-none:
			return s.exitCode()
		case sig := <-sigs:
			if sig == parentDeathSignal {
				if os.Getppid() != s.parent {
					graceOver = s.endAll(graceOver)
				}
				continue
			}
			// Someone signalled the subreaper itself: it is the agent's
			// stand-in, so the agent's group gets it.
			s.signalAgent(sig.(syscall.Signal))
		case c := <-control:
			switch {
			case c.eof:
				// The proxy is gone (exited, crashed or SIGKILLed).
				graceOver = s.endAll(graceOver)
				control = nil
			case c.line == "kill":
				s.killAll()
			case strings.HasPrefix(c.line, "signal "):
				if n, err := strconv.Atoi(strings.TrimPrefix(c.line, "signal ")); err == nil {
					s.signalAgent(syscall.Signal(n))
				}
			}
		case <-graceOver:
			graceOver = nil
			s.killAll()
		case <-tick.C:
			if !s.killing {
				continue
			}
			if signalled, refused := signalDescendants(syscall.SIGKILL); signalled == 0 && refused > 0 {
				// Only processes this user may not signal are left (a
				// setuid program made them another user's, as sudo
				// does): waiting for them could take forever.
				fmt.Fprintf(os.Stderr, "acp-normalize-subreaper: %d process(es) of the agent's tree belong to another user and cannot be ended; leaving them\n", refused)
				return s.exitCode()
			}
		}
	}
}

// exitCode is the subreaper's exit code: the agent's, or 128+SIGKILL if
// it was not seen to exit.
func (s *subreaper) exitCode() int {
	if s.code < 0 {
		return 128 + int(syscall.SIGKILL)
	}
	return s.code
}

// endAll starts the end of every descendant: SIGTERM now, SIGKILL after
// the grace. It returns the channel the grace ends on.
func (s *subreaper) endAll(graceOver <-chan time.Time) <-chan time.Time {
	if s.ending || s.killing {
		return graceOver
	}
	s.ending = true
	signalDescendants(syscall.SIGTERM)
	return time.After(s.grace)
}

func (s *subreaper) killAll() {
	s.killing = true
	signalDescendants(syscall.SIGKILL)
}

// signalAgent forwards sig to the agent's process group (rule F5).
func (s *subreaper) signalAgent(sig syscall.Signal) {
	if s.code >= 0 {
		return // the agent is gone; its leftovers are being ended anyway
	}
	_ = syscall.Kill(-s.agent, sig)
}

func waitStatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// signalDescendants sends sig to every descendant of this process, found
// by walking /proc (orphans of the agent's tree are children of the
// subreaper, so the walk from it reaches all of them). It counts the
// processes signalled (zombies included) and those that refused it
// (EPERM: another user's).
func signalDescendants(sig syscall.Signal) (signalled, refused int) {
	for _, pid := range descendants(os.Getpid()) {
		switch err := syscall.Kill(pid, sig); {
		case err == nil:
			signalled++
		case errors.Is(err, syscall.EPERM):
			refused++
		}
	}
	return signalled, refused
}

// descendants returns the pids below root in the process tree.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := make(map[int][]int)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may contain anything: the fields
	// after its last ')' are state, ppid, ...
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
