//go:build linux || darwin

package benchharness

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Row is the summary of one workload through one variant: medians over
// the runs.
type Row struct {
	Workload, Variant string
	Elapsed           time.Duration
	MBps, FramesPerS  float64
	// Ratio is floor time / this time (throughput relative to the
	// floor; for round trips, of the p50).
	Ratio    float64
	P50, P99 time.Duration
	CPUPerGB float64 // CPU seconds per GB relayed
	PeakRSS  int64
}

// Summarize turns the runs of one workload (samples[variant][run]) into
// rows; variant 0 is the floor.
func Summarize(w Workload, samples [][]Sample, variants []Variant) []Row {
	rows := make([]Row, len(samples))
	for vi, runs := range samples {
		var elapsed, p50s, p99s, cpus, rss []time.Duration
		for _, s := range runs {
			elapsed = append(elapsed, s.Elapsed)
			cpus = append(cpus, s.Usage.cpu)
			rss = append(rss, time.Duration(s.Usage.maxRSS))
			if len(s.RTT) > 0 {
				p50s = append(p50s, percentile(s.RTT, 0.50))
				p99s = append(p99s, percentile(s.RTT, 0.99))
			}
		}
		r := Row{Workload: w.Name, Variant: variants[vi].Name, Elapsed: median(elapsed),
			P50: median(p50s), P99: median(p99s), PeakRSS: int64(median(rss))}
		bytes := float64(w.Bytes) // relayed, for CPU per GB
		if w.Kind == RoundTrip {
			// Each trip (warm-up included) crosses the relay both ways.
			bytes = 2 * float64(w.Iterations+10) * float64(len(w.Ping))
			if r.P50 > 0 {
				r.MBps = 2 * float64(len(w.Ping)) / r.P50.Seconds() / 1e6
				r.FramesPerS = 2 / r.P50.Seconds()
			}
		} else if r.Elapsed > 0 {
			r.MBps = bytes / r.Elapsed.Seconds() / 1e6
			r.FramesPerS = float64(w.Frames) / r.Elapsed.Seconds()
		}
		r.CPUPerGB = median(cpus).Seconds() / (bytes / 1e9)
		rows[vi] = r
	}
	for i := range rows {
		switch {
		case w.Kind == RoundTrip && rows[i].P50 > 0:
			rows[i].Ratio = rows[0].P50.Seconds() / rows[i].P50.Seconds()
		case rows[i].Elapsed > 0:
			rows[i].Ratio = rows[0].Elapsed.Seconds() / rows[i].Elapsed.Seconds()
		}
	}
	return rows
}

// PrintTable writes rows as an aligned table.
func PrintTable(out io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tvariant\ttime\tMB/s\tframes/s\t×floor\trtt p50\trtt p99\tCPU s/GB\tpeak RSS MiB\t")
	for _, r := range rows {
		p50, p99 := "-", "-"
		if r.P50 > 0 {
			p50, p99 = fmtDur(r.P50), fmtDur(r.P99)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.2f\t%s\t%s\t%.2f\t%.1f\t\n",
			r.Workload, r.Variant, fmtDur(r.Elapsed), r.MBps, r.FramesPerS, r.Ratio, p50, p99, r.CPUPerGB, float64(r.PeakRSS)/(1<<20))
	}
	tw.Flush()
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
