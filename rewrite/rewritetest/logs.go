package rewritetest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// LogRecorder is a slog handler that keeps every record. With FailOnPanic
// set, a record whose err attribute mentions a panic fails the test: the
// router recovers a module's panic and fails open, which would hide it.
type LogRecorder struct {
	// FailOnPanic, when set, is failed by a panic record.
	FailOnPanic testing.TB

	mu    *sync.Mutex
	recs  *[]slog.Record
	attrs []slog.Attr
}

// NewLogRecorder returns an empty recorder (the zero LogRecorder is not
// usable).
func NewLogRecorder() *LogRecorder {
	return &LogRecorder{mu: &sync.Mutex{}, recs: &[]slog.Record{}}
}

// Logger returns a logger writing to r.
func (r *LogRecorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled implements slog.Handler: every level is kept.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(r.attrs...)
	if r.FailOnPanic != nil {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" && strings.Contains(a.Value.String(), "panic") {
				r.FailOnPanic.Errorf("module panicked: %s", a.Value)
			}
			return true
		})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.recs = append(*r.recs, rec)
	return nil
}

// WithAttrs implements slog.Handler; the records share one list.
func (r *LogRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(append([]slog.Attr(nil), r.attrs...), as...)
	return &c
}

// WithGroup implements slog.Handler (groups are not kept).
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

// Records returns the records kept so far.
func (r *LogRecorder) Records() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]slog.Record(nil), *r.recs...)
}

// Find returns the records at level whose message contains msg.
func (r *LogRecorder) Find(level slog.Level, msg string) []slog.Record {
	var out []slog.Record
	for _, rec := range r.Records() {
		if rec.Level == level && strings.Contains(rec.Message, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// Values returns, in order, the value of every attribute key of the
// records at level.
func (r *LogRecorder) Values(level slog.Level, key string) []string {
	var out []string
	for _, rec := range r.Records() {
		if rec.Level != level {
			continue
		}
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

// Attr returns the value of attribute key of rec, or "".
func Attr(rec slog.Record, key string) string {
	var v string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// Count returns how many records at level whose message contains msg
// have attribute key with value.
func (r *LogRecorder) Count(level slog.Level, msg, key, value string) int {
	n := 0
	for _, rec := range r.Find(level, msg) {
		if Attr(rec, key) == value {
			n++
		}
	}
	return n
}
