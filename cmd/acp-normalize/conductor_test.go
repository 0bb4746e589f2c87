//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Rules K1-K3 against the real TypeScript conductor, @thinkwell/conductor
// 0.5.7 (interop/conductor, installed from its lock file): every bundled
// capture is played by one client through acp-normalize as a plain stdio
// wrapper, and through the conductor with acp-normalize in its proxy slot
// (one), twice in a row (two), and beside a pass-through component
// written with the TypeScript ACP SDK (before, after; and as its own
// process, once per vendor). The client must see
// the same frames each way: the same normalized session. Two differences
// are the conductor's and are taken out before comparing: it renumbers
// the requests it forwards (agent request ids are compared by order), and
// the initialize answer carries the handshake's _meta.proxy: true, which
// must be there (K1). One Node process runs it all (compare.mjs).

// conductorDir is the Node project of the conductor test.
var conductorDir = filepath.Join("..", "..", "interop", "conductor")

type conductorRun struct {
	Capture       string            `json:"capture"`
	Layout        string            `json:"layout"`
	Frames        []json.RawMessage `json:"frames"`
	Errors        []string          `json:"errors"`
	ShutdownNoise []string          `json:"shutdownNoise"`
}

func TestK1K2ConductorTypeScript(t *testing.T) {
	dir := needNodeModule(t, conductorDir, "@thinkwell/conductor")
	captures := captureFiles(t, "*/*.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{filepath.Join(dir, "compare.mjs"), "--bin", proxyBinary}, captures...)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("compare.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		Runs []conductorRun `json:"runs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("compare.mjs printed no result: %v\n%s", err, stdout.String())
	}
	ref := map[string]conductorRun{}
	for _, r := range out.Runs {
		if r.Layout == "stdio" {
			ref[r.Capture] = r
		}
	}
	layouts := map[string]string{
		"one":    "K1_only_proxy",
		"two":    "K2_two_in_a_row",
		"before": "K2_after_an_SDK_passthrough",
		"after":  "K2_before_an_SDK_passthrough",
		// the pass-through as its own stdio process, once per vendor
		"process": "K2_after_an_SDK_passthrough_process",
	}
	seen := map[string]int{}
	for _, r := range out.Runs {
		if r.Layout == "stdio" {
			continue
		}
		seen[r.Layout]++
		name := layouts[r.Layout] + "/" + strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(r.Capture), "../../testdata/captures/"), ".jsonl")
		t.Run(name, func(t *testing.T) {
			want := ref[r.Capture]
			if len(want.Errors) > 0 || len(r.Errors) > 0 {
				t.Fatalf("session errors: stdio %q, conductor %q", want.Errors, r.Errors)
			}
			if len(want.Frames) == 0 {
				t.Fatal("the stdio run delivered nothing")
			}
			got := decodeFrames(t, r.Frames)
			if !dropProxyMarker(got) {
				t.Fatalf("the initialize answer has no _meta.proxy: true (K1): %s", r.Frames[0])
			}
			exp := decodeFrames(t, want.Frames)
			for i := range max(len(exp), len(got)) {
				if i >= len(exp) || i >= len(got) || !reflect.DeepEqual(exp[i], got[i]) {
					t.Fatalf("frame %d differs (stdio %d frames, conductor %d):\nstdio:     %s\nconductor: %s",
						i, len(exp), len(got), frameAt(want.Frames, i), frameAt(r.Frames, i))
				}
			}
		})
	}
	vendors := map[string]bool{}
	for _, c := range captures {
		vendors[filepath.Base(filepath.Dir(c))] = true
	}
	for layout := range layouts {
		want := len(captures)
		if layout == "process" {
			want = len(vendors)
		}
		if seen[layout] != want {
			t.Errorf("layout %s ran %d captures, want %d", layout, seen[layout], want)
		}
	}
}

func decodeFrames(t *testing.T, raws []json.RawMessage) []any {
	t.Helper()
	out := make([]any, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	return out
}

// dropProxyMarker removes result._meta.proxy (true) from the first
// frame, the initialize answer, and reports whether it was there.
func dropProxyMarker(frames []any) bool {
	if len(frames) == 0 {
		return false
	}
	f, _ := frames[0].(map[string]any)
	res, _ := f["result"].(map[string]any)
	meta, _ := res["_meta"].(map[string]any)
	if meta["proxy"] != true {
		return false
	}
	delete(meta, "proxy")
	if len(meta) == 0 {
		delete(res, "_meta")
	}
	return true
}

func frameAt(frames []json.RawMessage, i int) string {
	if i < len(frames) {
		return string(frames[i])
	}
	return "<none>"
}
