#!/usr/bin/env python3
"""The seed's audit extension as a runtime-loaded pi extension (protocol version 1).

On every `tool_result` it calls `pi.appendEntry("audit-note", {toolName, toolCallId, at})`:
a `custom` session entry that is persisted but never sent to the model.

Standard library only. Speaks JSON-RPC 2.0, one JSON object per line, over stdin/stdout
(see pi-coding-agent/docs/extension-protocol.md). Diagnostics go to stderr.
"""

import collections
import json
import sys
import time

PROTOCOL_VERSION = 1

_next_id = 0
_inbox = collections.deque()  # messages read while waiting for an answer


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read_message():
    if _inbox:
        return _inbox.popleft()
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        line = line.strip()
        if line:
            return json.loads(line)


def call(method, params):
    """Sends a request to the host and waits for its answer."""
    global _next_id
    _next_id += 1
    request_id = "ext-%d" % _next_id
    send({"id": request_id, "method": method, "params": params})
    while True:
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            if "error" in message:
                raise RuntimeError(message["error"].get("message", "host error"))
            return message.get("result")
        _inbox.append(message)


def on_tool_result(payload):
    call("pi.appendEntry", {
        "customType": "audit-note",
        "data": {
            "toolName": payload.get("toolName"),
            "toolCallId": payload.get("toolCallId"),
            "at": int(time.time() * 1000),
        },
    })
    return None  # no change to the tool result


def handle(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "events": ["tool_result"],
            "tools": [],
            "commands": [],
            "flags": [],
        }
    if method == "event" and params.get("event") == "tool_result":
        return on_tool_result(params.get("payload") or {})
    if method == "event":
        return None
    raise LookupError("Unknown method: %s" % method)


def main():
    while True:
        message = read_message()
        if message is None:
            return
        if "method" not in message:
            continue  # a stray answer
        try:
            result = handle(message)
            if "id" in message:
                send({"id": message["id"], "result": result})
        except Exception as error:  # report the failure to the host, keep running
            print("audit extension: %s" % error, file=sys.stderr)
            if "id" in message:
                send({"id": message["id"], "error": {"code": -32000, "message": str(error)}})


if __name__ == "__main__":
    main()
