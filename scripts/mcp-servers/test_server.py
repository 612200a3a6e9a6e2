"""A real MCP server on the official Python SDK (PyPI `mcp`, MCPServer), for pi's MCP tests.

    python test_server.py [--transport stdio|http] [--port N] [--mode normal|crash|hang|badjson]
                          [--name NAME] [--instructions TEXT]

Tools: echo, add (structured output), picture (an image), fail (an error result), big (long text),
slow (sleeps, reporting progress), env (an environment variable), cwd, headers (the HTTP request
headers), a-b and a_b (names that collide once sanitised), note_link (a resource link).
Resources: note://hello (text) and blob://data.bin (binary); template note://{name}.
Modes: crash exits with status 3 after writing to stderr; hang never answers; badjson writes
invalid JSON to stdout and keeps running.
"""

import argparse
import contextvars
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel
from mcp.server.mcpserver.utilities.types import Image

parser = argparse.ArgumentParser()
parser.add_argument("--transport", default="stdio")
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--mode", default="normal")
parser.add_argument("--name", default="test-server")
parser.add_argument("--instructions", default="Tools for testing pi.\nSecond line of the instructions.")
args = parser.parse_args()

if args.mode == "crash":
    print("boom: the server crashed on purpose", file=sys.stderr, flush=True)
    sys.exit(3)
if args.mode == "hang":
    print("hanging on purpose", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)
if args.mode == "badjson":
    sys.stdout.write("this is not json{\n")
    sys.stdout.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        sys.stdout.write("{not json either\n")
        sys.stdout.flush()

server = MCPServer(args.name, instructions=args.instructions)
REQUEST_HEADERS: contextvars.ContextVar[dict] = contextvars.ContextVar("headers", default={})
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


class Sum(BaseModel):
    sum: int


@server.tool(structured_output=True)
def add(a: int, b: int) -> Sum:
    """Add two numbers."""
    return Sum(sum=a + b)


@server.tool()
def picture() -> Image:
    """Return a one-pixel PNG."""
    import base64

    return Image(data=base64.b64decode(PNG), format="png")


@server.tool()
def fail(reason: str = "failed on purpose") -> str:
    """Always fail."""
    raise ValueError(reason)


@server.tool()
def big(chars: int = 30000) -> str:
    """Return a long text."""
    line = "0123456789abcdefghijklmnopqrstuvwxyz" * 2 + "\n"
    return (line * (chars // len(line) + 1))[:chars]


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    import anyio

    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def env(name: str) -> str:
    """Return an environment variable."""
    return os.environ.get(name, "<unset>")


@server.tool()
def pid() -> str:
    """Return the process id."""
    return str(os.getpid())


@server.tool()
def cwd() -> str:
    """Return the working directory."""
    return os.getcwd()


@server.tool()
def die() -> str:
    """Exit the server process at once."""
    os._exit(0)


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `late` and announce the changed tool list."""

    def late() -> str:
        """A tool added while connected."""
        return "late tool"

    server.add_tool(late)
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool(name="a-b")
def a_dash_b() -> str:
    """Tool a-b."""
    return "a-b"


@server.tool(name="a_b")
def a_underscore_b() -> str:
    """Tool a_b."""
    return "a_b"


@server.tool(structured_output=False)
def headers() -> str:
    """Return the HTTP request headers that reached the server."""
    import json

    return json.dumps(REQUEST_HEADERS.get(), sort_keys=True)


@server.resource("note://hello", mime_type="text/plain")
def hello_note() -> str:
    """A greeting."""
    return "Hello from the resource"


@server.resource("blob://data.bin", mime_type="application/octet-stream")
def blob_data() -> bytes:
    """Some bytes."""
    return bytes(range(16))


@server.resource("note://{name}")
def named_note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


if args.transport == "stdio":
    print(f"[{args.name}] starting on stdio", file=sys.stderr, flush=True)
    server.run("stdio")
else:
    import uvicorn

    app = server.streamable_http_app()

    class RecordHeaders:
        def __init__(self, inner):
            self.inner = inner

        async def __call__(self, scope, receive, send):
            if scope["type"] == "http":
                REQUEST_HEADERS.set({k.decode(): v.decode() for k, v in scope["headers"]})
            await self.inner(scope, receive, send)

    uvicorn.run(RecordHeaders(app), host="127.0.0.1", port=args.port, log_level="warning")
