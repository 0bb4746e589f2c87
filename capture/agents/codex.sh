#!/usr/bin/env bash
# Records Codex (codex-acp, the ACP adapter around the Codex CLI) against
# the fake OpenAI Responses model.
# Usage: capture/agents/codex.sh (make captures VENDOR=codex)
VENDOR=codex
source "$(dirname "$0")/lib.sh"

# The adapter depends on @openai/codex ^0.166.0 (the Codex CLI, one native
# binary per platform as an optional dependency); npm installs it with it.
CODEX_ACP=$(installed @agentclientprotocol/codex-acp@2.6.0 dist/index.js)

# gpt-5.5 is a model Codex knows (no "model metadata not found" warning)
# whose multi-agent tools are deferred behind tool_search, as for users of
# that model (capture/agents/codex/config.toml.tmpl). The provider needs no
# OpenAI login.
codex_env=(--template "$REPO/capture/agents/codex/config.toml.tmpl=$HOME_DIR/.codex/config.toml"
	--env "CODEX_HOME=$HOME_DIR/.codex" --env "FAKE_MODEL_API_KEY=dummy-key")

for scenario in foreground background permission subagents; do
	wanted "$scenario" || continue
	fresh_run
	case $scenario in
	foreground) record foreground codex/foreground "${codex_env[@]}" -- node "$CODEX_ACP" ;;
	# The child finishes after the prompt's response; linger to record it.
	background) record background codex/background --linger 10s "${codex_env[@]}" -- node "$CODEX_ACP" ;;
	# "workspace-write" has the user review approvals (the default mode,
	# "agent", has a model review them), so the child's escalated command
	# becomes a session/request_permission.
	permission) record permission codex/permission --mode workspace-write "${codex_env[@]}" -- node "$CODEX_ACP" ;;
	subagents) record subagents codex/foreground --subagents "${codex_env[@]}" -- node "$CODEX_ACP" ;;
	esac
done
