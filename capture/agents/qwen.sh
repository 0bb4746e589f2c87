#!/usr/bin/env bash
# Records Qwen Code (qwen --acp) against the fake Chat Completions model.
# Usage: capture/agents/qwen.sh (make captures VENDOR=qwen)
VENDOR=qwen
source "$(dirname "$0")/lib.sh"

VERSION=0.24.4
install_pkg "@qwen-code/qwen-code@$VERSION"
QWEN=$PKG/node_modules/@qwen-code/qwen-code/cli-entry.js

config() {
	mkdir -p "$HOME_DIR/.qwen"
	cat >"$HOME_DIR/.qwen/settings.json" <<'JSON'
{
  "security": {"auth": {"selectedType": "openai"}},
  "selectedType": "openai",
  "model": {"name": "fake-model"},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "ui": {"hideTips": true}
}
JSON
}

qwen_env=(--env "OPENAI_BASE_URL={{MODEL_URL}}/v1" --env "OPENAI_API_KEY=dummy-key" --env "OPENAI_MODEL=fake-model")

for scenario in foreground background permission subagents; do
	wanted "$scenario" || continue
	fresh_run
	config
	case $scenario in
	foreground) record foreground qwen/foreground "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	background) record background qwen/background --linger 10s "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	permission) record permission qwen/permission --mode default "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	subagents) record subagents qwen/foreground --subagents "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	esac
done
