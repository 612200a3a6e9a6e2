#!/usr/bin/env python3
"""A virtual model as a runtime-loaded pi extension (protocol version 3).

It declares `router/auto` (thinking levels `low` and `high`) in its `initialize` answer. pi asks
`virtualModel.route` before every request made with it: a `high` selection goes to the model
named by ROUTER_STRONG, anything else to ROUTER_FAST (`provider/id`; defaults below). Tool
follow-ups and retries stay on the model that handled the turn, which keeps prompt caches
valid. The number of routed user turns is kept as router state on the session branch.

Standard library only. Speaks JSON-RPC 2.0, one JSON object per line, over stdin/stdout
(see pi-coding-agent/docs/extension-protocol.md, section 4a). Diagnostics go to stderr.
"""

import json
import os
import sys

PROTOCOL_VERSION = 3
STRONG = os.environ.get("ROUTER_STRONG", "anthropic/claude-sonnet-4-5")
FAST = os.environ.get("ROUTER_FAST", "anthropic/claude-haiku-4-5")


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def split(name):
    provider, _, model_id = name.partition("/")
    return {"provider": provider, "id": model_id}


def route(request):
    """pi's `route(request)`: the physical model and level, and new state."""
    sticky = request.get("failed") or request.get("previous")
    if request["reason"] in ("continuation", "retry") and sticky:
        return {"model": sticky["model"], "thinkingLevel": sticky.get("thinkingLevel") or "medium"}
    target = STRONG if request["thinkingLevel"] == "high" else FAST
    answer = {"model": split(target), "thinkingLevel": "medium"}
    if request["reason"] == "user":
        turns = (request.get("state") or {}).get("turns", 0)
        answer.update(hasState=True, state={"turns": turns + 1})
    return answer


def handle(message):
    method = message["method"]
    if method == "initialize":
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "events": [],
            "virtualModels": [
                {"provider": "router", "id": "auto", "name": "Auto", "thinkingLevels": ["low", "high"]}
            ],
        }
    if method == "virtualModel.route":
        return route(message["params"]["request"])
    return None


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if "method" not in message:
            continue
        try:
            result = handle(message)
            if "id" in message:
                send({"id": message["id"], "result": result})
        except Exception as error:  # reported to pi as the request's error
            print(f"virtual_router: {error}", file=sys.stderr)
            if "id" in message:
                send({"id": message["id"], "error": {"code": -32000, "message": str(error)}})


if __name__ == "__main__":
    main()
