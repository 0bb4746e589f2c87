# Shared by capture/agents/<vendor>.sh (sourced, not run). The convention:
#   VENDOR=<name>; source lib.sh; install_pkg <npm-spec> (or
#   AGENT=$(installed <npm-spec> <entry file>)); then for each scenario:
#   fresh_run; record <scenario> [acp-capture flags] -- <agent argv>, the
#   agent's config going into $HOME_DIR by a --template from
#   capture/agents/<vendor>/ (or written there by the script).
# Everything lives under $CAPTURE_DIR/<vendor> (default /tmp/acp-capture;
# the package cache in pkg/, a fresh home/ and ws/ per run), so the
# recordings name no other path of the recording machine. Recordings made
# elsewhere name /tmp/acp-capture all the same (the folder is scrubbed), so
# they compare with everyone's.
#
# PROBE=1: no recording; `acp-normalize probe` ($ACP_NORMALIZE) runs once
# against the agent, set up as for its first scenario, with the fake model
# serving; the report goes to $PROBE_DIR/<vendor>.txt (capture/probes/).
set -euo pipefail

: "${VENDOR:?set VENDOR before sourcing lib.sh}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEFAULT_CAPTURE_DIR=/tmp/acp-capture
CAPTURE_DIR=${CAPTURE_DIR:-$DEFAULT_CAPTURE_DIR}
mkdir -p "$CAPTURE_DIR"
CAPTURE_DIR=$(cd "$CAPTURE_DIR" && pwd -P)
ROOT=$CAPTURE_DIR/$VENDOR
PKG=$ROOT/pkg
HOME_DIR=$ROOT/home
TMP_DIR=$ROOT/tmp
WS=$ROOT/ws
OUT_DIR=$REPO/testdata/captures/$VENDOR
LOG_DIR=$ROOT/logs
ACP_CAPTURE=${ACP_CAPTURE:-$REPO/bin/acp-capture}
# SCENARIOS="foreground permission" records only those.
SCENARIOS=${SCENARIOS:-}
PROBE=${PROBE:-}
ACP_NORMALIZE=${ACP_NORMALIZE:-$REPO/bin/acp-normalize}
PROBE_DIR=${PROBE_DIR:-$REPO/capture/probes}
probed=
# Recordings made in another folder are written as if made in the default.
relocate=()
if [ "$CAPTURE_DIR" != "$DEFAULT_CAPTURE_DIR" ]; then
	relocate=(--scrub "$CAPTURE_DIR=$DEFAULT_CAPTURE_DIR" --scratch "$DEFAULT_CAPTURE_DIR/$VENDOR")
fi

mkdir -p "$PKG" "$OUT_DIR" "$LOG_DIR"

# install_pkg SPEC: npm-install SPEC (name@version) into $PKG unless that
# version is already there (the cache between runs).
install_pkg() {
	local spec=$1 name=${1%@*} version=${1##*@}
	local have
	have=$(node -p "require('$PKG/node_modules/$name/package.json').version" 2>/dev/null || true)
	if [ "$have" != "$version" ]; then
		echo "installing $spec into $PKG" >&2
		npm install --prefix "$PKG" --no-audit --no-fund --loglevel=error "$spec" >&2
	fi
}

# installed SPEC FILE: install_pkg SPEC (name@version), then print the
# path of FILE in that package (the agent's entry point). Called as
# AGENT=$(installed ...), where bash clears set -e: a failed install must
# fail the call itself, so that the script stops there.
installed() {
	install_pkg "$1" || return
	echo "$PKG/node_modules/${1%@*}/$2"
}

# fresh_run: an empty home, temp folder, and a workspace holding notes.txt.
fresh_run() {
	rm -rf "$HOME_DIR" "$TMP_DIR" "$WS"
	mkdir -p "$HOME_DIR" "$TMP_DIR" "$WS"
	printf 'alpha: the first line of the notes file\nbeta: the second line\ngamma: the last line\n' >"$WS/notes.txt"
}

# wanted SCENARIO: whether SCENARIOS selects it (all when empty).
wanted() {
	[ -z "$SCENARIOS" ] && return 0
	case " $SCENARIOS " in *" $1 "*) return 0 ;; esac
	return 1
}

# record NAME SCRIPT [acp-capture flags] -- AGENT...: one session into
# $OUT_DIR/NAME.jsonl, the model's requests into $LOG_DIR/NAME.model.jsonl.
record() {
	local name=$1 script=$2
	shift 2
	if [ -n "$PROBE" ]; then
		probe "$script" "$@"
		return
	fi
	echo "recording $VENDOR/$name" >&2
	"$ACP_CAPTURE" --script "$script" --out "$OUT_DIR/$name.jsonl" \
		--workspace "$WS" --model-log "$LOG_DIR/$name.model.jsonl" --kill-grace 10s \
		--env "HOME=$HOME_DIR" --env "TMPDIR=$TMP_DIR" --env "LANG=C.UTF-8" --env "TERM=dumb" --env "NO_COLOR=1" \
		${relocate[@]+"${relocate[@]}"} "$@"
	echo "wrote $OUT_DIR/$name.jsonl ($(wc -c <"$OUT_DIR/$name.jsonl") bytes)" >&2
}

# probe SCRIPT [acp-capture flags] -- AGENT...: `acp-normalize probe` of the
# agent, once per run of a vendor script, in the environment a recording
# gets; the report into $PROBE_DIR/$VENDOR.txt.
probe() {
	local script=$1 flags=()
	shift
	[ -z "$probed" ] || return 0
	probed=1
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		flags+=("$1")
		shift
	done
	shift
	mkdir -p "$PROBE_DIR"
	echo "probing $VENDOR" >&2
	"$ACP_CAPTURE" --exec --script "$script" --out "$PROBE_DIR/$VENDOR.txt" --workspace "$WS" \
		--env "HOME=$HOME_DIR" --env "TMPDIR=$TMP_DIR" --env "LANG=C.UTF-8" --env "TERM=dumb" --env "NO_COLOR=1" \
		--log-level warn ${flags[@]+"${flags[@]}"} -- "$ACP_NORMALIZE" probe --timeout 60s -- "$@"
	cat "$PROBE_DIR/$VENDOR.txt"
}
