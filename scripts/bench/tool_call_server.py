#!/usr/bin/env python3
"""A scripted OpenAI chat-completions server for the extension-host benchmark: a request whose
messages hold no tool result is answered at once with one `read` tool call (of TOOL_PATH), a
request that carries the result with a short text, so a `pi -p` run makes exactly one tool call.

    python3 scripts/bench/tool_call_server.py PORT_FILE TOOL_PATH

Binds 127.0.0.1 on a free port, writes the port number to PORT_FILE, serves until killed.
"""
import json
import os
import sys
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from instant_server import Handler, chunk, sse  # noqa: E402


def tool_call_reply(path: str) -> bytes:
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": path})}}
    parts = [chunk({"role": "assistant", "content": None, "tool_calls": [call]}), chunk({}, "tool_calls"),
             chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
             "data: [DONE]\n\n"]
    return "".join(parts).encode()


class ToolHandler(Handler):
    def read_body(self):
        self.body = self.rfile.read(int(self.headers.get("content-length") or 0))

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.read_body()
        messages = json.loads(self.body or b"{}").get("messages", [])
        has_result = any(m.get("role") == "tool" for m in messages)
        body = self.server.text if has_result else self.server.call
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


def main():
    port_file, path = sys.argv[1], sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), ToolHandler)
    server.call = tool_call_reply(path)
    server.text = sse(["Read it."])
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
