#!/usr/bin/env bash
# DESIGN.md's performance budget, whole process, ours beside the reference pi 1.6.0 in the same run,
# against local servers that answer at once (scripts/bench/instant_server.py):
#   * `pi -p` (one short answer, --no-session): wall time and max RSS (our own overhead), and the
#     wall time split: start until the server has the whole request, and the reply sent until exit;
#   * resuming a generated session of 10 MB and 100 MB (scripts/bench/gen_session.py) with
#     `pi -p --session FILE`: the time from start until the server has the whole request, max RSS and
#     the whole run's CPU (user + sys, which the load of a shared machine does not inflate);
#   * streaming answers of 64 KiB and 1 MiB in 7-character deltas: CPU (user + sys) per delta,
#     after the CPU of the short answer is subtracted (each long run paired with a short run just
#     before it, the median of the pairs' differences: the machine's drift within a measure and a
#     short run's own swing of a few milliseconds, a third of a microsecond per delta at 64 KiB,
#     cancel out; PI_BENCH_STREAM_RUNS pairs, default RUNS but at least 15);
#   * the same with a `message_update` handler: in Rust, through the SDK (`examples/stream_handler.rs`,
#     ours only: its CPU per delta with and without the handler, the short answer's subtracted),
#     and in a TypeScript extension (`pi -p -e`, ours beside the reference at 64 KiB: CPU, the
#     JavaScript host's included, and wall time per delta, the short answer with the same
#     extension subtracted);
#   * the JavaScript (TypeScript) extension host: `pi -p` whose model makes one `read` tool call
#     (scripts/bench/tool_call_server.py), with and without `-e` of a TypeScript extension with a
#     `tool_call` handler; the difference is the host's start, the extension's load and one
#     `tool_call` round trip (DESIGN.md: the round trip under 200 µs, the host started lazily);
#   * the interactive mode (scripts/bench-interactive.py in a 100x30 pty, its own medians of RUNS):
#     time to the first frame and keystroke to frame (budget 50 ms / 2 ms), and keystroke to frame
#     with a 10 000-line transcript (PI_BENCH_INTERACTIVE: which of its benches, default
#     "startup transcript"; "resume" adds the 100 MB resume's first frame, budget 1 s; "" skips).
# Medians of RUNS runs (after one warm-up; resume runs start from a fresh copy of the session) and
# the ratio reference / ours per measure.
#
#   scripts/bench-budget.sh [runs]            (default 5; PI_BENCH_SKIP_REFERENCE=1: ours only,
#                                              PI_BENCH_SIZES="10 100": the session sizes in MB,
#                                              PI_BENCH_OURS=path: that binary, not a fresh build,
#                                              PI_BENCH_EXAMPLE=path: that stream_handler example,
#                                              PI_BENCH_MAIN=path: also this binary (say, the main
#                                              branch's), as "main", each measure run for ours,
#                                              main and the reference in turn)
#
# Ours is built with `cargo build --release` (CARGO_TARGET_DIR honoured); the reference runs
# through /work/shared/tools/anchor.sh (or $PI_ANCHOR). Print `uptime` with the figures: other
# work on a shared machine inflates them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
STREAM_RUNS="${PI_BENCH_STREAM_RUNS:-$(( RUNS > 15 ? RUNS : 15 ))}"
ANCHOR="${PI_ANCHOR:-/work/shared/tools/anchor.sh}"
SIZES="${PI_BENCH_SIZES-10 100}"
MEASURED=(python3 "$ROOT/scripts/bench/measured.py")
REF=0
[[ -x "$ANCHOR" && -z "${PI_BENCH_SKIP_REFERENCE:-}" ]] && REF=1

WORK="$(mktemp -d /tmp/pi-bench-budget.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

if [[ -n "${PI_BENCH_OURS:-}" ]]; then
    OURS="$PI_BENCH_OURS"
else
    echo "[bench-budget] building pi (release)" >&2
    cargo build --release -q -p pi-coding-agent --bin pi --manifest-path "$ROOT/Cargo.toml"
    OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/pi"
fi
if [[ -n "${PI_BENCH_EXAMPLE:-}" ]]; then
    EXAMPLE="$PI_BENCH_EXAMPLE"
else
    echo "[bench-budget] building the stream_handler example (release)" >&2
    cargo build --release -q -p pi-examples --example stream_handler --manifest-path "$ROOT/Cargo.toml"
    EXAMPLE="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/stream_handler"
fi

# server NAME ARGS...: starts an instant server, sets PORT_<NAME>.
server() {
    local name="$1"; shift
    python3 "$ROOT/scripts/bench/instant_server.py" "$WORK/port.$name" "$@" &
    PIDS+=($!)
    for _ in $(seq 1 200); do [[ -s "$WORK/port.$name" ]] && break; sleep 0.05; done
    printf -v "PORT_$name" '%s' "$(cat "$WORK/port.$name")"
}
server short --arrivals "$WORK/arrivals" --replies "$WORK/replies"
server s64k --reply-bytes 65536 --delta-chars 7
server s1m --reply-bytes 1048576 --delta-chars 7
echo "A note for the extension-host benchmark." >"$WORK/note.txt"
python3 "$ROOT/scripts/bench/tool_call_server.py" "$WORK/port.tools" "$WORK/note.txt" &
PIDS+=($!)
for _ in $(seq 1 200); do [[ -s "$WORK/port.tools" ]] && break; sleep 0.05; done
PORT_tools="$(cat "$WORK/port.tools")"
mkdir -p "$WORK/ext"
cat >"$WORK/ext/bench.ts" <<'TS'
export default function (pi: any) {
  pi.on("tool_call", (event: { toolName: string }) => (event.toolName === "bash" ? { block: true, reason: "no" } : undefined));
}
TS
cat >"$WORK/ext/update.ts" <<'TS'
export default function (pi: any) {
  let shown = 0;
  pi.on("message_update", (event: any) => {
    const last = event.message.content[event.message.content.length - 1];
    shown = last?.text?.length ?? shown;
  });
}
TS

mkdir -p "$WORK/agent" "$WORK/proj"
model() { printf '{"id":"%s","contextWindow":8192000,"maxTokens":256}' "$1"; }
provider() { printf '"%s":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"none","models":[%s]}' "$1" "$2" "$(model smollm2-135m)"; }
printf '{"providers":{%s,%s,%s,%s}}' "$(provider local "$PORT_short")" "$(provider s64k "$PORT_s64k")" \
    "$(provider s1m "$PORT_s1m")" "$(provider tools "$PORT_tools")" >"$WORK/agent/models.json"
export PI_CODING_AGENT_DIR="$WORK/agent"

# run_once CMD...: one run in the project dir; sets ELAPSED_US, RSS_KB, CPU_S.
run_once() {
    (cd "$WORK/proj" && "${MEASURED[@]}" "$WORK/one" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null) || {
        echo "bench-budget: '$*' failed:" >&2; cat "$WORK/err" >&2; exit 1; }
    read -r RSS_KB U S START_NS END_NS <"$WORK/one"
    ELAPSED_US=$(( (END_NS - START_NS) / 1000 ))
    CPU_S=$(awk -v u="$U" -v s="$S" 'BEGIN { print u + s }')
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
max() { sort -g | tail -1; }

RESULTS="$WORK/results"
: >"$RESULTS"
# record MEASURE WHO VALUE UNIT
record() { echo "$1|$2|$3|$4" >>"$RESULTS"; printf '  %-40s %-9s %12s %s\n' "$1" "$2" "$3" "$4" >&2; }

# print_mode WHO CMD...: pi -p, short answer.
print_mode() {
    local who="$1"; shift
    local args=(-p "What is the capital of France?" --no-session --no-tools --model local/smollm2-135m)
    run_once "$@" "${args[@]}"
    : >"$WORK/t"; : >"$WORK/m"; : >"$WORK/c"; : >"$WORK/req"; : >"$WORK/exit"
    for _ in $(seq 1 "$RUNS"); do
        : >"$WORK/arrivals"; : >"$WORK/replies"
        run_once "$@" "${args[@]}"
        echo "$ELAPSED_US" >>"$WORK/t"; echo "$RSS_KB" >>"$WORK/m"; echo "$CPU_S" >>"$WORK/c"
        for _ in $(seq 1 100); do [[ -s "$WORK/replies" ]] && break; sleep 0.01; done
        local body_at replied_at
        body_at=$(awk 'NR == 1 { print $2 }' "$WORK/arrivals"); replied_at=$(head -1 "$WORK/replies")
        [[ -n "$body_at" && -n "$replied_at" ]] || { echo "bench-budget: no request or reply recorded" >&2; exit 1; }
        echo $(( (body_at - START_NS) / 1000 )) >>"$WORK/req"; echo $(( (END_NS - replied_at) / 1000 )) >>"$WORK/exit"
    done
    record "pi -p: wall" "$who" "$(median <"$WORK/t" | awk '{ printf "%.1f", $1 / 1000 }')" ms
    record "pi -p: start until request received" "$who" "$(median <"$WORK/req" | awk '{ printf "%.1f", $1 / 1000 }')" ms
    record "pi -p: reply sent until exit" "$who" "$(median <"$WORK/exit" | awk '{ printf "%.1f", $1 / 1000 }')" ms
    record "pi -p: max RSS" "$who" "$(max <"$WORK/m" | awk '{ printf "%.1f", $1 / 1024 }')" MiB
}

# resume WHO SIZE CMD...: pi -p --session <copy of the SIZE MB session>.
resume() {
    local who="$1" size="$2"; shift 2
    : >"$WORK/t"; : >"$WORK/m"; : >"$WORK/c"
    for i in $(seq 0 "$RUNS"); do
        cp "$WORK/session-$size.jsonl" "$WORK/run.jsonl"
        : >"$WORK/arrivals"
        run_once "$@" -p "Go on." --session "$WORK/run.jsonl" --no-tools --model local/smollm2-135m
        local body_at
        body_at=$(awk 'NR == 1 { print $2 }' "$WORK/arrivals")
        [[ -n "$body_at" ]] || { echo "bench-budget: no request arrived" >&2; exit 1; }
        if (( i > 0 )); then
            echo $(( (body_at - START_NS) / 1000 )) >>"$WORK/t"; echo "$RSS_KB" >>"$WORK/m"; echo "$CPU_S" >>"$WORK/c"
        fi
    done
    record "resume ${size} MB: request received" "$who" "$(median <"$WORK/t" | awk '{ printf "%.0f", $1 / 1000 }')" ms
    record "resume ${size} MB: max RSS" "$who" "$(max <"$WORK/m" | awk '{ printf "%.1f", $1 / 1024 }')" MiB
    record "resume ${size} MB: CPU (user+sys, whole run)" "$who" "$(median <"$WORK/c" | awk '{ printf "%.0f", $1 * 1000 }')" ms
}

# per_delta_pairs BYTES FILE SHORT_CMD... -- LONG_CMD...: STREAM_RUNS pairs of a short run and a
# long one (whose output must hold BYTES); appends each pair's CPU difference in µs per delta of a
# BYTES answer to FILE.
per_delta_pairs() {
    local bytes="$1" file="$2"; shift 2
    local deltas=$(( (bytes + 6) / 7 )) short=() long=() c0
    while [[ "$1" != "--" ]]; do short+=("$1"); shift; done
    shift; long=("$@")
    run_once "${long[@]}"
    [[ $(wc -c <"$WORK/out") -ge $bytes ]] || { echo "bench-budget: the answer was not printed whole" >&2; exit 1; }
    : >"$file"
    for _ in $(seq 1 "$STREAM_RUNS"); do
        run_once "${short[@]}"; c0="$CPU_S"
        run_once "${long[@]}"
        [[ $(wc -c <"$WORK/out") -ge $bytes ]] || { echo "bench-budget: the answer was not printed whole" >&2; exit 1; }
        awk -v a="$CPU_S" -v b="$c0" -v d="$deltas" 'BEGIN { printf "%.4f\n", (a - b) * 1e6 / d }' >>"$file"
    done
}

# stream WHO NAME BYTES CMD...: CPU per 7-character delta of a BYTES answer.
stream() {
    local who="$1" name="$2" bytes="$3"; shift 3
    per_delta_pairs "$bytes" "$WORK/d" \
        "$@" -p "What is the capital of France?" --no-session --no-tools --model local/smollm2-135m -- \
        "$@" -p "Tell me a long story." --no-session --no-tools --model "$name/smollm2-135m"
    record "stream $name: CPU per delta" "$who" "$(median <"$WORK/d" | awk '{ printf "%.2f", $1 }')" µs
}

# stream_js WHO NAME BYTES CMD...: CPU (the host's included) and wall time per delta of a BYTES
# answer with a TypeScript `message_update` handler, the short answer with the same extension
# subtracted pair by pair (RUNS pairs: each run starts a Node host).
stream_js() {
    local who="$1" name="$2" bytes="$3"; shift 3
    local deltas=$(( (bytes + 6) / 7 )) c0 t0
    local ext=(-e "$WORK/ext/update.ts" --no-session --no-tools)
    run_once "$@" "${ext[@]}" -p "Hi." --model "local/smollm2-135m"
    : >"$WORK/c"; : >"$WORK/t"
    for _ in $(seq 1 "$RUNS"); do
        run_once "$@" "${ext[@]}" -p "Hi." --model "local/smollm2-135m"
        c0="$CPU_S"; t0="$ELAPSED_US"
        run_once "$@" "${ext[@]}" -p "Tell me a long story." --model "$name/smollm2-135m"
        [[ $(wc -c <"$WORK/out") -ge $bytes ]] || { echo "bench-budget: the answer was not printed whole" >&2; exit 1; }
        awk -v a="$CPU_S" -v b="$c0" -v d="$deltas" 'BEGIN { printf "%.4f\n", (a - b) * 1e6 / d }' >>"$WORK/c"
        awk -v a="$ELAPSED_US" -v b="$t0" -v d="$deltas" 'BEGIN { printf "%.4f\n", (a - b) / d }' >>"$WORK/t"
    done
    record "stream $name, TS handler: CPU per delta" "$who" "$(median <"$WORK/c" | awk '{ printf "%.2f", $1 }')" µs
    record "stream $name, TS handler: wall per delta" "$who" "$(median <"$WORK/t" | awk '{ printf "%.2f", $1 }')" µs
}

# stream_sdk: the SDK example's CPU per delta at 64 KiB and 1 MiB, without and with a Rust
# `message_update` handler (its short answer's CPU subtracted, pair by pair).
stream_sdk() {
    local handler label name bytes
    for handler in "" --handler; do
        label=$([[ -n "$handler" ]] && echo "Rust handler" || echo "no handler")
        for name in s64k s1m; do
            bytes=$([[ $name == s64k ]] && echo 65536 || echo 1048576)
            local port="PORT_$name"
            # shellcheck disable=SC2086 # $handler is one word or none
            per_delta_pairs "$bytes" "$WORK/d" "$EXAMPLE" "http://127.0.0.1:$PORT_short/v1" $handler -- \
                "$EXAMPLE" "http://127.0.0.1:${!port}/v1" $handler
            record "SDK stream $name, $label: CPU per delta" ours "$(median <"$WORK/d" | awk '{ printf "%.2f", $1 }')" µs
        done
    done
}

# js_host WHO CMD...: `pi -p` with one tool call, without and with the TypeScript extension.
js_host() {
    local who="$1"; shift
    local args=(-p "Read the note." --no-session --tools read --model tools/smollm2-135m)
    run_once "$@" "${args[@]}"
    run_once "$@" -e "$WORK/ext/bench.ts" "${args[@]}"
    : >"$WORK/t"; : >"$WORK/te"
    for _ in $(seq 1 "$RUNS"); do
        run_once "$@" "${args[@]}"; echo "$ELAPSED_US" >>"$WORK/t"
        run_once "$@" -e "$WORK/ext/bench.ts" "${args[@]}"; echo "$ELAPSED_US" >>"$WORK/te"
    done
    local plain with
    plain=$(median <"$WORK/t"); with=$(median <"$WORK/te")
    record "one tool call: wall" "$who" "$(awk -v v="$plain" 'BEGIN { printf "%.1f", v / 1000 }')" ms
    record "js host: start + load + 1 tool_call" "$who" "$(awk -v a="$with" -v b="$plain" 'BEGIN { printf "%.1f", (a - b) / 1000 }')" ms
}

# interactive: scripts/bench-interactive.py's figures, ours and the reference's, as records.
interactive() {
    local benches="${PI_BENCH_INTERACTIVE-startup transcript}"
    [[ -n "$benches" ]] || return 0
    echo "[bench-budget] interactive: $benches" >&2
    # shellcheck disable=SC2086 # the bench names are words
    PI_BENCH_RUNS="$RUNS" PI_BENCH_SKIP_REFERENCE="$(( REF ? 0 : 1 ))" \
        python3 "$ROOT/scripts/bench-interactive.py" "$OURS" $benches >"$WORK/interactive" || {
        echo "bench-budget: scripts/bench-interactive.py failed" >&2; exit 1; }
    python3 - "$WORK/interactive" >"$WORK/interactive.records" <<'PY'
import ast, sys
names = {("startup", "first frame ms"): "interactive: first frame",
         ("startup", "keystroke ms"): "interactive: keystroke to frame",
         ("transcript", "keystroke ms (10k lines)"): "interactive: keystroke, 10k lines",
         ("stream", "CPU us/delta"): "interactive: CPU per delta",
         ("stream", "wall s"): "interactive: stream 3000 deltas, wall",
         ("resume", "first frame ms (100 MB)"): "interactive: resume 100 MB, 1st frame",
         ("resume", "peak RSS MB"): "interactive: resume 100 MB, peak RSS"}
for line in open(sys.argv[1]):
    parts = line.split(None, 2)
    if len(parts) < 3 or not parts[2].startswith("{"):
        continue
    bench, who, figures = parts[0], parts[1], ast.literal_eval(parts[2])
    for key, value in figures.items():
        name = names.get((bench, key), f"interactive {bench}: {key}")
        unit = {"peak RSS MB": "MiB", "CPU us/delta": "µs", "wall s": "s"}.get(key, "ms")
        print(f"{name}|{who}|{value:.2f}|{unit}")
PY
    while IFS='|' read -r measure who value unit; do record "$measure" "$who" "$value" "$unit"; done <"$WORK/interactive.records"
}

for size in $SIZES; do
    echo "[bench-budget] generating a $size MB session" >&2
    python3 "$ROOT/scripts/bench/gen_session.py" "$size" "$WORK/session-$size.jsonl" "$WORK/proj"
done

echo "[bench-budget] start: $(uptime)" >&2
WHOS=(ours)
[[ -n "${PI_BENCH_MAIN:-}" ]] && WHOS+=(main)
(( REF )) && WHOS+=(reference)
# each MEASURE ARGS...: runs the measure for every binary in turn (ours, main, reference).
each() {
    local measure="$1"; shift
    local who cmd
    for who in "${WHOS[@]}"; do
        case "$who" in
            ours) cmd=("$OURS") ;;
            main) cmd=("$PI_BENCH_MAIN") ;;
            reference) cmd=("$ANCHOR" pi) ;;
        esac
        echo "[bench-budget] $measure $who" >&2
        "$measure" "$who" "$@" "${cmd[@]}"
    done
}
each print_mode
for size in $SIZES; do each resume "$size"; done
each stream s64k 65536
each stream s1m 1048576
echo "[bench-budget] stream_sdk ours" >&2
stream_sdk
each stream_js s64k 65536
each js_host
interactive

echo
echo "medians of $RUNS runs (max RSS: the largest); $(uptime | sed 's/.*load/load/')"
printf '%-40s %13s %13s %13s %9s\n' measure ours main reference ratio
awk -F'|' '{ key = $1; if ($2 == "ours") { o[key] = $3; u[key] = $4; order[++n] = key } else if ($2 == "main") m[key] = $3; else r[key] = $3 }
    END { for (i = 1; i <= n; i++) { k = order[i]
        printf "%-40s %9s %-3s %9s %-3s %9s %-3s", k, o[k], u[k], (k in m ? m[k] : "-"), (k in m ? u[k] : ""), (k in r ? r[k] : "-"), (k in r ? u[k] : "")
        if (k in r && o[k] > 0) printf " %8.1fx", r[k] / o[k]
        printf "\n" } }' "$RESULTS"
