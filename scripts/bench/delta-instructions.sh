#!/usr/bin/env bash
# Instructions per streamed delta of `pi -p`, counted by valgrind's callgrind: deterministic where
# CPU time on a shared machine swings by half between runs. The instructions of a 64 KiB answer in
# 7-character deltas (9 363 deltas) less those of a one-delta answer, over the delta count; then
# the functions that took the most instructions in the long run.
#
#   scripts/bench/delta-instructions.sh PI_BINARY [BYTES]      (needs valgrind; BYTES default 65536)
#   scripts/bench/delta-instructions.sh STREAM_HANDLER BYTES sdk|sdk-handler
#
# With `sdk`, the binary is the release `stream_handler` example (examples/stream_handler.rs): the
# SDK's path is counted, with its Rust `message_update` handler for `sdk-handler`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PI="$(realpath "${1:?usage: delta-instructions.sh PI_BINARY [BYTES]}")"
BYTES="${2:-65536}"
MODE="${3:-pi}"
case "$MODE" in pi | sdk | sdk-handler) ;; *) echo "delta-instructions: the third argument is sdk, sdk-handler or nothing" >&2; exit 1 ;; esac
command -v valgrind >/dev/null || { echo "delta-instructions: valgrind is not installed" >&2; exit 1; }

WORK="$(mktemp -d /tmp/pi-delta-instructions.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

server() { # name, instant_server args...
    local name="$1"; shift
    python3 "$ROOT/scripts/bench/instant_server.py" "$WORK/port.$name" "$@" &
    PIDS+=($!)
    for _ in $(seq 1 200); do [[ -s "$WORK/port.$name" ]] && break; sleep 0.05; done
}
server short
server long --reply-bytes "$BYTES" --delta-chars 7
provider() { printf '"%s":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"none","models":[{"id":"m","contextWindow":8192000,"maxTokens":256}]}' "$1" "$(cat "$WORK/port.$1")"; }
mkdir -p "$WORK/agent" "$WORK/proj"
printf '{"providers":{%s,%s}}' "$(provider short)" "$(provider long)" >"$WORK/agent/models.json"

# count NAME: the instructions of one run against server NAME.
count() {
    local args=(-p "Tell me a story." --no-session --no-tools --model "$1/m")
    if [[ "$MODE" != pi ]]; then
        args=("http://127.0.0.1:$(cat "$WORK/port.$1")/v1")
        [[ "$MODE" == sdk-handler ]] && args+=(--handler)
    fi
    (cd "$WORK/proj" && PI_CODING_AGENT_DIR="$WORK/agent" valgrind --tool=callgrind \
        --callgrind-out-file="$WORK/cg.$1" "$PI" "${args[@]}" 2>"$WORK/err.$1" >/dev/null) || { cat "$WORK/err.$1" >&2; exit 1; }
    grep -E "refs:" "$WORK/err.$1" | awk '{ gsub(",", "", $NF); print $NF }'
}
short=$(count short)
long=$(count long)
deltas=$(( (BYTES + 6) / 7 ))
echo "instructions: short answer $short, $BYTES-byte answer $long, per delta $(( (long - short) / deltas ))"
echo "most instructions in the long run (per delta, exclusive):"
callgrind_annotate "$WORK/cg.long" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n '2,16p' |
    sed -E 's/^ *([0-9,]+) \( *[0-9.]+%\) /\1 /' |
    awk -v d="$deltas" '{ n = $1; gsub(",", "", n); $1 = ""; printf "%8.0f %s\n", n / d, $0 }'
