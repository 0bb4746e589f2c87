# `make demo` — the first command of the README (issue 4). On a fresh clone
# it builds the tool and replays a bundled Cursor subagent session through
# the vendor modules, printed as a timeline: what the agent sent, and what
# acp-normalize replaced, dropped, answered or added. No agent, account or
# network is needed. The lead includes this snippet in the Makefile.
#
#   make demo                                  # the bundled session
#   make demo DEMO_CAPTURE=my-session.jsonl    # any capture (--record FILE)

GO ?= go
DEMO_CAPTURE ?= testdata/captures/cursor/subagent-foreground.jsonl

.PHONY: demo
demo:
	$(GO) build -o bin/acp-normalize ./cmd/acp-normalize
	@echo
	@echo "Replaying $(DEMO_CAPTURE) through acp-normalize:"
	@echo
	@./bin/acp-normalize replay --format pretty $(DEMO_CAPTURE)
	@echo "Only the changes:  ./bin/acp-normalize replay --diff --format pretty $(DEMO_CAPTURE)"
	@echo "More:              docs/debugging.md"
