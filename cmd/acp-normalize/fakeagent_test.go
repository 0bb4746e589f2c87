//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The test binary doubles as a scripted fake agent: TestMain runs
// fakeAgent when ACPN_FAKE_AGENT names a script file. Script lines:
//
//	out <raw frame>        write the line to stdout
//	outpartial <text>      write text to stdout with no newline
//	outfile <path>         write the file's bytes to stdout as they are
//	hugeline <size>        write one message chunk of size bytes (hugeLine), in
//	                       1 MiB writes, then a chunk "after"
//	err <text>             write a line to stderr
//	errflood <n>           write n numbered 100-byte lines to stderr
//	cursortasks <n> <size> write n cursor/task requests with prompts of size
//	                       bytes whose tool calls never come (C4 holds them),
//	                       reading stdin meanwhile, then a session/update "held";
//	                       then it waits for stdin's EOF
//	wait <substring>       read stdin until a line contains substring
//	echo                   copy every remaining stdin line to stdout; at EOF go on
//	interleave             like echo, but write {"method":"_n","params":{"i":K}} before each
//	ignore-term            ignore SIGTERM (and SIGINT, SIGHUP)
//	spawn <pidfile>        start a grandchild (sleep) and write both pids to pidfile
//	spawn-holding <pidfile> the same, the grandchild holding stdout and stderr open
//	spawn-tree <pidfile>   start a grandchild in its own process group and a
//	                       daemon in its own session (its parent exits), and
//	                       write the three pids (agent, grandchild, daemon)
//	sleep <duration>       sleep
//	kill-self <signal>     end by a signal (TERM, KILL)
//	exit <code>            exit with code
//
// At the end of the script it exits 0.
func fakeAgent(script string) int {
	data, err := os.ReadFile(script)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 99
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	for _, line := range strings.Split(string(data), "\n") {
		cmd, arg, _ := strings.Cut(line, " ")
		switch cmd {
		case "":
		case "out":
			out.WriteString(arg + "\n")
			out.Flush()
		case "outpartial":
			out.WriteString(arg)
			out.Flush()
		case "outfile":
			b, err := os.ReadFile(arg)
			if err != nil {
				return 98
			}
			out.Write(b)
			out.Flush()
		case "hugeline":
			size, _ := strconv.Atoi(arg)
			out.Flush()
			if err := writeHugeLine(os.Stdout, size); err != nil {
				return 94
			}
			out.WriteString(afterHugeLine)
			out.Flush()
		case "err":
			fmt.Fprintln(os.Stderr, arg)
		case "cursortasks":
			n, size := 0, 0
			fmt.Sscan(arg, &n, &size)
			drained := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, in); close(drained) }() // the proxy's {} answers
			prompt := strings.Repeat("p", size)
			for i := range n {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%d,"method":"cursor/task","params":{"toolCallId":"tool_%08d","description":"held","prompt":"%s","model":"m"}}`+"\n", i+1, i, prompt)
			}
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"held"}}}}` + "\n")
			out.Flush()
			// Until the proxy closes stdin (the client left): an agent that
			// waited for a signal would cost the test the whole kill grace.
			<-drained
		case "errflood":
			n, _ := strconv.Atoi(arg)
			w := bufio.NewWriterSize(os.Stderr, 1<<16)
			for i := range n {
				fmt.Fprintf(w, "stderr flood line %08d %s\n", i, strings.Repeat("x", 72))
			}
			w.Flush()
		case "wait":
			for {
				l, err := in.ReadString('\n')
				if strings.Contains(l, arg) {
					break
				}
				if err != nil {
					return 97
				}
			}
		case "echo", "interleave":
			k := 0
			for {
				l, err := in.ReadString('\n')
				if l != "" {
					if cmd == "interleave" {
						fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"_n","params":{"i":%d}}`+"\n", k)
						k++
					}
					out.WriteString(l)
					if in.Buffered() == 0 {
						out.Flush()
					}
				}
				if err != nil {
					break
				}
			}
			out.Flush()
		case "ignore-term":
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		case "spawn", "spawn-holding":
			child := exec.Command("sleep", "300") // stdio on /dev/null
			if cmd == "spawn-holding" {
				child.Stdout, child.Stderr = os.Stdout, os.Stderr
			}
			if err := child.Start(); err != nil {
				return 96
			}
			pids := fmt.Sprintf("%d %d\n", os.Getpid(), child.Process.Pid)
			if err := os.WriteFile(arg, []byte(pids), 0o600); err != nil {
				return 95
			}
		case "spawn-tree":
			if code := spawnTree(arg); code != 0 {
				return code
			}
		case "sleep":
			d, _ := time.ParseDuration(arg)
			time.Sleep(d)
		case "kill-self":
			out.Flush()
			sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[arg]
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig)
			time.Sleep(10 * time.Second)
		case "exit":
			out.Flush()
			code, _ := strconv.Atoi(arg)
			return code
		default:
			fmt.Fprintln(os.Stderr, "fake agent: unknown script line:", line)
			return 94
		}
	}
	return 0
}

// spawnTree starts what escapes a process-group teardown: a grandchild
// that moved to its own process group (as Claude Code's shell tools do)
// and a daemon that called setsid and whose parent exited (so it is an
// orphan in its own session), and writes the pids to pidfile.
func spawnTree(pidfile string) int {
	grandchild := exec.Command("sleep", "300")
	grandchild.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := grandchild.Start(); err != nil {
		return 96
	}
	launcher := exec.Command("sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!")
	launcher.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := launcher.Output()
	if err != nil {
		return 96
	}
	daemon := strings.TrimSpace(string(out))
	pids := fmt.Sprintf("%d %d %s\n", os.Getpid(), grandchild.Process.Pid, daemon)
	if err := os.WriteFile(pidfile, []byte(pids), 0o600); err != nil {
		return 95
	}
	return 0
}
