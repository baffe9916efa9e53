"""A small MCP server for the tests, built on the `mcp` package's own server.

    python tests/mcp/server.py stdio
    python tests/mcp/server.py http PORT

Tools: echo, add, steps (reports progress), picture (an image), doc (an embedded resource), big (long text), grow (adds the
tool `extra` and says the list changed), die (the process exits mid-call), spawn (starts a
`sleep` that outlives nothing: it must end with the server). Environment: MCP_TEST_FAIL makes it
write to stderr and exit at once; MCP_TEST_PIDFILE gets the pids of the server and of what it
spawned; MCP_TEST_SECRET is echoed by `secret`. Prompt: review (path).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, Image, MCPServer

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("agentls-test")


def _note_pid(pid: int) -> None:
    path = os.environ.get("MCP_TEST_PIDFILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{pid}\n")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@server.tool()
def secret() -> str:
    """The value of MCP_TEST_SECRET in the server's environment."""
    return os.environ.get("MCP_TEST_SECRET", "(unset)")


@server.tool()
def auth(ctx: Context) -> str:
    """The Authorization header of the request (over HTTP)."""
    headers = ctx.headers or {}
    return headers.get("authorization", "(none)")


@server.tool()
def env_names() -> str:
    """The names of the server's environment variables, one a line."""
    return "\n".join(sorted(os.environ))


@server.tool()
def picture() -> Image:
    """A tiny PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def doc() -> types.EmbeddedResource:
    """An embedded text resource."""
    return types.EmbeddedResource(
        resource=types.TextResourceContents(
            uri="file:///notes.txt", text="the notes", mime_type="text/plain"
        )
    )


@server.tool()
def big() -> str:
    """A long text."""
    return "".join(f"line {i}\n" for i in range(20_000))


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and tell the client."""

    def extra() -> str:
        """Added at run time."""
        return "extra ran"

    server.add_tool(extra, name="extra")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.prompt()
def review(path: str) -> str:
    """Ask for a careful review of one file."""
    return f"Review {path} carefully."


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress `count` times (step i of count), then answer."""
    for i in range(1, count + 1):
        await ctx.report_progress(i, count, f"step {i}")
    return "stepped"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
def die() -> str:
    """Exit the process in the middle of the call."""
    sys.stderr.write("test server: dying on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def spawn() -> str:
    """Start a long sleep in the background (its own session, as daemons do)."""
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    _note_pid(child.pid)
    return f"started {child.pid}"


def main() -> None:
    _note_pid(os.getpid())
    if os.environ.get("MCP_TEST_FAIL"):
        sys.stderr.write("test server: missing configuration FOO\n")
        sys.stderr.write("test server: giving up\n")
        sys.exit(1)
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
