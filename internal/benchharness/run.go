//go:build linux || darwin

package benchharness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Sample is one run of one workload through one variant.
type Sample struct {
	Elapsed  time.Duration // stream: first line to sentinel
	RTT      []time.Duration
	OutBytes int64
	Usage    usage
}

// argvs returns the processes of variant v around the agent.
func argvs(v Variant, proxy string, agent []string) [][]string {
	if v.ProxyArgs == nil {
		return [][]string{{"cat"}, agent, {"cat"}}
	}
	if v.Proxy != "" {
		proxy = v.Proxy
	}
	argv := append([]string{proxy}, v.ProxyArgs...)
	argv = append(argv, "--log-level", "error", "--")
	return [][]string{append(argv, agent...)}
}

// readyLine is the streaming agent's first frame: when the client has
// read it, the relay and the agent are running, and the clock starts.
const readyLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bench: ready"}}}}` + "\n"

// streamAgent says it is ready, waits for the client's first line, then
// writes file.
func streamAgent(file string) []string {
	return []string{"sh", "-c", `printf '%s\n' "$1" && read -r line && exec cat "$0"`, file, strings.TrimSuffix(readyLine, "\n")}
}

// RunOnce runs w once through v.
func RunOnce(v Variant, proxy string, w Workload) (Sample, error) {
	// A child's peak RSS starts at its parent's RSS when it is spawned
	// (Linux counts the memory it shared before exec): keep ours small.
	debug.FreeOSMemory()
	if w.Kind == RoundTrip {
		return runRoundTrip(v, proxy, w)
	}
	return runStream(v, proxy, w)
}

func runStream(v Variant, proxy string, w Workload) (Sample, error) {
	p, err := startPipeline(argvs(v, proxy, streamAgent(w.File)))
	if err != nil {
		return Sample{}, err
	}
	var s Sample
	// Start-up is not timed: the clock starts once the agent's first
	// frame has come through the relay.
	ready := make([]byte, len(readyLine))
	if _, err := io.ReadFull(p.out, ready); err != nil || string(ready) != readyLine {
		p.kill()
		return s, fmt.Errorf("%s: no ready frame from the agent: %q, %v (%s)", v.Name, ready, err, p.stderr.Text())
	}
	buf := make([]byte, 256<<10)
	var tail []byte // the last len(Sentinel) bytes read
	start := time.Now()
	if _, err := io.WriteString(p.in, w.Start); err != nil {
		p.kill()
		return s, fmt.Errorf("writing the first line: %w", err)
	}
	for s.Elapsed == 0 {
		n, err := p.out.Read(buf)
		s.OutBytes += int64(n)
		tail = append(tail, buf[:n]...)
		if len(tail) > len(Sentinel) {
			tail = append(tail[:0], tail[len(tail)-len(Sentinel):]...)
		}
		if string(tail) == Sentinel {
			s.Elapsed = time.Since(start)
		}
		if err != nil && s.Elapsed == 0 {
			p.kill()
			return s, fmt.Errorf("%s: output ended after %d bytes without the sentinel: %v (%s)", v.Name, s.OutBytes, err, p.stderr.Text())
		}
	}
	peak := p.peak()
	p.in.Close() // the client is done
	rest, _ := io.Copy(io.Discard, p.out)
	s.OutBytes += rest
	s.Usage, err = p.wait()
	if err != nil {
		return s, err
	}
	if peak > 0 {
		s.Usage.maxRSS = peak
	}
	if v.ProxyArgs == nil || len(v.ProxyArgs) > 0 {
		// The floor and --modules none change nothing (P1).
		if s.OutBytes != w.Bytes {
			return s, fmt.Errorf("%s: %d bytes out, want %d", v.Name, s.OutBytes, w.Bytes)
		}
	}
	return s, nil
}

// runRoundTrip sends w.Ping through an echo agent (cat) w.Iterations
// times, one at a time, after a few unmeasured warm-up trips.
// pipeBuffer is what a pipe surely holds (Linux: 64 KiB, macOS: 16 KiB):
// a frame this short is written before its echo is read.
const pipeBuffer = 16 << 10

func runRoundTrip(v Variant, proxy string, w Workload) (Sample, error) {
	p, err := startPipeline(argvs(v, proxy, []string{"cat"}))
	if err != nil {
		return Sample{}, err
	}
	out := bufio.NewReaderSize(p.out, 64<<10)
	echo := make([]byte, len(w.Ping))
	const warmup = 10
	var s Sample
	for i := range warmup + w.Iterations {
		start := time.Now()
		var n int
		var werr error
		if len(w.Ping) <= pipeBuffer {
			n, werr = p.in.Write(w.Ping)
			_, err = io.ReadFull(out, echo)
		} else {
			// More than the pipes hold: write while reading the echo.
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				n, werr = p.in.Write(w.Ping)
			}()
			_, err = io.ReadFull(out, echo)
			<-wrote
		}
		if werr != nil || n != len(w.Ping) {
			p.kill()
			return s, fmt.Errorf("%s: writing: %w", v.Name, werr)
		}
		if err != nil {
			p.kill()
			return s, fmt.Errorf("%s: reading the echo: %w (%s)", v.Name, err, p.stderr.Text())
		}
		if i >= warmup {
			s.RTT = append(s.RTT, time.Since(start))
		}
		if !bytes.Equal(echo, w.Ping) {
			p.kill()
			return s, fmt.Errorf("%s: echo differs from the frame sent", v.Name)
		}
		s.OutBytes += int64(len(echo))
	}
	peak := p.peak()
	s.Usage, err = p.wait()
	if peak > 0 {
		s.Usage.maxRSS = peak
	}
	return s, err
}

// percentile returns the q-quantile (0..1) of ds, by nearest rank.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Measure runs w runs times through every variant (the floor first), alternating (run 1 of
// each variant, then run 2 of each, ...), so that load from elsewhere on
// the machine hits every variant alike. It returns samples[variant][run].
func Measure(w Workload, proxy string, runs int, variants []Variant) ([][]Sample, error) {
	samples := make([][]Sample, len(variants))
	for range runs {
		for vi, v := range variants {
			s, err := RunOnce(v, proxy, w)
			if err != nil {
				return nil, err
			}
			samples[vi] = append(samples[vi], s)
		}
	}
	return samples, nil
}
