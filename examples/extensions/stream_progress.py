#!/usr/bin/env python3
"""Follows the streaming answer (protocol version 4: `message_update` patches).

pi-rs sends the streaming message whole once, then per delta only what changed; this extension
keeps its copy up to date (`apply_update`) and, when the answer ends, records how it streamed:
`pi.appendEntry("stream-stats", {updates, whole, characters, matches})` (`whole`: how many updates
carried the message whole; `matches`: whether its copy is the message pi saved). With PI_PROGRESS_LOG set it also writes its copy after every update, one JSON
line each.

Standard library only; see pi-coding-agent/docs/extension-protocol.md, section 2.
"""

import json
import os
import sys

PROTOCOL_VERSION = 4

_next_id = 0
_held = None  # the streaming message, as the last update left it
_updates = 0
_whole = 0


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def call(method, params):
    """Sends a request to the host and waits for its answer (events meanwhile are handled)."""
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
        dispatch(message)


def apply_update(payload):
    """The message after this update: whole, or the held one patched."""
    global _held, _whole
    patch = payload.get("patch")
    if patch is None:
        _whole += 1
        _held = payload["message"]
        return _held
    if _held is None:
        raise RuntimeError("message_update: no message held for this patch")
    if "head" in patch:
        content = _held["content"]
        _held = dict(patch["head"])
        _held["content"] = content
    for index, block in patch.get("blocks", []):
        if index < len(_held["content"]):
            _held["content"][index] = block
        else:
            _held["content"].append(block)
    if "append" in patch:
        block = _held["content"][patch["append"]]
        key = "thinking" if block.get("type") == "thinking" else "text"
        block[key] += payload["assistantMessageEvent"]["delta"]
    return _held


def on_message_update(payload):
    global _updates
    message = apply_update(payload)
    _updates += 1
    log = os.environ.get("PI_PROGRESS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"message": message, "assistantMessageEvent": payload["assistantMessageEvent"]}) + "\n")


def on_message_end(payload):
    global _held, _updates, _whole
    message = payload.get("message") or {}
    if message.get("role") != "assistant" or _held is None:
        return None
    text = "".join(b.get("text", "") for b in _held["content"] if b.get("type") == "text")
    call("pi.appendEntry", {
        "customType": "stream-stats",
        "data": {
            "updates": _updates,
            "whole": _whole,
            "characters": len(text),
            "matches": _held["content"] == message.get("content"),
        },
    })
    _held, _updates, _whole = None, 0, 0
    return None  # the message stays as it is


def handle(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": PROTOCOL_VERSION, "events": ["message_update", "message_end"]}
    if method == "event":
        event = params.get("event")
        if event == "message_update":
            return on_message_update(params.get("payload") or {})
        if event == "message_end":
            return on_message_end(params.get("payload") or {})
    return None


def dispatch(message):
    try:
        result = handle(message)
        error = None
    except Exception as e:  # reported to the host, never a crash
        result, error = None, str(e)
    if message.get("id") is not None:
        if error is None:
            send({"id": message["id"], "result": result})
        else:
            send({"id": message["id"], "error": {"code": -32000, "message": error}})
    elif error is not None:
        send({"method": "pi.reportError", "params": {"event": (message.get("params") or {}).get("event"), "error": error}})


def main():
    for line in sys.stdin:
        line = line.strip()
        if line:
            dispatch(json.loads(line))


if __name__ == "__main__":
    main()
