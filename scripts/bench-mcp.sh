#!/usr/bin/env bash
# Issue 17's benchmarks, ours beside the reference pi 1.6.0 in the same run:
#   * start to first request with three stdio MCP servers in mcp.json (scripts/mcp-servers/
#     test_server.py on PyPI `mcp`), one of them slow to start (2 s before it runs): `pi -p hello`,
#     the time from start until the provider (scripts/bench/instant_server.py) has the whole
#     request, and the whole run's wall time; once with every server `codemode` (the first request
#     waits for none), once with every server `direct` (it waits for all, the slow one included),
#     and once without mcp.json;
#   * a codemode script making 100 `read` calls of a small file (all at once with Promise.all, and
#     one after another): the time from the body of the request that gets the `codemode` call to
#     the request that carries its result (scripts/bench/codemode_server.py).
# Medians of RUNS runs after one warm-up.
#
#   scripts/bench-mcp.sh [runs]     (default 5; PI_BENCH_SKIP_REFERENCE=1: ours only;
#                                    PI_MCP_PYTHON: the Python with `mcp`, default .mcp-venv)
#
# Ours is built with `cargo build --release` (CARGO_TARGET_DIR honoured); the reference runs
# through /work/shared/tools/anchor.sh (or $PI_ANCHOR) without PI_OFFLINE's effect on MCP (it
# does not disable MCP). Print `uptime` with the figures: other work inflates them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
ANCHOR="${PI_ANCHOR:-/work/shared/tools/anchor.sh}"
PY="${PI_MCP_PYTHON:-$ROOT/.mcp-venv/bin/python}"
[[ -x "$PY" ]] || { echo "bench-mcp: $PY is missing (scripts/mcp-servers/install.sh)" >&2; exit 1; }
REF=0
[[ -x "$ANCHOR" && -z "${PI_BENCH_SKIP_REFERENCE:-}" ]] && REF=1

WORK="$(mktemp -d /tmp/pi-bench-mcp.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

echo "[bench-mcp] building pi (release)" >&2
cargo build --release -q -p pi-coding-agent --bin pi --manifest-path "$ROOT/Cargo.toml"
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/pi"

wait_port() { for _ in $(seq 1 200); do [[ -s "$1" ]] && break; sleep 0.05; done; cat "$1"; }
python3 "$ROOT/scripts/bench/instant_server.py" "$WORK/port.instant" --arrivals "$WORK/arrivals" &
PIDS+=($!)
PORT_INSTANT=$(wait_port "$WORK/port.instant")
printf 'await Promise.all(Array.from({ length: 100 }, () => tools.read({ path: "small.txt" })));\nreturn "100 reads";\n' \
    >"$WORK/parallel.js"
printf 'for (let i = 0; i < 100; i++) await tools.read({ path: "small.txt" });\nreturn "100 reads";\n' \
    >"$WORK/serial.js"
for kind in parallel serial; do
    python3 "$ROOT/scripts/bench/codemode_server.py" "$WORK/port.$kind" "$WORK/$kind.js" \
        "$WORK/arrivals.$kind" "$WORK/results.$kind" &
    PIDS+=($!)
    printf -v "PORT_$kind" '%s' "$(wait_port "$WORK/port.$kind")"
done

mkdir -p "$WORK/agent" "$WORK/proj"
echo "a small file" >"$WORK/proj/small.txt"
provider() { printf '"%s":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192000,"maxTokens":256}]}' "$1" "$2"; }
printf '{"providers":{%s,%s,%s}}' "$(provider local "$PORT_INSTANT")" "$(provider parallel "$PORT_parallel")" \
    "$(provider serial "$PORT_serial")" >"$WORK/agent/models.json"
export PI_CODING_AGENT_DIR="$WORK/agent"
SERVER="$ROOT/scripts/mcp-servers/test_server.py"
# mcp_json EXPOSURE: three servers, `slow` starting 2 s late.
mcp_json() {
    printf '{"mcpServers":{"one":{"command":"%s","args":["%s"],"exposure":"%s"},"two":{"command":"%s","args":["%s"],"exposure":"%s"},"slow":{"command":"sh","args":["-c","sleep 2; exec \\"$0\\" \\"$1\\"","%s","%s"],"exposure":"%s"}}}' \
        "$PY" "$SERVER" "$1" "$PY" "$SERVER" "$1" "$PY" "$SERVER" "$1" >"$WORK/agent/mcp.json"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
record() { printf '  %-52s %-9s %10s %s\n' "$1" "$2" "$3" "$4" >&2; }

# first_request WHO LABEL CMD...: start to the provider having the first request, and wall time.
first_request() {
    local who="$1" label="$2"; shift 2
    : >"$WORK/t"; : >"$WORK/w"
    for i in $(seq 0 "$RUNS"); do
        : >"$WORK/arrivals"
        local start end
        start=$(date +%s%N)
        (cd "$WORK/proj" && "$@" -p hello --no-session --model local/smollm2-135m >"$WORK/out" 2>"$WORK/err" </dev/null) || {
            echo "bench-mcp: '$*' failed:" >&2; cat "$WORK/err" >&2; exit 1; }
        end=$(date +%s%N)
        local body_at
        body_at=$(awk 'NR == 1 { print $2 }' "$WORK/arrivals")
        [[ -n "$body_at" ]] || { echo "bench-mcp: no request arrived" >&2; exit 1; }
        if (( i > 0 )); then
            echo $(( (body_at - start) / 1000 )) >>"$WORK/t"; echo $(( (end - start) / 1000 )) >>"$WORK/w"
        fi
    done
    record "$label: first request" "$who" "$(median <"$WORK/t" | awk '{ printf "%.0f", $1 / 1000 }')" ms
    record "$label: wall" "$who" "$(median <"$WORK/w" | awk '{ printf "%.0f", $1 / 1000 }')" ms
}

# codemode WHO KIND CMD...: the script's run between the two requests.
codemode() {
    local who="$1" kind="$2"; shift 2
    : >"$WORK/t"
    for i in $(seq 0 "$RUNS"); do
        : >"$WORK/arrivals.$kind"; : >"$WORK/results.$kind"
        (cd "$WORK/proj" && "$@" -p "read it" --no-session --tools codemode,read --model "$kind/smollm2-135m" \
            >"$WORK/out" 2>"$WORK/err" </dev/null) || {
            echo "bench-mcp: '$*' failed:" >&2; cat "$WORK/err" >&2; exit 1; }
        grep -q "100 reads" "$WORK/results.$kind" || {
            echo "bench-mcp: the script did not finish:" >&2; cat "$WORK/results.$kind" >&2; exit 1; }
        if (( i > 0 )); then
            awk 'NR == 1 { b = $2 } NR == 2 { print ($1 - b) / 1000 }' "$WORK/arrivals.$kind" >>"$WORK/t"
        fi
    done
    record "codemode, 100 reads ($kind)" "$who" "$(median <"$WORK/t" | awk '{ printf "%.1f", $1 / 1000 }')" ms
}

suite() {
    local who="$1"; shift
    echo "[bench-mcp] $who" >&2
    rm -f "$WORK/agent/mcp.json"
    first_request "$who" "no mcp.json" "$@"
    mcp_json codemode
    first_request "$who" "3 servers, codemode, one slow" "$@"
    mcp_json direct
    first_request "$who" "3 servers, direct, one slow" "$@"
    rm -f "$WORK/agent/mcp.json"
    codemode "$who" parallel "$@"
    codemode "$who" serial "$@"
}
suite ours "$OURS"
(( REF )) && suite reference "$ANCHOR" pi
uptime >&2
