package methods

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name.
const Name = "methods"

// Module returns the methods module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name:           Name,
		Doc:            "agent-to-client methods outside ACP (a vendor's own, such as craft/*): requests answered -32601, notifications dropped (V7, C13)",
		UnknownMethods: true,
		New: func(env rewrite.Env) rewrite.Rewriter {
			lg := env.Logger
			if lg == nil {
				lg = slog.New(slog.DiscardHandler)
			}
			return &rewriter{
				log:     lg,
				forward: env.Settings.Bool(rewrite.ForwardUnknownVendorMethods),
				client:  env.Client,
				filter:  rewrite.NewMethodFilter(),
				warned: rewrite.NewTable(env, table.Config[string, struct{}]{Name: "methods warned about", Logger: lg,
					Size: func(k string, _ struct{}) int64 { return int64(len(k)) }}),
			}
		},
	}
}

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

// rewriter is the module's state for one connection.
type rewriter struct {
	log     *slog.Logger
	forward bool
	client  *rewrite.Client // the connection's client (P7)
	filter  rewrite.MethodFilter
	warned  *table.Table[string, struct{}] // methods already logged
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	if f.From != pipe.Agent {
		return rewrite.Verdict{}, nil
	}
	if k := f.Kind(); k != pipe.Request && k != pipe.Notification {
		return rewrite.Verdict{}, nil
	}
	m := f.Method() // decoded by the envelope: session\/update is session/update
	if !r.filter.Unknown(m) {
		return rewrite.Verdict{}, nil // the trigger matched a nested "method"
	}
	if r.forward || r.client.Handles(m) {
		// P7: a method the client handles itself reaches it unchanged.
		return rewrite.Verdict{}, nil
	}
	if _, seen := r.warned.Get(m); !seen {
		r.warned.Put(m, struct{}{})
		what := "agent notification no client knows dropped"
		if f.Kind() == pipe.Request {
			what = "agent request no client knows answered -32601 by the proxy"
		}
		// Info, not warn: the proxy handled a known kind of vendor
		// quirk, and nobody watching an editor's agent log can act on it
		// (the default level shows warn and above only).
		r.log.Info(what+" (--forward-unknown-vendor-methods passes it on)", "rule", "V7", "method", m)
	}
	return rewrite.RefuseMethod(f, m), nil
}
