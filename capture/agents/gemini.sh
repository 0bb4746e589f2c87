#!/usr/bin/env bash
# Records Gemini CLI (gemini --acp) against the fake Gemini API.
# Usage: capture/agents/gemini.sh (make captures VENDOR=gemini)
VENDOR=gemini
source "$(dirname "$0")/lib.sh"

GEMINI=$(installed @google/gemini-cli@0.61.0 bundle/gemini.js)

# GOOGLE_GEMINI_BASE_URL with a key selects Gemini's "gateway" auth: no
# Google login. GEMINI_CLI_NO_RELAUNCH keeps it one process.
gemini_env=(--template "$REPO/capture/agents/gemini/settings.json=$HOME_DIR/.gemini/settings.json"
	--env "GOOGLE_GEMINI_BASE_URL={{MODEL_URL}}" --env "GEMINI_API_KEY=dummy-key"
	--env "GEMINI_CLI_NO_RELAUNCH=true")

for scenario in codebase-investigator cli-help generalist subagents; do
	wanted "$scenario" || continue
	fresh_run
	case $scenario in
	subagents) record subagents gemini/codebase-investigator --subagents "${gemini_env[@]}" -- node "$GEMINI" --acp ;;
	*) record "$scenario" "gemini/$scenario" "${gemini_env[@]}" -- node "$GEMINI" --acp ;;
	esac
done
