#!/usr/bin/env python3
"""A scripted OpenAI chat-completions server for timing a codemode script: a request whose last
message is not a tool result is answered with a `codemode` call of SCRIPT_FILE's text, a request
after the tool result with the text "done" (and the result's text appended to RESULTS_FILE).

    python3 scripts/bench/codemode_server.py PORT_FILE SCRIPT_FILE ARRIVALS_FILE RESULTS_FILE

Binds 127.0.0.1 on a free port, writes the port number to PORT_FILE, serves until killed. Appends
per request the wall clock (ns since the epoch) at which its headers had arrived and at which its
body had been read, so the time between the first body and the second request is the script's
run (with the tool call's parsing and the result's sending) as the client sees it.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chunk(delta, finish=None):
    c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return "data: " + json.dumps(c, separators=(",", ":")) + "\n\n"


def reply(parts, finish):
    usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
             "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}
    body = chunk({"role": "assistant", "content": ""}) + "".join(chunk(p) for p in parts) + chunk({}, finish)
    return (body + "data: " + json.dumps(usage) + "\n\ndata: [DONE]\n\n").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 (http.server's naming)
        headers_at = time.time_ns()
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        body_at = time.time_ns()
        with open(self.server.arrivals, "a") as f:
            f.write(f"{headers_at} {body_at}\n")
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "tool":
            content = last.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            with open(self.server.results, "a") as f:
                f.write(json.dumps(text) + "\n")
            data = reply([{"content": "done"}], "stop")
        else:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "codemode", "arguments": json.dumps({"code": self.server.script})}}
            data = reply([{"tool_calls": [call]}], "tool_calls")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    port_file, script_file, arrivals, results = sys.argv[1:5]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(script_file) as f:
        server.script = f.read()
    server.arrivals, server.results = arrivals, results
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
