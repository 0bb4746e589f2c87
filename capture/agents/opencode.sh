#!/usr/bin/env bash
# Records OpenCode (opencode acp) against the fake Chat Completions model,
# through its @ai-sdk/openai-compatible provider.
# Usage: capture/agents/opencode.sh (make captures VENDOR=opencode)
VENDOR=opencode
source "$(dirname "$0")/lib.sh"

VERSION=1.18.33
install_pkg "opencode-ai@$VERSION"
OPENCODE=$PKG/node_modules/opencode-linux-x64/bin/opencode
# OpenCode npm-installs its provider package and @opencode-ai/plugin on
# first start; keep that cache between runs (outside the fresh HOME).
CACHE=$ROOT/cache
mkdir -p "$CACHE"

# config BASH_PERMISSION: the provider, the model, and whether bash asks.
config() {
	mkdir -p "$HOME_DIR/.config/opencode"
	cat >"$HOME_DIR/.config/opencode/opencode.json" <<JSON
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "permission": {"bash": "$1"},
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake model",
      "options": {"baseURL": "{{MODEL_URL}}/v1", "apiKey": "dummy-key"},
      "models": {"fake-model": {"name": "Fake model", "tool_call": true}}
    }
  }
}
JSON
}

oc_env=(--env "XDG_CACHE_HOME=$CACHE" --env "OPENCODE_DISABLE_AUTOUPDATE=true"
	--env "OPENCODE_DISABLE_MODELS_FETCH=true" --env "OPENCODE_DISABLE_SHARE=true"
	--env "OPENCODE_DISABLE_LSP_DOWNLOAD=true" --env "OPENCODE_DISABLE_CLAUDE_CODE=true")
cfg=$HOME_DIR/.config/opencode/opencode.json

for scenario in foreground background permission subagents; do
	wanted "$scenario" || continue
	fresh_run
	case $scenario in
	foreground)
		config allow
		record foreground opencode/foreground --template "$cfg=$cfg" "${oc_env[@]}" -- "$OPENCODE" acp ;;
	background)
		config allow
		record background opencode/background --template "$cfg=$cfg" --linger 10s "${oc_env[@]}" \
			--env "OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true" -- "$OPENCODE" acp ;;
	permission)
		# The subagent's permission ask never reaches the client (an OpenCode
		# bug): the turn hangs until the client cancels it.
		config ask
		record permission opencode/permission --template "$cfg=$cfg" --cancel-after 30s "${oc_env[@]}" -- "$OPENCODE" acp ;;
	subagents)
		config allow
		record subagents opencode/foreground --subagents --template "$cfg=$cfg" "${oc_env[@]}" -- "$OPENCODE" acp ;;
	esac
done
