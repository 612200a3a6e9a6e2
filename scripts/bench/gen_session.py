#!/usr/bin/env python3
"""Writes a pi session file (JSONL, format version 3) of about SIZE_MB megabytes for benchmarks.

    python3 scripts/bench/gen_session.py SIZE_MB OUT_FILE [CWD]

Realistic turns, repeated until the size is reached: a user message, an assistant tool call (with
a thinking block), a text-heavy tool result (about 7 KB of source), an assistant text answer.
The entries form one linear branch; the session's cwd is CWD (default: the current directory).
Deterministic: the same arguments give the same bytes.
"""
import json
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: gen_session.py SIZE_MB OUT_FILE [CWD]")
    target = int(float(sys.argv[1]) * 1024 * 1024)
    out = sys.argv[2]
    cwd = sys.argv[3] if len(sys.argv) > 3 else os.getcwd()
    usage = {"input": 1000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1100,
             "cost": {"input": 0.003, "output": 0.0015, "cacheRead": 0, "cacheWrite": 0, "total": 0.0045}}
    body = 'fn main() { println!("hello, world"); } // some source line\n' * 120
    ts = "2025-01-01T00:00:00.000Z"
    written = 0
    n = 0
    parent = None
    with open(out, "w", encoding="utf-8") as f:
        def line(value):
            nonlocal written
            s = json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"
            f.write(s)
            written += len(s.encode())

        def push(message):
            nonlocal n, parent
            n += 1
            entry_id = "%08x" % n
            line({"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts, "message": message})
            parent = entry_id

        line({"type": "session", "version": 3, "id": "0193bench-0000-7000-8000-000000000000", "timestamp": ts, "cwd": cwd})
        while written < target:
            k = n
            push({"role": "user", "content": [{"type": "text", "text": f"please look at file {k}"}], "timestamp": k})
            push({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me read it.", "thinkingSignature": "sig"},
                {"type": "toolCall", "id": f"call_{k}", "name": "read", "arguments": {"path": f"src/file{k}.rs"}}],
                "api": "openai-completions", "provider": "local", "model": "smollm2-135m", "usage": usage,
                "stopReason": "toolUse", "timestamp": k})
            push({"role": "toolResult", "toolCallId": f"call_{k}", "toolName": "read",
                  "content": [{"type": "text", "text": body}], "isError": False, "timestamp": k})
            push({"role": "assistant", "content": [{"type": "text", "text": "The file prints a greeting. Nothing else to change here."}],
                  "api": "openai-completions", "provider": "local", "model": "smollm2-135m", "usage": usage,
                  "stopReason": "stop", "timestamp": k})


if __name__ == "__main__":
    main()
