#!/usr/bin/env python3
"""A scripted OpenAI chat-completions server that answers every POST at once with the same short
streamed text reply, so timings of a client against it measure the client's own overhead.

    python3 scripts/bench/instant_server.py PORT_FILE [REPLY_TEXT]

Binds 127.0.0.1 on a free port, writes the port number to PORT_FILE, serves until killed.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def sse(reply: str) -> bytes:
    def chunk(delta, finish=None, usage=None):
        c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
             "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            c["usage"] = usage
        return "data: " + json.dumps(c) + "\n\n"
    body = chunk({"role": "assistant", "content": ""}) + chunk({"content": reply}) + chunk({}, "stop")
    body += chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13})
    return (body + "data: [DONE]\n\n").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = self.server.reply
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.reply = sse(sys.argv[2] if len(sys.argv) > 2 else "Paris is the capital.")
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
