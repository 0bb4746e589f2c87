#!/usr/bin/env bash
# Records Claude Code through its ACP adapter (claude-agent-acp) against the
# fake Anthropic Messages model. The files are named rig-<scenario>.jsonl:
# the older claude captures in the same folder stay.
# Usage: capture/agents/claude.sh (make captures VENDOR=claude)
VENDOR=claude
source "$(dirname "$0")/lib.sh"

ADAPTER=$(installed @agentclientprotocol/claude-agent-acp@0.101.0 dist/index.js)

claude_env=(--env "ANTHROPIC_BASE_URL={{MODEL_URL}}" --env "ANTHROPIC_API_KEY=dummy-key"
	--env "DISABLE_AUTOUPDATER=1" --env "DISABLE_TELEMETRY=1" --env "DISABLE_ERROR_REPORTING=1"
	--env "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
# Claude Code refuses to skip permission prompts as root outside a sandbox.
if [ "$(id -u)" = 0 ]; then claude_env+=(--env "IS_SANDBOX=1"); fi

for scenario in foreground background permission subagents; do
	wanted "$scenario" || continue
	fresh_run
	case $scenario in
	foreground) record rig-foreground claude/foreground "${claude_env[@]}" -- node "$ADAPTER" ;;
	background) record rig-background claude/background --linger 10s "${claude_env[@]}" -- node "$ADAPTER" ;;
	permission) record rig-permission claude/permission --mode default "${claude_env[@]}" -- node "$ADAPTER" ;;
	subagents) record rig-subagents claude/foreground --subagents "${claude_env[@]}" -- node "$ADAPTER" ;;
	esac
done
