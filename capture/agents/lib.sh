# Shared by capture/agents/<vendor>.sh (sourced, not run). The convention:
#   VENDOR=<name>; source lib.sh; install_pkg <npm-spec>; then for each
#   scenario: fresh_run; write the agent's config into $HOME_DIR; record
#   <scenario> [acp-capture flags] -- <agent argv>.
# Everything lives under /tmp/acp-capture/<vendor> (the package cache in
# pkg/, a fresh home/ and ws/ per run), so the recordings name no other
# path of the recording machine.
set -euo pipefail

: "${VENDOR:?set VENDOR before sourcing lib.sh}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROOT=/tmp/acp-capture/$VENDOR
PKG=$ROOT/pkg
HOME_DIR=$ROOT/home
TMP_DIR=$ROOT/tmp
WS=$ROOT/ws
OUT_DIR=$REPO/testdata/captures/$VENDOR
LOG_DIR=$ROOT/logs
ACP_CAPTURE=${ACP_CAPTURE:-$REPO/bin/acp-capture}
# SCENARIOS="foreground permission" records only those.
SCENARIOS=${SCENARIOS:-}

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
	echo "recording $VENDOR/$name" >&2
	"$ACP_CAPTURE" --script "$script" --out "$OUT_DIR/$name.jsonl" \
		--workspace "$WS" --model-log "$LOG_DIR/$name.model.jsonl" --kill-grace 10s \
		--env "HOME=$HOME_DIR" --env "TMPDIR=$TMP_DIR" --env "LANG=C.UTF-8" --env "TERM=dumb" --env "NO_COLOR=1" \
		"$@"
	echo "wrote $OUT_DIR/$name.jsonl ($(wc -c <"$OUT_DIR/$name.jsonl") bytes)" >&2
}
