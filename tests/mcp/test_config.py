"""The mcpServers shape, ${VAR} expansion, tool names, rules naming servers and tools, results."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import mcp_types as types
import pytest

from agentls.mcp.config import HttpServer, StdioServer, from_acp, parse_server, parse_servers
from agentls.mcp.names import exact_first, tool_name
from agentls.mcp.results import MAX_IMAGES_BASE64, convert
from agentls.permission.rules import PermissionRules

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_claude_code_shapes_parse() -> None:
    raw = {
        "fs": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "${H5_A}"}, "timeout": 5000},
        "api": {"type": "http", "url": "https://x.test/mcp", "headers": {"Auth": "B ${H5_A}"}},
        "sub": {"command": "srv", "cwd": "tools"},
    }
    parsed = parse_servers(raw, environ={"H5_A": "secret"})
    assert parsed.errors == {}
    fs = parsed.servers["fs"]
    assert isinstance(fs, StdioServer)
    assert fs.args == ("-y", "pkg") and dict(fs.env) == {"A": "secret"}
    assert fs.start_timeout_s == 5.0
    api = parsed.servers["api"]
    assert isinstance(api, HttpServer) and dict(api.headers) == {"Auth": "B secret"}


def test_defaults_missing_variables_and_bad_entries_are_per_server() -> None:
    raw = {
        "ok": {"command": "srv", "env": {"X": "${H5_UNSET:-fallback}"}},
        "unset": {"command": "srv", "env": {"X": "${H5_UNSET}"}},
        "no-command": {"args": ["x"]},
        "bad-url": {"type": "http", "url": "ftp://x"},
        "bad-args": {"command": "srv", "args": "x"},
        "sse": {"type": "sse", "url": "http://x"},
        "bad-timeout": {"command": "srv", "timeout": -1},
    }
    parsed = parse_servers(raw, environ={})
    assert list(parsed.servers) == ["ok"]
    assert dict(parsed.servers["ok"].env) == {"X": "fallback"}  # type: ignore[union-attr]
    assert "mcpServers.unset.env.X: ${H5_UNSET} is not set" in parsed.errors["unset"]
    assert set(parsed.errors) == set(raw) - {"ok"}
    assert "url" in parsed.errors["bad-url"] and "args" in parsed.errors["bad-args"]
    assert parse_servers(["x"]).errors  # not an object


def test_acp_servers_become_the_same_shape() -> None:
    servers = from_acp(
        [
            {"name": "a", "command": "srv", "args": ["1"], "env": [{"name": "K", "value": "v"}]},
            {
                "type": "http",
                "name": "b",
                "url": "http://x",
                "headers": [{"name": "H", "value": "1"}],
            },
        ]
    )
    assert servers == {
        "a": {"command": "srv", "args": ["1"], "env": {"K": "v"}},
        "b": {"type": "http", "url": "http://x", "headers": {"H": "1"}},
    }
    assert set(parse_servers(servers).servers) == {"a", "b"}


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("github", "create_issue", "mcp__github__create_issue"),
        ("my-server_2", "do.it/now", "mcp__my-server_2__do_it_now"),
    ],
)
def test_tool_names_follow_the_api_rule(server: str, tool: str, expected: str) -> None:
    assert tool_name(server, tool) == expected


@pytest.mark.parametrize(
    "server", ["github.", "github!", "github ", "_github", "git__hub", "my server"]
)
def test_a_server_name_that_needs_cleaning_gets_its_own_hashed_part(server: str) -> None:
    # Never another server's part (`mcp__github` for `github.`): a rule naming that server must
    # not allow this one's tools.
    name = tool_name(server, "delete_repo", {tool_name("github", "delete_repo")})
    assert API_NAME.match(name)
    assert not name.startswith(("mcp__github__", "mcp__git_hub__", "mcp__my_server__"))
    assert name == tool_name(server, "delete_repo")  # stable
    rules = PermissionRules.from_config({"mcp__github": "allow", "mcp__git_hub": "allow"})
    assert rules.evaluate(name, name) == "ask"


def test_of_two_tools_one_name_apart_the_exact_one_keeps_it() -> None:
    # The manager names a server's tools in exact_first order.
    taken: set[str] = set()
    names = {}
    for tool in sorted(["a_b", "a.b", "a/b"], key=exact_first):
        names[tool] = tool_name("s", tool, taken)
        taken.add(names[tool])
    assert names["a_b"] == "mcp__s__a_b"
    assert len(set(names.values())) == 3 and all(API_NAME.match(n) for n in names.values())


def test_long_and_colliding_names_stay_valid_unique_and_stable() -> None:
    long = tool_name("server", "t" * 100)
    assert API_NAME.match(long) and long.startswith("mcp__server__t")
    assert tool_name("server", "t" * 100) == long
    assert tool_name("server", "t" * 100) != tool_name("server", "t" * 99 + "u")
    taken = {tool_name("s", "a.b")}
    other = tool_name("s", "a_b", taken)  # a_b's own name is the exact one, a.b's its clean one
    assert other == "mcp__s__a_b"
    third = tool_name("s", "a/b", taken)
    assert third not in taken and API_NAME.match(third)


def test_rules_name_a_server_every_tool_of_it_or_one_tool() -> None:
    def action(config: object, tool: str) -> str:
        return PermissionRules.from_config(config).evaluate(tool, tool)

    assert action(None, "mcp__gh__create") == "ask"  # by default
    assert action({"mcp__gh": "allow"}, "mcp__gh__create") == "allow"
    assert action({"mcp__gh": "allow"}, "mcp__ghx__create") == "ask"
    assert action({"mcp__gh__*": "deny"}, "mcp__gh__create") == "deny"
    assert action({"mcp__gh__create": "allow"}, "mcp__gh__create") == "allow"
    assert action({"mcp__gh__create": "allow"}, "mcp__gh__delete") == "ask"
    rules = [
        {"tool": "mcp__gh", "action": "allow"},
        {"tool": "mcp__gh__delete", "action": "deny"},
    ]
    assert action(rules, "mcp__gh__create") == "allow"
    assert action(rules, "mcp__gh__delete") == "deny"  # the last match wins
    assert action({"read": "allow"}, "mcp__gh__read") == "ask"  # a built-in's rule is its own


def test_results_text_resources_images_and_the_cap() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(text="hello"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="file:///a", text="body", mime_type="text/plain"
                )
            ),
            types.ImageContent(data=png, mime_type="image/png"),
            types.ImageContent(data=png, mime_type="image/tiff"),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///b", blob=png, mime_type="application/zip"
                )
            ),
        ]
    )
    out = convert(result)
    assert out.images == [("image/png", png)]
    assert "hello" in out.text and "file:///a" in out.text and "body" in out.text
    assert "image/tiff, not shown" in out.text and "file:///b" in out.text
    assert not out.is_error
    big = convert(
        types.CallToolResult(content=[types.TextContent(text="x" * 100_000)], is_error=True)
    )
    assert big.is_error and len(big.text) < 61_000 and "omitted" in big.text
    structured = convert(types.CallToolResult(content=[], structured_content={"n": 1}))
    assert '"n": 1' in structured.text


def test_one_results_images_together_stay_under_the_requests_limit() -> None:
    # Twelve images of 3.5 MB each: each under the API's 5 MB, together past its 32 MB request.
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 3_500_000).decode()
    out = convert(
        types.CallToolResult(content=[types.ImageContent(data=data, mime_type="image/png")] * 12)
    )
    assert 0 < len(out.images) < 12
    assert sum(len(d) for _, d in out.images) <= MAX_IMAGES_BASE64
    assert out.text.count("not shown: this result's images already reach the limit") == 12 - len(
        out.images
    )


async def test_a_cwd_that_is_not_a_directory_is_said(tmp_path: Path) -> None:
    from agentls.mcp.connection import Connection, ServerFailed

    config = parse_server("s", {"command": "true", "cwd": "missing"}, root=tmp_path)
    with pytest.raises(ServerFailed, match=r"'s' .*missing is not a directory"):
        await Connection(config).start()


async def test_a_server_that_does_not_start_in_time_is_stopped_and_said(tmp_path: Path) -> None:
    from agentls.mcp.connection import Connection, ServerFailed
    from tests.mcp.conftest import alive, pids

    pidfile = tmp_path / "pid"
    entry = {
        "command": "sh",
        "args": ["-c", f"echo $$ > {pidfile}; echo never answering >&2; exec sleep 100"],
        "timeout": 500,
    }
    connection = Connection(parse_server("mute", entry, root=tmp_path))
    with pytest.raises(ServerFailed, match=r"'mute' .*did not start within 0.5 s") as failure:
        await connection.start()
    assert "never answering" in str(failure.value)  # its stderr, named
    assert connection.status == "failed"
    (pid,) = pids(pidfile)
    assert not alive(pid)  # stopped, not left running


async def test_a_stdio_server_gets_a_small_environment_and_its_own_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentls.mcp.connection import Connection
    from tests.mcp.conftest import stdio_entry

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("H5_UNRELATED", "x")
    connection = Connection(parse_server("s", stdio_entry(MINE="1")))
    await connection.start()
    try:
        result = await connection.call("env_names", {})
    finally:
        await connection.stop()
    names = set(convert(result).text.split())
    assert "MINE" in names and "PATH" in names
    assert not {"ANTHROPIC_API_KEY", "H5_UNRELATED"} & names
