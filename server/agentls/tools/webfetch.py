"""webfetch: a web page as markdown, plain text or HTML.

http and https only, never with credentials in the URL. Its own permission: the subject is the
URL's origin, scheme, host and port; rules name a host ({"webfetch": {"docs.python.org": "allow",
"*.example.com": "allow"}}), or a scheme and port too ("http://localhost:8000"), asking by
default; an "always" answer grants that one origin. No SSRF: the host is resolved here (off the event loop) and a loopback, link-local,
private, unique-local, multicast, unspecified or reserved address (IPv4-mapped and other embedded
IPv4 too) is refused unless a configured rule names that host (permission/rules.py decide_host).
The connection goes to the address that was checked (the URL's host kept for the Host header and
TLS's SNI and certificate check), so no second lookup can change it; redirects are followed here,
at most MAX_REDIRECTS, each one checked and asked about like the first URL."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Literal, TypeVar

import httpx2
from pydantic import Field

from agentls.tools.base import (
    PermissionDenied,
    PermissionQuery,
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.text import human_size

TOOL = "webfetch"
MAX_READ_BYTES = 5 * 1024 * 1024  # what is read of a response; the rest is left unread
MAX_OUTPUT_CHARS = 60_000  # what the model gets (bash's cap: 30 KB head + 30 KB tail)
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-ndjson"}
)
# Dropped before converting a page: what a browser would not show as text.
_HIDDEN_TAGS = ("script", "style", "noscript", "template", "iframe", "svg", "object", "embed")
_USER_AGENT = "agentls-webfetch"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # IPv4 addresses in IPv6 (RFC 6052)


class WebFetchInput(ToolInput):
    url: str = Field(description="The http:// or https:// URL to fetch.")
    format: Literal["markdown", "text", "html"] = Field(
        default="markdown",
        description="How to return an HTML page: markdown (default), text (no markup) or html "
        "(as served). Other text (JSON, plain text) is returned as it is.",
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_S,
        description=f"Seconds for the whole fetch, redirects included (default "
        f"{DEFAULT_TIMEOUT_S:g}, at most {MAX_TIMEOUT_S:g}).",
    )


def blocked_kind(ip: Address) -> str | None:
    """Why webfetch does not reach this address without a rule naming its host ("loopback",
    "private", ...), None for a public address. An IPv4 address inside an IPv6 one (mapped,
    6to4, NAT64, Teredo) is judged too."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded: list[ipaddress.IPv4Address] = []
        if ip.ipv4_mapped is not None:
            embedded.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            embedded.append(ip.sixtofour)
        if ip.teredo is not None:
            embedded.extend(ip.teredo)
        if ip in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        for inner in embedded:
            kind = blocked_kind(inner)
            if kind is not None:
                return f"{kind} (inside {ip})"
        if ip.is_site_local:
            return "site-local"
    for kind, hit in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    ):
        if hit:
            return kind
    return None if ip.is_global else "non-public"


def check_url(raw: str) -> httpx2.URL:
    """The URL, or a ToolError saying why webfetch refuses it."""
    text = raw.strip()
    try:
        url = httpx2.URL(text)
    except (httpx2.InvalidURL, ValueError, TypeError) as exc:
        raise ToolError(f"Invalid URL {raw!r}: {exc}") from exc
    if url.scheme not in ("http", "https"):
        raise ToolError(
            f"Refused: {raw!r} is not an http:// or https:// URL; webfetch fetches only those."
        )
    if url.userinfo:
        raise ToolError(
            "Refused: the URL carries credentials (user:password@); webfetch never sends them."
        )
    if not url.raw_host:
        raise ToolError(f"Invalid URL {raw!r}: it names no host.")
    return url.copy_with(fragment=None)


def host_of(url: httpx2.URL) -> str:
    """The URL's host, lower-case, IDNA-encoded, without a trailing dot."""
    return url.raw_host.decode("ascii").rstrip(".").lower()


def origin_of(url: httpx2.URL) -> str:
    """The permission subject: the URL's origin, "https://host:443" (scheme and port always
    written; an IPv6 host in brackets). A rule may name the host alone; a grant is for all three."""
    host = host_of(url)
    port = url.port or (443 if url.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    return f"{url.scheme}://{shown}:{port}"


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[Address]:
    """The host's addresses (getaddrinfo in a thread: asyncio's loop.getaddrinfo)."""
    literal = _literal(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"Could not resolve {host}: {exc}. Nothing was fetched.") from exc
    out: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in out:
            out.append(address)
    if not out:
        raise ToolError(f"{host} has no address. Nothing was fetched.")
    return out


@dataclass
class _Page:
    url: httpx2.URL
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    cut: bool  # more than MAX_READ_BYTES: the rest was not read


class WebFetchTool(Tool):
    name = TOOL
    description = (
        "Fetch a web page (http or https) and return it as markdown (default), plain text or "
        "HTML; JSON and other text come back as they are. Use it to read documentation, an "
        "issue or an API reference the user points to. Each host needs the user's permission "
        "unless a rule allows it; loopback, link-local and private-network addresses are "
        f"refused. Redirects are followed (at most {MAX_REDIRECTS}), at most "
        f"{human_size(MAX_READ_BYTES)} is read, and the output is cut at "
        f"{MAX_OUTPUT_CHARS} characters."
    )
    input_model = WebFetchInput
    read_only = True

    def title(self, raw: dict[str, Any]) -> str:
        url = raw.get("url")
        return f"webfetch {url}" if isinstance(url, str) else self.name

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        p = expect_input(params, WebFetchInput)
        url = check_url(p.url)
        page = await self._fetch(url, p.format, _Clock(p.timeout_s or DEFAULT_TIMEOUT_S), ctx)
        return await asyncio.to_thread(render, page, p.format)

    async def _fetch(self, url: httpx2.URL, fmt: str, clock: _Clock, ctx: ToolContext) -> _Page:
        approved: set[str] = set()
        async with httpx2.AsyncClient(
            trust_env=False,  # no proxy from the environment: the connection goes where checked
            follow_redirects=False,
            timeout=httpx2.Timeout(clock.limit_s),
        ) as client:
            for hop in range(MAX_REDIRECTS + 1):
                host = host_of(url)
                literal = _literal(host)
                literal_kind = blocked_kind(literal) if literal is not None else None
                port = url.port or (443 if url.scheme == "https" else 80)
                if origin_of(url) not in approved:
                    # Asked before the name is resolved: a lookup can itself carry data out.
                    await _authorize(ctx, url, host, fmt, literal, literal_kind)
                    approved.add(origin_of(url))
                addresses = await clock.run(resolve(host, port), url)
                if literal is None:
                    for address in addresses:
                        kind = blocked_kind(address)
                        if kind is not None:
                            await _authorize(ctx, url, host, fmt, address, kind)
                            break
                ctx.progress(f"GET {url}")
                page = await clock.run(_get_any(client, url, host, addresses), url)
                if isinstance(page, _Page):
                    return page
                if hop == MAX_REDIRECTS:
                    break
                url = _redirect(url, page)
        raise ToolError(f"Too many redirects (more than {MAX_REDIRECTS}); stopped at {url}.")


T = TypeVar("T")


class _Clock:
    """The call's time limit, spent only on the network (lookups, requests), never on the
    user's answer to a question."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.spent = 0.0

    async def run(self, work: Awaitable[T], url: httpx2.URL) -> T:
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            async with asyncio.timeout(max(self.limit_s - self.spent, 0.0)):
                return await work
        except TimeoutError as exc:
            raise ToolError(
                f"Timed out after {self.limit_s:g} s fetching {url}. Nothing more was read."
            ) from exc
        finally:
            self.spent += loop.time() - start


async def _authorize(
    ctx: ToolContext,
    url: httpx2.URL,
    host: str,
    fmt: str,
    address: Address | None,
    kind: str | None,
) -> None:
    """The permission for `host`; a private address (`kind` set) only when a rule names it."""
    title = f"Fetch {url}"
    if kind is not None:
        title += f" ({host} is {address}, a {kind} address)"
    query = PermissionQuery(
        tool=TOOL,
        subject=origin_of(url),
        title=title,
        input={"url": str(url), "format": fmt},
        outside_workspace=kind is not None,  # the rules' "private": see rules.decide_host
    )
    try:
        await ctx.authorize(query)
    except PermissionDenied as exc:
        if kind is None:
            raise
        raise PermissionDenied(
            f"Refused: {host} is {address}, a {kind} address. webfetch reaches loopback, "
            "link-local, private and reserved addresses only when a permission rule names the "
            f'host, e.g. {{"permissions": {{"webfetch": {{"{host}": "allow"}}}}}}. Nothing was '
            f"fetched. ({exc})"
        ) from exc


class _NoConnection(ToolError):
    """No connection to that address (refused, unreachable): the next one is tried."""


async def _get_any(
    client: httpx2.AsyncClient, url: httpx2.URL, host: str, addresses: list[Address]
) -> _Page | str:
    """_get on the checked addresses in the resolver's order, until one connects."""
    failure: _NoConnection | None = None
    for address in addresses:
        try:
            return await _get(client, url, host, address)
        except _NoConnection as exc:
            failure = exc
    assert failure is not None  # resolve() returns at least one address
    raise failure


async def _get(
    client: httpx2.AsyncClient, url: httpx2.URL, host: str, address: Address
) -> _Page | str:
    """One request to `address` (the checked one) for `url`: the page, or a redirect's target."""
    pinned = url.copy_with(host=str(address))
    headers = {
        "Host": url.netloc.decode("ascii"),
        "User-Agent": _USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5",
    }
    extensions = {"sni_hostname": host} if url.scheme == "https" else {}
    # No cookie from one hop goes to the next (two hosts may share the address it is kept by).
    client.cookies.clear()
    request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
    try:
        response = await client.send(request, stream=True)
    except httpx2.ConnectError as exc:
        raise _NoConnection(f"Connecting to {host} ({address}) failed: {exc}") from exc
    except httpx2.HTTPError as exc:
        raise ToolError(f"Fetching {url} failed: {exc.__class__.__name__}: {exc}") from exc
    # Capped as sent too: a compressed stream that decodes to little (gzip members past the
    # first are dropped) is not read on until the time limit.
    sent = _Capped(response.stream)
    response.stream = sent
    try:
        if response.status_code in _REDIRECTS and "location" in response.headers:
            return response.headers["location"]
        body = bytearray()
        cut = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_READ_BYTES:
                del body[MAX_READ_BYTES:]
                cut = True
                break
        cut = cut or sent.hit
    except httpx2.DecodingError as exc:
        if not sent.hit:  # a compressed body cut at the cap may end mid-stream
            raise ToolError(f"Reading {url} failed: {exc.__class__.__name__}: {exc}") from exc
        cut = True
    except httpx2.HTTPError as exc:
        raise ToolError(f"Reading {url} failed: {exc.__class__.__name__}: {exc}") from exc
    finally:
        await response.aclose()
    content_type, charset = _content_type(response.headers.get("content-type", ""))
    return _Page(
        url=url,
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=content_type,
        charset=charset,
        body=bytes(body),
        cut=cut,
    )


class _Capped(httpx2.AsyncByteStream):
    """A response's bytes as sent, ended past MAX_READ_BYTES (`hit` then set)."""

    def __init__(self, inner: httpx2.AsyncByteStream | httpx2.SyncByteStream) -> None:
        assert isinstance(inner, httpx2.AsyncByteStream)
        self.inner = inner
        self.read = 0
        self.hit = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self.inner:
            self.read += len(part)
            yield part
            if self.read > MAX_READ_BYTES:
                self.hit = True
                return

    async def aclose(self) -> None:
        await self.inner.aclose()


def _redirect(url: httpx2.URL, location: str) -> httpx2.URL:
    try:
        target = url.join(location)
    except (httpx2.InvalidURL, ValueError) as exc:
        raise ToolError(f"{url} redirected to an invalid URL {location!r}: {exc}") from exc
    return check_url(str(target))


def _content_type(header: str) -> tuple[str, str | None]:
    main, _, rest = header.partition(";")
    charset = None
    match = re.search(r"charset\s*=\s*\"?([\w.:-]+)", rest, re.IGNORECASE)
    if match:
        charset = match.group(1)
    return main.strip().lower(), charset


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _is_text(content_type: str, body: bytes) -> bool:
    if content_type.startswith("text/") or content_type in _TEXT_TYPES:
        return True
    if content_type.endswith(("+json", "+xml")):
        return True
    return not content_type and b"\0" not in body[:8192]


def render(page: _Page, fmt: str) -> ToolResult:
    """The page as the model reads it (CPU work: run in a thread for a large page)."""
    html = page.content_type in _HTML_TYPES or (
        not page.content_type
        and page.body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))
    )
    title: str | None = None
    more = False  # the page's text goes on past what was converted
    if html and fmt != "html":
        title, text, more = html_to(page.body, page.charset, fmt)
    elif html or _is_text(page.content_type, page.body):
        text = _decode(page.body, page.charset)
    else:
        return ToolResult(
            f"{page.url} is {page.content_type or 'binary data'} ({human_size(len(page.body))}"
            f"{' or more' if page.cut else ''}), not text; webfetch returns only text and HTML.",
            is_error=True,
        )
    ok = 200 <= page.status < 300
    head = [f"URL: {page.url}", f"Status: {page.status} {page.reason}".rstrip()]
    if page.content_type:
        head.append(f"Content-Type: {page.content_type}")
    if title:
        head.append(f"Title: {title}")
    notes: list[str] = []
    if page.cut:
        notes.append(f"(Only the first {human_size(MAX_READ_BYTES)} of the response was read.)")
    if more or len(text) > MAX_OUTPUT_CHARS:
        notes.append(
            f"(Cut at {MAX_OUTPUT_CHARS} characters: the page has more"
            + ("; format=text is shorter" if fmt != "text" and html else "")
            + ".)"
        )
        text = text[:MAX_OUTPUT_CHARS]
    output = "\n".join(head) + "\n\n" + (text.strip() or "(empty)")
    if notes:
        output += "\n\n" + "\n".join(notes)
    return ToolResult(
        output,
        is_error=not ok,
        title=f"webfetch {page.url}",
        metadata={
            "url": str(page.url),
            "status": page.status,
            "bytes": len(page.body),
            "truncated": page.cut,
        },
    )


def html_to(body: bytes, charset: str | None, fmt: str) -> tuple[str | None, str, bool]:
    """An HTML page's title, its text as markdown (markdownify) or plain text (BeautifulSoup's
    get_text), scripts, styles and other hidden parts left out, and whether the page's text goes
    on past what was converted: only about what the output can hold is (see _visible_prefix)."""
    from bs4 import BeautifulSoup, UnicodeDammit
    from markdownify import MarkdownConverter

    markup = UnicodeDammit(body, [charset] if charset else [], is_html=True).unicode_markup
    markup = markup if markup is not None else _decode(body, charset)
    prefix = _visible_prefix(markup, 2 * MAX_OUTPUT_CHARS)
    soup = BeautifulSoup(prefix, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title is not None else None
    for tag in soup(["head", *_HIDDEN_TAGS]):
        tag.decompose()
    if fmt == "text":
        lines = (line.strip() for line in soup.get_text("\n").splitlines())
        text = "\n".join(lines)
    else:
        text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return title or None, re.sub(r"\n{3,}", "\n\n", text).strip(), len(prefix) < len(markup)


_CHUNK_CHARS = 32 * 1024


class _VisibleText(HTMLParser):
    """Counts the characters of text a page shows (not in head, script, style, ...)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.count = 0
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "head" or tag in _HIDDEN_TAGS:
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if (tag == "head" or tag in _HIDDEN_TAGS) and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.count += len(data.strip())


def _visible_prefix(markup: str, chars: int) -> str:
    """The start of the markup holding about `chars` characters of visible text (a whole chunk
    past them), all of it when it holds fewer. A quick pass of the standard library's parser:
    BeautifulSoup and markdownify then convert only that much of a large page."""
    counter = _VisibleText()
    for start in range(0, len(markup), _CHUNK_CHARS):
        counter.feed(markup[start : start + _CHUNK_CHARS])
        if counter.count > chars:
            return markup[: start + _CHUNK_CHARS]
    return markup
