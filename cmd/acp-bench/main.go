//go:build linux || darwin

package main

import (
	"fmt"
	"os"
	"regexp"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/internal/benchharness"
	"github.com/acp-normalize/acp-normalize/pipe"
)

func main() {
	app := &cli.App{
		Name:  "acp-bench",
		Usage: "measure acp-normalize against a pipeline of cats with the same pipe hops",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proxy", Value: "bin/acp-normalize", Usage: "the acp-normalize binary to measure"},
			&cli.BoolFlag{Name: "short", Usage: "reduced workloads (make bench-short)"},
			&cli.IntFlag{Name: "runs", Value: 5, Usage: "runs of each workload and variant (the table shows medians)"},
			&cli.StringFlag{Name: "only", Usage: "run only workloads whose name matches this regular expression"},
			&cli.StringFlag{Name: "baseline", Usage: "another acp-normalize binary to measure in the same run (before/after a change)"},
			&cli.StringFlag{Name: "dir", Usage: "where to write the workload files (default: a temporary directory, removed after)"},
			&cli.StringFlag{Name: "session", Value: benchharness.DefaultSession, Usage: "the capture whose agent frames, repeated, make the session workload (\"\" leaves it out)"},
		},
		Action: run,
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "acp-bench:", err)
		os.Exit(1)
	}
}

func run(c *cli.Context) error {
	if _, err := os.Stat(c.String("proxy")); err != nil {
		return fmt.Errorf("the proxy binary (build it with make build): %w", err)
	}
	only, err := regexp.Compile(c.String("only"))
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	dir := c.String("dir")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "acp-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	sizes := benchharness.FullSizes
	if c.Bool("short") {
		sizes = benchharness.ShortSizes
	}
	if path := c.String("session"); path != "" {
		if sizes.SessionFrames, err = agentFrames(path); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "generating workloads in", dir)
	workloads, err := benchharness.Generate(dir, sizes, 1)
	if err != nil {
		return err
	}
	variants := benchharness.Variants
	if b := c.String("baseline"); b != "" {
		variants = append(variants,
			benchharness.Variant{Name: "baseline none", ProxyArgs: []string{"--modules", "none"}, Proxy: b},
			benchharness.Variant{Name: "baseline all", ProxyArgs: []string{}, Proxy: b})
	}
	var rows []benchharness.Row
	for _, w := range workloads {
		if !only.MatchString(w.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: %d runs of %d variants\n", w.Name, c.Int("runs"), len(variants))
		samples, err := benchharness.Measure(w, c.String("proxy"), c.Int("runs"), variants)
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
		rows = append(rows, benchharness.Summarize(w, samples, variants)...)
	}
	benchharness.PrintTable(os.Stdout, rows)
	return nil
}

// agentFrames returns the JSON frames the agent sent in the capture at
// path, in order (its other records are left out): the session workload.
// Read here, not in the harness, which stands below the capture format.
func agentFrames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the session workload's capture: %w", err)
	}
	defer f.Close()
	var frames []string
	for rec, err := range pipe.NewCaptureReader(f).Records() {
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if rec.IsInput() && rec.From == pipe.Agent && rec.Frame != nil {
			frames = append(frames, string(rec.Frame))
		}
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("%s: no agent frames", path)
	}
	return frames, nil
}
