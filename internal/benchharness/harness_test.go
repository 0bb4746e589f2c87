//go:build linux || darwin

package benchharness

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

var tinySizes = Sizes{StormChunks: 300, MixedChunks: 3100, HugeLine: 1 << 20, SmallPings: 5, LargePings: 2}

// tinyWorkloads generates every workload at tinySizes into a temporary
// folder.
func tinyWorkloads(t *testing.T) []Workload {
	t.Helper()
	workloads, err := Generate(t.TempDir(), tinySizes, 7)
	if err != nil {
		t.Fatal(err)
	}
	return workloads
}

func TestGenerateWritesValidFrames(t *testing.T) {
	for _, w := range tinyWorkloads(t) {
		t.Run(w.Name, func(t *testing.T) {
			if w.Kind == RoundTrip {
				if !json.Valid(bytes.TrimSuffix(w.Ping, []byte("\n"))) || w.Ping[len(w.Ping)-1] != '\n' {
					t.Fatal("ping frame is not one JSON line")
				}
				return
			}
			data, err := os.ReadFile(w.File)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != w.Bytes || !bytes.HasSuffix(data, []byte(Sentinel)) {
				t.Fatalf("%d bytes (want %d), sentinel last: %v", len(data), w.Bytes, bytes.HasSuffix(data, []byte(Sentinel)))
			}
			lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
			if int64(len(lines)) != w.Frames {
				t.Fatalf("%d lines, Frames says %d", len(lines), w.Frames)
			}
			for i, l := range lines {
				if !json.Valid(l) {
					t.Fatalf("line %d is not JSON: %.120q", i+1, l)
				}
			}
		})
	}
}

func TestFloorDeliversEveryWorkload(t *testing.T) {
	for _, w := range tinyWorkloads(t) {
		t.Run(w.Name, func(t *testing.T) {
			s, err := RunOnce(Variants[0], "", w)
			if err != nil {
				t.Fatal(err)
			}
			if w.Kind == Stream && (s.Elapsed <= 0 || s.OutBytes != w.Bytes) {
				t.Fatalf("elapsed %v, %d bytes out of %d", s.Elapsed, s.OutBytes, w.Bytes)
			}
			if w.Kind == RoundTrip && len(s.RTT) != w.Iterations {
				t.Fatalf("%d round trips, want %d", len(s.RTT), w.Iterations)
			}
		})
	}
}

func TestSummarizeRatios(t *testing.T) {
	w := Workload{Name: "w", Kind: Stream, Bytes: 1e9, Frames: 1e6}
	samples := [][]Sample{
		{{Elapsed: time.Second}, {Elapsed: 3 * time.Second}, {Elapsed: time.Second}},
		{{Elapsed: 2 * time.Second}, {Elapsed: 2 * time.Second}, {Elapsed: 9 * time.Second}},
		{{Elapsed: 4 * time.Second, Usage: usage{cpu: 2 * time.Second}}},
	}
	rows := Summarize(w, samples, Variants)
	if rows[0].Ratio != 1 || rows[1].Ratio != 0.5 || rows[2].Ratio != 0.25 {
		t.Fatalf("ratios %v %v %v, want 1 0.5 0.25 (medians)", rows[0].Ratio, rows[1].Ratio, rows[2].Ratio)
	}
	if rows[0].MBps != 1000 || rows[2].CPUPerGB != 2 {
		t.Fatalf("MB/s %v, CPU s/GB %v", rows[0].MBps, rows[2].CPUPerGB)
	}
}
