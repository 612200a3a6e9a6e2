#!/usr/bin/env bash
# CLI overhead, ours beside the reference pi 1.6.0, measured in the same run:
#   * `pi --version`: wall time and max RSS;
#   * `pi -p "..." --no-session`: end to end against scripts/bench/instant_server.py, a local
#     chat-completions server that answers at once, so the figure is the CLI's own overhead.
#
#   scripts/bench-cli.sh [runs]        (default 10 runs each; prints the median)
#
# Then scripts/bench-budget.sh runs the rest of DESIGN.md's budget (pi -p, session resume at 10
# and 100 MB, CPU per streamed delta) beside the reference; PI_BENCH_CLI_ONLY=1 skips it.
#
# Ours is built with `cargo build --release` (CARGO_TARGET_DIR honoured). The reference runs
# through /work/shared/tools/anchor.sh (or $PI_ANCHOR); without it only ours is measured.
# Wall time: date +%s%N around each run (includes the time wrapper's fork); max RSS: GNU time's %M.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10}"
ANCHOR="${PI_ANCHOR:-/work/shared/tools/anchor.sh}"
TIME=/usr/bin/time
[[ -x "$TIME" ]] || { echo "bench-cli: GNU time (/usr/bin/time) is needed" >&2; exit 1; }

WORK="$(mktemp -d /tmp/pi-bench-cli.XXXXXX)"
SERVER_PID=""
cleanup() { [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

echo "[bench-cli] building pi (release)" >&2
cargo build --release -q -p pi-coding-agent --bin pi --manifest-path "$ROOT/Cargo.toml"
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/pi"

python3 "$ROOT/scripts/bench/instant_server.py" "$WORK/port" &
SERVER_PID=$!
for _ in $(seq 1 100); do [[ -s "$WORK/port" ]] && break; sleep 0.05; done
PORT="$(cat "$WORK/port")"
mkdir -p "$WORK/agent" "$WORK/proj"
printf '{"providers":{"local":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}}' \
    "$PORT" >"$WORK/agent/models.json"
export PI_CODING_AGENT_DIR="$WORK/agent"

# measure LABEL CMD...: runs CMD $RUNS times (after one warm-up), prints median wall ms and max RSS MB.
measure() {
    local label="$1"; shift
    (cd "$WORK/proj" && "$@" >/dev/null 2>&1 </dev/null) || { echo "bench-cli: '$*' failed" >&2; exit 1; }
    : >"$WORK/samples"
    for _ in $(seq 1 "$RUNS"); do
        local start end
        start=$(date +%s%N)
        (cd "$WORK/proj" && "$TIME" -f '%M' -o "$WORK/one" "$@" >/dev/null 2>&1 </dev/null)
        end=$(date +%s%N)
        echo "$(( (end - start) / 1000 )) $(tail -1 "$WORK/one")" >>"$WORK/samples"
    done
    sort -n "$WORK/samples" | awk -v label="$label" '{ t[NR] = $1; if ($2 > rss) rss = $2 }
        END { m = t[int((NR + 1) / 2)]; printf "%-34s %8.1f ms %8.1f MB\n", label, m / 1000, rss / 1024 }'
}

printf '%-34s %11s %11s\n' "command (median of $RUNS)" "wall" "max RSS"
measure "ours: pi --version" "$OURS" --version
[[ -x "$ANCHOR" ]] && measure "reference: pi --version" "$ANCHOR" pi --version
PROMPT=(-p "What is the capital of France?" --no-session --no-tools --model local/smollm2-135m)
measure "ours: pi -p (instant server)" "$OURS" "${PROMPT[@]}"
[[ -x "$ANCHOR" ]] && measure "reference: pi -p (instant server)" "$ANCHOR" pi "${PROMPT[@]}"
if [[ -z "${PI_BENCH_CLI_ONLY:-}" ]]; then
    echo
    "$ROOT/scripts/bench-budget.sh" "$(( RUNS < 5 ? RUNS : 5 ))"
fi
exit 0
