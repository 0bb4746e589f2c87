# acp-normalize — see README.md. `make test` is what CI runs.
GO        ?= go
# BIN is run as a path (it holds a slash): bin/acp-normalize, or absolute.
BIN       ?= bin/acp-normalize
FUZZTIME  ?= 30s
BENCHTIME ?= 2s
# Editors run on these: the module must build for all of them.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

DEMO_CAPTURE ?= testdata/captures/cursor/subagent-foreground.jsonl
DEMO_HTML    ?= bin/demo.html

# Agents the capture rig can record: one capture/agents/<vendor>.sh each.
CAPTURE_VENDORS := $(filter-out lib,$(basename $(notdir $(wildcard capture/agents/*.sh))))

.PHONY: build install demo test lint cross fuzz bench bench-short clean interop-deps captures update pipeline-check viewer-screenshot viewer-large release probes

build:
	$(GO) build -o $(BIN) ./cmd/acp-normalize

install:
	$(GO) install ./cmd/acp-normalize

## demo: build, then replay a bundled Cursor subagent session through the
## vendor modules as a timeline, and write the same session as an HTML
## viewer to DEMO_HTML (no agent, account or network needed).
## `make demo DEMO_CAPTURE=my-session.jsonl` shows any capture.
demo: build
	@echo
	@echo "Replaying $(DEMO_CAPTURE) through acp-normalize:"
	@echo
	@$(BIN) replay --format pretty $(DEMO_CAPTURE)
	@$(BIN) replay --format html $(DEMO_CAPTURE) > $(DEMO_HTML)
	@echo "One line per frame (C→A client to agent, A→C agent to client); under a frame, what"
	@echo "acp-normalize did: ~ replaced (the fields it added), ✗ dropped, ↩ replied, + emitted."
	@echo
	@echo "In a browser:      file://$(abspath $(DEMO_HTML))"
	@echo "Only the changes:  $(BIN) replay --diff --format pretty $(DEMO_CAPTURE)"
	@echo "More:              README.md, \"Debugging a session\""

## viewer-screenshot: the README's screenshot of the demo capture's viewer
## (docs/viewer.png), taken by the browser test in headless Chromium; the
## header it shows is kept in the PNG, and TestViewerScreenshotIsCurrent
## fails when the build's version or modules no longer match it.
viewer-screenshot:
	$(GO) test ./cmd/acp-normalize -run '^TestViewerInBrowser$$/^screenshot$$' -count=1 -v \
		-viewer.screenshot=$(CURDIR)/docs/viewer.png -viewer.capture=$(DEMO_CAPTURE)

## viewer-large: the viewer of a synthetic 100,000-frame capture, opened
## in headless Chromium; prints the sizes and times (kept in bin/viewer-large).
viewer-large:
	mkdir -p bin/viewer-large
	$(GO) test ./cmd/acp-normalize -run '^TestViewerInBrowser$$/^synthetic$$' -count=1 -v \
		-viewer.frames=100000 -viewer.keep=$(CURDIR)/bin/viewer-large

## test: gofmt, go vet and staticcheck (lint), the cross-platform build, then every test with the race detector.
test: lint cross interop-deps
	$(GO) test -race -count=1 ./...

## interop-deps: the TypeScript ACP SDK for the interop test (interop/ts) and the
## TypeScript conductor for the pipeline test (interop/conductor), installed from
## their lock files when missing; without npm those tests skip and say so.
INTEROP_NODE := interop/ts interop/conductor
interop-deps:
	@if command -v npm >/dev/null 2>&1; then \
		for d in $(INTEROP_NODE); do \
			[ -d $$d/node_modules ] || npm ci --prefix $$d --no-audit --no-fund --loglevel=error || exit 1; \
		done; \
	else \
		echo "npm not found: the TypeScript SDK interop and conductor tests will be skipped"; \
	fi

## lint: gofmt, go vet, then staticcheck at the pinned version, run with
## `go run` (the same here, in .ci/run and on a laptop: nothing to install,
## the module proxy and its checksum database serve it; it builds with its
## own go.mod, not ours). Any finding fails. Checks turned off, and why:
## staticcheck.conf.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

## cross: build and vet (tests included) for every platform editors run on,
## as the release builds them (CGO off, -trimpath: the release tests then
## reuse these compiles).
cross:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "cross: $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath ./... || exit 1; \
		GOOS=$$os GOARCH=$$arch $(GO) vet ./... || exit 1; \
	done

## fuzz: run every native fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz: $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## bench: Go benchmarks of the relay path (allocations included), then the
## process harness (cmd/acp-bench): every workload through cats with the
## same pipe hops (the floor), --modules none and all modules, alternating,
## medians of BENCHRUNS runs, as a table (docs/performance.md).
BENCHRUNS ?= 5
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./pipe ./route/... ./proxy ./rewrite ./cmd/acp-normalize
	$(GO) run ./cmd/acp-bench --proxy $(BIN) --runs $(BENCHRUNS)

## bench-short: the same, reduced to run in under a minute.
bench-short: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./route ./proxy ./cmd/acp-normalize
	$(GO) run ./cmd/acp-bench --proxy $(BIN) --short --runs $(BENCHRUNS)

## captures: record real agents against the scripted fake model into
## testdata/captures/<vendor>/ (capture/README.md). Needs node and npm
## access; not part of `make test`. `make captures VENDOR=qwen` records one
## agent, `SCENARIOS="foreground permission"` only those scenarios.
captures:
	$(GO) build -o bin/acp-capture ./cmd/acp-capture
	@for v in $(if $(VENDOR),$(VENDOR),$(CAPTURE_VENDORS)); do \
		[ -f capture/agents/$$v.sh ] || { echo "no capture/agents/$$v.sh (have: $(CAPTURE_VENDORS))"; exit 2; }; \
		echo "captures: $$v"; \
		SCENARIOS="$(SCENARIOS)" ACP_CAPTURE=$(CURDIR)/bin/acp-capture bash capture/agents/$$v.sh || exit 1; \
	done

## update: rewrite every golden from the current code, e.g. after `make
## captures`: go test -update in each package whose tests have goldens
## (those that use rewrite/rewritetest or define -update themselves; a
## plain `go test ./... -update` stops at the packages without the flag).
## Review the diff (git diff --stat, then the files) before committing.
update:
	@pkgs=$$( { $(GO) list -test -f '{{if .ForTest}}{{.ForTest}}{{range .Deps}} {{.}}{{end}}{{end}}' ./... | \
		awk '/ [^ ]*\/rewrite\/rewritetest( |$$)/ {print $$1}'; \
		grep -l 'flag.Bool("update"' $$(git ls-files '*.go') | xargs -n1 dirname | sed 's|^|./|'; } | sort -u); \
	echo "go test -update:" $$pkgs; \
	$(GO) test -count=1 $$pkgs -update

## release: the release VERSION=x.y.z into dist/: an archive per platform of
## PLATFORMS (.tar.gz, .zip for Windows), SHA256SUMS and the npm packages
## (dist/npm/), reproducibly; refuses uncommitted changes, a version without
## a CHANGELOG.md entry and a tag vVERSION on another commit (ALLOW_DIRTY=1:
## a trial build that checks none of them; docs/releasing.md).
release:
	@[ -n "$(VERSION)" ] || { echo "usage: make release VERSION=x.y.z"; exit 2; }
	$(GO) run ./cmd/acp-release --version "$(VERSION)" --out dist --platforms "$(PLATFORMS)" $(if $(ALLOW_DIRTY),--allow-dirty)

## probes: run `acp-normalize probe` against each agent of the capture rig
## (installed from npm on first use, like `make captures`; offline, the
## fake model serving) and write capture/probes/<vendor>.txt. VENDOR=qwen
## for one. Not part of `make test`.
probes:
	$(GO) build -o bin/acp-capture ./cmd/acp-capture
	$(GO) build -o bin/acp-normalize ./cmd/acp-normalize
	@failed=; for v in $(if $(VENDOR),$(VENDOR),$(CAPTURE_VENDORS)); do \
		[ -f capture/agents/$$v.sh ] || { echo "no capture/agents/$$v.sh (have: $(CAPTURE_VENDORS))"; exit 2; }; \
		PROBE=1 ACP_CAPTURE=$(CURDIR)/bin/acp-capture ACP_NORMALIZE=$(CURDIR)/bin/acp-normalize \
			bash capture/agents/$$v.sh || failed="$$failed $$v"; \
	done; \
	[ -z "$$failed" ] || { echo "probe failed for:$$failed"; exit 1; }

## pipeline-check: a real agent (Qwen Code, from npm, against the capture rig's
## fake model) behind acp-normalize in the proxy slot of the real TypeScript
## conductor, compared with the same scenarios behind the stdio wrapper
## (capture/qwen-pipeline.sh; README "Pipelines"). Not part of `make test`.
## `make pipeline-check SCENARIOS=foreground` runs one scenario.
pipeline-check:
	SCENARIOS="$(if $(SCENARIOS),$(SCENARIOS),foreground permission subagents)" bash capture/qwen-pipeline.sh

clean:
	rm -rf bin dist interop/ts/node_modules interop/conductor/node_modules
