#!/usr/bin/env python3
"""A scripted OpenAI chat-completions server that answers every POST at once with the same
streamed text reply, so timings of a client against it measure the client's own overhead.

    python3 scripts/bench/instant_server.py PORT_FILE [REPLY_TEXT] [--reply-bytes N] [--delta-chars K]
                                            [--arrivals FILE] [--replies FILE]

Binds 127.0.0.1 on a free port, writes the port number to PORT_FILE, serves until killed.
  REPLY_TEXT       the reply, sent as one delta (default "Paris is the capital.").
  --reply-bytes N  instead: a reply of N characters of prose, streamed in K-character deltas
                   (--delta-chars, default 7), one SSE event per delta.
  --arrivals FILE  append, per request, the wall clock (ns since the epoch) at which its request
                   line and headers had arrived, and at which its body had been read in full.
  --replies FILE   append, per request, the wall clock (ns) at which its reply had been written whole.
The request body may be sent with a content-length or chunked.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chunk(delta, finish=None, usage=None):
    c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
         "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        c["usage"] = usage
    return "data: " + json.dumps(c, separators=(",", ":")) + "\n\n"


def sse(deltas) -> bytes:
    parts = [chunk({"role": "assistant", "content": ""})]
    parts.extend(chunk({"content": d}) for d in deltas)
    parts.append(chunk({}, "stop"))
    parts.append(chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}))
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def prose(n: int) -> str:
    words = "the quick brown fox jumps over a lazy dog while pi streams its answer to you "
    return (words * (n // len(words) + 1))[:n]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def read_body(self):
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                self.rfile.read(size)
                self.rfile.readline()
        self.rfile.read(int(self.headers.get("content-length") or 0))

    def do_POST(self):  # noqa: N802 (http.server's naming)
        headers_at = time.time_ns()
        self.read_body()
        body_at = time.time_ns()
        if self.server.arrivals:
            with open(self.server.arrivals, "a") as f:
                f.write(f"{headers_at} {body_at}\n")
        body = self.server.reply
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if self.server.replies:
            with open(self.server.replies, "a") as f:
                f.write(f"{time.time_ns()}\n")

    def log_message(self, *args):
        pass


def main():
    args = sys.argv[1:]
    opts = {"--reply-bytes": None, "--delta-chars": "7", "--arrivals": None, "--replies": None}
    positional = []
    while args:
        a = args.pop(0)
        if a in opts:
            opts[a] = args.pop(0)
        else:
            positional.append(a)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if opts["--reply-bytes"]:
        text, k = prose(int(opts["--reply-bytes"])), int(opts["--delta-chars"])
        server.reply = sse(text[i:i + k] for i in range(0, len(text), k))
    else:
        server.reply = sse([positional[1] if len(positional) > 1 else "Paris is the capital."])
    server.arrivals = opts["--arrivals"]
    server.replies = opts["--replies"]
    with open(positional[0], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
