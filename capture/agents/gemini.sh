#!/usr/bin/env bash
# Records Gemini CLI (gemini --acp) against the fake Gemini API.
# Usage: capture/agents/gemini.sh (make captures VENDOR=gemini)
VENDOR=gemini
source "$(dirname "$0")/lib.sh"

VERSION=0.61.0
install_pkg "@google/gemini-cli@$VERSION"
GEMINI=$PKG/node_modules/@google/gemini-cli/bundle/gemini.js

config() {
	mkdir -p "$HOME_DIR/.gemini"
	cat >"$HOME_DIR/.gemini/settings.json" <<'JSON'
{
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
JSON
}

# GOOGLE_GEMINI_BASE_URL with a key selects Gemini's "gateway" auth: no
# Google login. GEMINI_CLI_NO_RELAUNCH keeps it one process.
gemini_env=(--env "GOOGLE_GEMINI_BASE_URL={{MODEL_URL}}" --env "GEMINI_API_KEY=dummy-key"
	--env "GEMINI_CLI_NO_RELAUNCH=true")

for scenario in codebase-investigator cli-help generalist subagents; do
	wanted "$scenario" || continue
	fresh_run
	config
	case $scenario in
	subagents) record subagents gemini/codebase-investigator --subagents "${gemini_env[@]}" -- node "$GEMINI" --acp ;;
	*) record "$scenario" "gemini/$scenario" "${gemini_env[@]}" -- node "$GEMINI" --acp ;;
	esac
done
