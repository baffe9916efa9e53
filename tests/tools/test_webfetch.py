"""webfetch against a real HTTP server on loopback (allowed by a rule naming 127.0.0.1), with the
real permission rules: conversion, the caps, redirects, refusals, and the loop's ask and "always"."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.permission.grants import grant_for
from agentls.permission.rules import PermissionRules, Rule
from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.webfetch import MAX_OUTPUT_CHARS, MAX_READ_BYTES, WebFetchTool
from agentls.trust import restricted
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.tools.webfetch_support import (
    LocalWeb,
    Response,
    RulesContext,
    TLSRecorder,
    local_web,
)

LOOPBACK_ALLOWED = {"webfetch": {"127.0.0.1": "allow"}}
PAGE = b"""<!doctype html><html><head><title>The Guide</title>
<style>body { color: red }</style><script>var secret = "do-not-show";</script></head>
<body><h1>Install</h1><p>Run <b>pip install</b> and read <a href="/more">more</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""
HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    yield from local_web()


@pytest.fixture
def rctx(tmp_path: Path) -> RulesContext:
    return RulesContext(tmp_path, LOOPBACK_ALLOWED)


async def fetch(ctx: RulesContext, **raw: Any) -> Any:
    tool = WebFetchTool()
    return await tool.run(tool.parse(raw), ctx)


async def test_html_becomes_markdown_without_scripts(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/guide"] = Response(body=PAGE, headers=HTML)
    result = await fetch(rctx, url=web.base + "/guide")
    assert not result.is_error
    out = result.output
    assert "Title: The Guide" in out
    assert "# Install" in out
    assert "**pip install**" in out
    assert "[more](/more)" in out
    assert "- one" in out and "- two" in out
    assert "do-not-show" not in out and "color: red" not in out
    assert rctx.asked == []  # the rule naming 127.0.0.1 allows it


async def test_text_and_html_formats(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/guide"] = Response(body=PAGE, headers=HTML)
    plain = (await fetch(rctx, url=web.base + "/guide", format="text")).output
    body = plain.split("\n\n", 1)[1]
    assert "Install" in body and "pip install" in body and "more" in body
    assert "#" not in body and "**" not in body and "](" not in body and "<" not in body
    assert "do-not-show" not in body
    raw = (await fetch(rctx, url=web.base + "/guide", format="html")).output
    assert "<h1>Install</h1>" in raw and "do-not-show" in raw  # as served


async def test_json_is_returned_as_it_is(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/api"] = Response(
        body=b'{"name": "agentls", "n": 1}', headers={"Content-Type": "application/json"}
    )
    result = await fetch(rctx, url=web.base + "/api")
    assert json.loads(result.output.split("\n\n", 1)[1]) == {"name": "agentls", "n": 1}


async def test_binary_is_refused(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/img"] = Response(body=b"\x89PNG\r\n\0\0", headers={"Content-Type": "image/png"})
    result = await fetch(rctx, url=web.base + "/img")
    assert result.is_error and "image/png" in result.output and "not text" in result.output


async def test_an_http_error_is_an_error_with_its_body(web: LocalWeb, rctx: RulesContext) -> None:
    result = await fetch(rctx, url=web.base + "/missing")
    assert result.is_error and "404" in result.output and "not here" in result.output


async def test_size_cap_reads_no_more_than_the_cap(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/big"] = Response(body=b"x" * (MAX_READ_BYTES + 1_000_000))
    result = await fetch(rctx, url=web.base + "/big")
    assert result.metadata["bytes"] == MAX_READ_BYTES and result.metadata["truncated"]
    assert "Only the first 5" in result.output
    assert f"Cut at {MAX_OUTPUT_CHARS}" in result.output
    assert len(result.output) < MAX_OUTPUT_CHARS + 1000


async def test_a_long_page_is_converted_up_to_what_the_output_holds(
    web: LocalWeb, rctx: RulesContext
) -> None:
    script = b"<script>" + b"x=1;" * 250_000 + b"</script>"
    paragraphs = b"".join(b"<p>paragraph %d</p>" % i for i in range(20_000))
    web.routes["/long"] = Response(
        body=b"<html><head>" + script + b"</head><body>" + paragraphs + b"</body></html>",
        headers=HTML,
    )
    result = await fetch(rctx, url=web.base + "/long")
    assert "paragraph 0\n\nparagraph 1\n" in result.output
    assert "x=1" not in result.output and "paragraph 19999" not in result.output
    assert f"Cut at {MAX_OUTPUT_CHARS} characters: the page has more" in result.output


async def test_timeout(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/slow"] = Response(body=b"late", before=lambda: web.release.wait(30))
    with pytest.raises(ToolError, match="Timed out after 0.3 s"):
        await fetch(rctx, url=web.base + "/slow", timeout_s=0.3)


async def test_the_time_limit_does_not_count_the_users_answer(
    web: LocalWeb, tmp_path: Path
) -> None:
    ctx = RulesContext(tmp_path, {"webfetch": {"127.0.0.1": "ask"}})
    ctx.answer_after_s = 0.5
    web.routes["/page"] = Response(body=b"worth the wait")
    result = await fetch(ctx, url=web.base + "/page", timeout_s=0.3)
    assert "worth the wait" in result.output and len(ctx.asked) == 1


async def test_redirects_are_followed_and_capped(web: LocalWeb, rctx: RulesContext) -> None:
    web.routes["/old"] = Response(301, headers={"Location": "/new"})
    web.routes["/new"] = Response(302, headers={"Location": web.base + "/page"})
    web.routes["/page"] = Response(body=b"arrived")
    result = await fetch(rctx, url=web.base + "/old")
    assert "arrived" in result.output and f"URL: {web.base}/page" in result.output
    assert [s.path for s in web.seen] == ["/old", "/new", "/page"]
    assert all(s.cookie is None for s in web.seen)
    web.routes["/login"] = Response(302, headers={"Location": "/page", "Set-Cookie": "sid=1"})
    await fetch(rctx, url=web.base + "/login")
    assert web.seen[-1].path == "/page" and web.seen[-1].cookie is None  # no cookie kept
    for i in range(7):
        web.routes[f"/loop{i}"] = Response(302, headers={"Location": f"/loop{i + 1}"})
    with pytest.raises(ToolError, match="Too many redirects"):
        await fetch(rctx, url=web.base + "/loop0")
    assert "/loop6" not in [s.path for s in web.seen]


async def test_a_redirect_to_another_host_asks_for_that_host(web: LocalWeb, tmp_path: Path) -> None:
    # localhost is loopback too: the rule names it, and its question is asked (rule "ask").
    ctx = RulesContext(tmp_path, {"webfetch": {"127.0.0.1": "allow", "localhost": "ask"}})
    web.routes["/hop"] = Response(302, headers={"Location": f"http://localhost:{web.port}/x"})
    web.routes["/x"] = Response(body=b"via localhost")
    ctx.reject = True
    with pytest.raises(PermissionDenied, match="rejected"):
        await fetch(ctx, url=web.base + "/hop")
    assert [q.subject for q in ctx.asked] == [f"http://localhost:{web.port}"]
    assert [s.path for s in web.seen] == ["/hop"]
    ctx.reject = False
    result = await fetch(ctx, url=web.base + "/hop")
    assert "via localhost" in result.output
    # The connection went to the address checked; the Host header is the URL's.
    assert web.seen[-1].host == f"localhost:{web.port}"


async def test_https_goes_to_the_checked_address_with_the_hosts_name_and_certificate(
    tmp_path: Path,
) -> None:
    pytest.importorskip("cryptography")
    tls = TLSRecorder(tmp_path)
    try:
        ctx = RulesContext(tmp_path, {"webfetch": {"localhost": "allow"}})
        with pytest.raises(ToolError, match="(?i)certificate"):
            await fetch(ctx, url=f"https://localhost:{tls.port}/")
    finally:
        tls.close()
    # Connected to the address checked (127.0.0.1), with the URL's host as the TLS server name,
    # and the certificate checked against it (this self-signed one is refused).
    assert tls.names and set(tls.names) == {"localhost"}


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "ws://example.com/",
        "/relative/path",
    ],
)
async def test_non_http_schemes_are_refused(rctx: RulesContext, url: str) -> None:
    with pytest.raises(ToolError, match="Refused|Invalid URL"):
        await fetch(rctx, url=url)
    assert rctx.queries == []


async def test_credentials_in_the_url_are_refused(web: LocalWeb, rctx: RulesContext) -> None:
    with pytest.raises(ToolError, match="credentials"):
        await fetch(rctx, url=f"http://user:pw@127.0.0.1:{web.port}/")
    assert web.seen == [] and rctx.queries == []


async def test_loopback_without_a_rule_is_refused_before_asking(
    web: LocalWeb, tmp_path: Path
) -> None:
    ctx = RulesContext(tmp_path, {"webfetch": "allow"})  # every host, but no rule names it
    with pytest.raises(PermissionDenied, match="loopback"):
        await fetch(ctx, url=web.base + "/")
    assert web.seen == [] and ctx.asked == []


# ---- the rules and "always" ---------------------------------------------------------------


def test_webfetch_asks_by_default_and_rules_match_hosts() -> None:
    rules = PermissionRules.from_config(None)
    assert rules.evaluate("webfetch", "docs.python.org") == "ask"
    rules = PermissionRules.from_config(
        {
            "webfetch": {
                "docs.python.org": "allow",
                "*.example.com": "allow",
                "bad.example.com": "deny",
            }
        }
    )
    assert rules.evaluate("webfetch", "docs.python.org") == "allow"
    assert rules.evaluate("webfetch", "api.example.com") == "allow"
    assert rules.evaluate("webfetch", "bad.example.com") == "deny"
    assert rules.evaluate("webfetch", "example.com") == "ask"  # "*." needs a subdomain
    assert rules.evaluate("webfetch", "docs.python.org.evil.net") == "ask"
    # A private host: only a rule naming it literally opens it, a glob or "*" does not.
    assert rules.evaluate("webfetch", "db.example.com", outside_workspace=True) == "deny"
    opened = PermissionRules.from_config({"webfetch": {"db.internal": "allow"}})
    assert opened.evaluate("webfetch", "db.internal", outside_workspace=True) == "allow"
    assert opened.evaluate("webfetch", "db2.internal", outside_workspace=True) == "deny"
    ipv6 = PermissionRules.from_config({"webfetch": {"[::1]": "allow"}})
    assert ipv6.evaluate("webfetch", "::1", outside_workspace=True) == "allow"
    everything = PermissionRules.from_config({"*": "allow"})
    assert everything.evaluate("webfetch", "10.0.0.1", outside_workspace=True) == "deny"


def test_always_grants_the_host_shown_never_wider() -> None:
    grant = grant_for("webfetch", "docs.python.org")
    assert grant is not None
    assert grant.rules == (
        Rule(tool="webfetch", pattern="docs.python.org", action="allow", exact=True),
    )
    assert "docs.python.org" in grant.label
    rules = PermissionRules.from_config(None).extended(grant.rules)
    assert rules.evaluate("webfetch", "docs.python.org") == "allow"
    for other in ("sub.docs.python.org", "docs.python.org.evil.net", "python.org", "evil.net"):
        assert rules.evaluate("webfetch", other) == "ask", other
    # A grant never opens a private address, and none is offered for one.
    assert rules.evaluate("webfetch", "docs.python.org", outside_workspace=True) == "deny"
    assert grant_for("webfetch", "10.0.0.1", outside_workspace=True) is None
    assert grant_for("webfetch", "*.python.org") is None


def test_an_untrusted_workspace_cannot_open_a_private_host() -> None:
    user = PermissionRules.from_config({"webfetch": {"127.0.0.1": "allow"}})
    # The workspace's restrictions (its asks and denies) leave the user's named host open...
    floor = restricted(user, [Rule(tool="bash", action="ask")])
    assert floor.evaluate("webfetch", "127.0.0.1", outside_workspace=True) == "allow"
    # ...and its own rule naming a host is not one of the user's: it opens nothing.
    theirs = restricted(
        PermissionRules.from_config(None),
        [Rule(tool="webfetch", pattern="169.254.169.254", action="ask")],
    )
    assert theirs.evaluate("webfetch", "169.254.169.254", outside_workspace=True) == "deny"


# ---- through the loop ------------------------------------------------------------------------


def last_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content)


async def test_the_loop_fetches_with_a_rule(
    make_harness: HarnessFactory, api: MessagesAPIServer, web: LocalWeb
) -> None:
    web.routes["/guide"] = Response(body=PAGE, headers=HTML)
    h = await make_harness({"permissions": LOOPBACK_ALLOWED})
    api.enqueue(reply(tool_use("webfetch", {"url": web.base + "/guide"})), reply(text("read it")))
    session = await h.agent.new_session()
    await asyncio.wait_for(h.agent.prompt(session.id, "read the guide"), 30)
    result = last_results(h.accepted_requests()[1])[0]
    assert not result.get("is_error")
    assert "# Install" in result_text(result) and "do-not-show" not in result_text(result)
    assert h.of_type("permission-request") == []
    # The panel's card is titled by the URL (its shortTitle drops the tool's name).
    [call] = h.of_type("tool-call")
    assert call.title == f"webfetch {web.base}/guide"


async def test_the_loop_asks_by_default_and_a_no_fetches_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(tool_use("webfetch", {"url": "https://docs.example.invalid/page"})),
        reply(text("ok")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "fetch"))
    request = await h.wait_for("permission-request")
    assert request.tool == "webfetch" and "https://docs.example.invalid/page" in request.title
    assert "docs.example.invalid" in (request.always or "")
    h.agent.approve(session.id, request.request_id, "reject", "not that site")
    await asyncio.wait_for(turn, 10)
    result = last_results(h.accepted_requests()[1])[0]
    assert result["is_error"] and "not that site" in result_text(result)


async def answer(h: Harness, session_id: str, n: int, decision: str) -> Any:
    request = await h.wait_for("permission-request", n)
    h.agent.approve(session_id, request.request_id, decision)
    return request


async def test_always_in_the_loop_grants_only_that_host(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    first, other = "https://docs.example.invalid/a", "https://other.example.invalid/b"
    api.enqueue(
        reply(tool_use("webfetch", {"url": first})),
        reply(tool_use("webfetch", {"url": "https://docs.example.invalid/c"})),
        reply(tool_use("webfetch", {"url": other})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "fetch"))
    await answer(h, session.id, 1, "always")
    second = await answer(h, session.id, 2, "reject")
    await asyncio.wait_for(turn, 10)
    # The second call (same host) did not ask; the third (another host) did.
    assert "other.example.invalid" in second.title
    assert len(h.of_type("permission-request")) == 2
    grants = await h.store.list_grants(session.id)
    assert [g[:3] for g in grants] == [("webfetch", "https://docs.example.invalid:443", "allow")]
