"""webfetch and SSRF: every way of spelling a loopback, link-local, private or otherwise
non-public address, asked for directly (with every host allowed by a blanket rule) or reached by a
redirect from a host a rule names (127.0.0.1, where the test server runs). None may be fetched:
only a rule naming that very host opens it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.webfetch import WebFetchTool
from tests.security.conftest import SecurityFigures
from tests.tools.webfetch_support import LocalWeb, Response, RulesContext, local_web

ATTACK = "webfetch to a private address (SSRF)"
# The refusal of a private address, or of a URL that is not one (httpx reads 0177.0.0.1 as such).
REFUSED = r"(?i)refused: .* address|invalid URL"

# Hosts (with {port}: the test server's own port) that name a non-public address.
TARGETS = [
    "169.254.169.254",  # the cloud metadata service
    "127.0.0.2:{port}",
    "127.1:{port}",
    "0x7f000001:{port}",
    "2130706433:{port}",
    "0177.0.0.1:{port}",
    "0.0.0.0:{port}",  # Linux connects it to the local host
    "localhost:{port}",
    "[::1]:{port}",
    "[::ffff:127.0.0.1]:{port}",
    "[::ffff:7f00:1]:{port}",
    "[64:ff9b::7f00:1]:{port}",  # NAT64
    "[2002:7f00:1::]:{port}",  # 6to4
    "[::]:{port}",
    "[fe80::1]",
    "[fd00::1]",
    "[fec0::1]",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared address space (carrier-grade NAT)
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
]


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    yield from local_web()


async def fetch(ctx: RulesContext, url: str) -> None:
    tool = WebFetchTool()
    await tool.run(tool.parse({"url": url, "timeout_s": 10}), ctx)


@pytest.mark.parametrize("target", TARGETS)
async def test_a_private_address_is_refused_even_when_every_host_is_allowed(
    web: LocalWeb, tmp_path: Path, security_figures: SecurityFigures, target: str
) -> None:
    ctx = RulesContext(tmp_path, {"*": "allow", "webfetch": "allow"})
    with security_figures.attempt(ATTACK):
        with pytest.raises(ToolError, match=REFUSED):
            await fetch(ctx, f"http://{target.format(port=web.port)}/latest/meta-data/")
        assert web.seen == []
        assert ctx.asked == []  # refused by the rules, not put to the user


@pytest.mark.parametrize("target", TARGETS)
async def test_a_redirect_to_a_private_address_is_refused(
    web: LocalWeb, tmp_path: Path, security_figures: SecurityFigures, target: str
) -> None:
    ctx = RulesContext(tmp_path, {"webfetch": {"127.0.0.1": "allow", "*": "allow"}})
    location = f"http://{target.format(port=web.port)}/latest/meta-data/"
    web.routes["/hop"] = Response(302, headers={"Location": location})
    web.routes["/latest/meta-data/"] = Response(body=b"iam-credentials")
    with security_figures.attempt(ATTACK):
        with pytest.raises(ToolError, match=REFUSED):
            await fetch(ctx, web.base + "/hop")
        assert [s.path for s in web.seen] == ["/hop"]


async def test_a_rule_naming_the_host_opens_it(web: LocalWeb, tmp_path: Path) -> None:
    """The other side of the refusals above: the rule that names the loopback host works."""
    web.routes["/latest/meta-data/"] = Response(body=b"iam-credentials")
    ctx = RulesContext(tmp_path, {"webfetch": {"localhost": "allow"}})
    tool = WebFetchTool()
    url = f"http://localhost:{web.port}/latest/meta-data/"
    result = await tool.run(tool.parse({"url": url}), ctx)
    assert "iam-credentials" in result.output
