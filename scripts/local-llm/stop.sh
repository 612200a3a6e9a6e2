#!/usr/bin/env bash
# Stops the server started by scripts/local-llm/start.sh, by the PID in its PID file.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PID_FILE="${PI_LOCAL_LLM_PID_FILE:-$ROOT/.llm/server.pid}"
[[ -f "$PID_FILE" ]] || exit 0
PID="$(cat "$PID_FILE")"
if kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
fi
rm -f "$PID_FILE" "$ROOT/.llm/server.env"
echo "[local-llm] stopped (pid $PID)" >&2
