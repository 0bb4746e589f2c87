#!/usr/bin/env bash
# Records Qwen Code (qwen --acp) against the fake Chat Completions model.
# Usage: capture/agents/qwen.sh (make captures VENDOR=qwen)
VENDOR=qwen
source "$(dirname "$0")/lib.sh"

QWEN=$(installed @qwen-code/qwen-code@0.24.4 cli-entry.js)

qwen_env=(--template "$REPO/capture/agents/qwen/settings.json=$HOME_DIR/.qwen/settings.json"
	--env "OPENAI_BASE_URL={{MODEL_URL}}/v1" --env "OPENAI_API_KEY=dummy-key" --env "OPENAI_MODEL=fake-model")

for scenario in foreground background permission subagents; do
	wanted "$scenario" || continue
	fresh_run
	case $scenario in
	foreground) record foreground qwen/foreground "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	background) record background qwen/background --linger 10s "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	permission) record permission qwen/permission --mode default "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	subagents) record subagents qwen/foreground --subagents "${qwen_env[@]}" -- node "$QWEN" --acp ;;
	esac
done
