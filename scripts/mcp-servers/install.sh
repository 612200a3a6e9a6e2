#!/usr/bin/env bash
# Installs the official MCP Python SDK (PyPI `mcp`) into the git-ignored .mcp-venv/, for the MCP
# test servers in this folder (stdio_server.py, http_server.py). Idempotent (a stamp file records
# the pinned version). Prints the venv's python on success.
#
#   scripts/mcp-servers/install.sh      # then: export PI_MCP_PYTHON=$PWD/.mcp-venv/bin/python
#
# The tests in pi-coding-agent/tests/mcp_*.rs find the interpreter in PI_MCP_PYTHON, else in
# .mcp-venv/bin/python; PI_SKIP_MCP_SERVERS=1 makes them skip.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.mcp-venv"
PYTHON="${PI_MCP_BASE_PYTHON:-python3}"
MCP_VERSION="2.3.0"
STAMP="$VENV/.pi-installed-mcp-$MCP_VERSION"
if [[ ! -f "$STAMP" ]]; then
    command -v "$PYTHON" >/dev/null || { echo "[mcp-servers] ERROR: $PYTHON not found" >&2; exit 1; }
    [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q "mcp==$MCP_VERSION"
    touch "$STAMP"
fi
echo "$VENV/bin/python"
