#!/usr/bin/env bash
# The pipeline check with a real agent (rules K1-K3; README "Pipelines"):
# Qwen Code, recorded through the capture rig against the fake model, once
# behind `acp-normalize -- qwen --acp` (the stdio wrapper) and once behind
# the real TypeScript conductor with acp-normalize in its proxy slot
# (interop/conductor/stdio.mjs --proxy acp-normalize -- qwen --acp), per
# scenario; then interop/conductor/same-session.mjs compares the two client
# views. Not part of `make test` (it installs Qwen Code from npm and runs it);
# `make pipeline-check`. Everything lives under /tmp/acp-capture/pipeline
# (its own root, so it never meets a vendor recording running at the same
# time); the captures are kept there for reading, not committed.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=/tmp/acp-capture/pipeline
PKG=$ROOT/pkg
RUN=$ROOT/run
OUT=$ROOT/out
SCENARIOS=${SCENARIOS:-foreground permission subagents}
VERSION=0.24.4

mkdir -p "$PKG" "$OUT"
have=$(node -p "require('$PKG/node_modules/@qwen-code/qwen-code/package.json').version" 2>/dev/null || true)
if [ "$have" != "$VERSION" ]; then
	npm install --prefix "$PKG" --no-audit --no-fund --loglevel=error "@qwen-code/qwen-code@$VERSION" >&2
fi
QWEN=$PKG/node_modules/@qwen-code/qwen-code/cli-entry.js
[ -d "$REPO/interop/conductor/node_modules" ] || npm ci --prefix "$REPO/interop/conductor" --no-audit --no-fund --loglevel=error
# The binaries and the conductor are copied under the run's root, so the
# recordings name no path of this checkout.
mkdir -p "$ROOT/bin" "$ROOT/conductor"
(cd "$REPO" && go build -o "$ROOT/bin/acp-normalize" ./cmd/acp-normalize && go build -o "$ROOT/bin/acp-capture" ./cmd/acp-capture)
cp -r "$REPO/interop/conductor/stdio.mjs" "$REPO/interop/conductor/package.json" "$REPO/interop/conductor/node_modules" "$ROOT/conductor/"
ACPN=$ROOT/bin/acp-normalize

record() { # record NAME SCRIPT [acp-capture flags] -- AGENT...
	local name=$1 script=$2
	shift 2
	rm -rf "$RUN" && mkdir -p "$RUN/home" "$RUN/tmp" "$RUN/ws"
	printf 'alpha: the first line of the notes file\nbeta: the second line\ngamma: the last line\n' >"$RUN/ws/notes.txt"
	echo "recording pipeline/$name" >&2
	"$ROOT/bin/acp-capture" --script "$script" --out "$OUT/$name.jsonl" --workspace "$RUN/ws" --scratch "$ROOT" \
		--kill-grace 10s --template "$REPO/capture/agents/qwen/settings.json=$RUN/home/.qwen/settings.json" \
		--env "HOME=$RUN/home" --env "TMPDIR=$RUN/tmp" --env "LANG=C.UTF-8" --env "TERM=dumb" --env "NO_COLOR=1" \
		--env "OPENAI_BASE_URL={{MODEL_URL}}/v1" --env "OPENAI_API_KEY=dummy-key" --env "OPENAI_MODEL=fake-model" "$@"
}

pairs=()
for scenario in $SCENARIOS; do
	flags=()
	script=qwen/$scenario
	case $scenario in
	permission) flags=(--mode default) ;;
	subagents) flags=(--subagents) script=qwen/foreground ;;
	esac
	record "$scenario-stdio" "$script" "${flags[@]}" -- "$ACPN" -- node "$QWEN" --acp
	record "$scenario-conductor" "$script" "${flags[@]}" -- node "$ROOT/conductor/stdio.mjs" --proxy "$ACPN" -- node "$QWEN" --acp
	pairs+=("$OUT/$scenario-stdio.jsonl" "$OUT/$scenario-conductor.jsonl")
done
node "$REPO/interop/conductor/same-session.mjs" "${pairs[@]}"
