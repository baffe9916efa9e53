"""Prompt caching as the server sees it: the bytes the cache keys on at each ``cache_control``
breakpoint (the request serialized in cache order: model, tools, system, messages, without the
markers themselves), why a request would miss the cache the previous one wrote, and
:class:`PromptCache`, which simulates the cache's reads and writes for ``simulate_cache``.

The simulation is stricter than the real API: a read needs a breakpoint at exactly the earlier
prefix (no 20-block lookback), and there is no minimum cacheable length."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any


def _has_cache_control(block: Any) -> bool:
    return isinstance(block, dict) and block.get("cache_control") is not None


def _without_cache_control(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    out = {k: v for k, v in block.items() if k != "cache_control"}
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [_without_cache_control(b) for b in out["content"]]
    return out


def _marks_breakpoint(block: Any) -> bool:
    if _has_cache_control(block):
        return True
    if isinstance(block, dict) and block.get("type") == "tool_result":
        inner = block.get("content")
        return isinstance(inner, list) and any(_has_cache_control(b) for b in inner)
    return False


def _cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request in cache order (model, tools, system, messages) as serialized pieces, each
    with whether a cache_control breakpoint ends there.  Key order is kept as sent."""

    def ser(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    segments: list[tuple[str, bool]] = [(ser({"model": body.get("model")}), False)]
    for tool in body.get("tools") or []:
        segments.append((ser(_without_cache_control(tool)), _has_cache_control(tool)))
    system = body.get("system")
    if isinstance(system, str):
        segments.append((ser(system), False))
    elif isinstance(system, list):
        for block in system:
            segments.append((ser(_without_cache_control(block)), _has_cache_control(block)))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        segments.append((ser({"role": message.get("role")}), False))
        content = message.get("content")
        if isinstance(content, str):
            segments.append((ser(content), False))
        elif isinstance(content, list):
            for block in content:
                segments.append((ser(_without_cache_control(block)), _marks_breakpoint(block)))
    return segments


def cache_prefixes(body: dict[str, Any]) -> list[str]:
    """What the cache keys on at each breakpoint of the request, in order: the serialized
    request (see :func:`_cache_segments`) up to and including the block marked cache_control."""
    out: list[str] = []
    pieces: list[str] = []
    for piece, breakpoint in _cache_segments(body):
        pieces.append(piece)
        if breakpoint:
            out.append("".join(pieces))
    return out


def cache_prefix_problem(previous: dict[str, Any], current: dict[str, Any]) -> str | None:
    """None when ``current`` reads the cache ``previous`` wrote: ``current`` has a breakpoint at
    exactly the bytes of ``previous``'s last breakpoint.  Otherwise, what is wrong."""
    before = cache_prefixes(previous)
    if not before:
        return "the previous request has no cache_control breakpoint"
    target = before[-1]
    now = cache_prefixes(current)
    if target in now:
        return None
    full = "".join(piece for piece, _ in _cache_segments(current))
    if not full.startswith(target):
        at = next(
            (k for k, (a, b) in enumerate(zip(target, full, strict=False)) if a != b),
            min(len(target), len(full)),
        )
        return (
            f"the previous request's last cached prefix ({len(target)} characters) differs from "
            f"this request at character {at}: before {target[max(0, at - 60) : at + 60]!r}, "
            f"now {full[max(0, at - 60) : at + 60]!r}"
        )
    return (
        f"this request starts with the previous request's last cached prefix ({len(target)} "
        f"characters) but has no breakpoint there (its breakpoints end at "
        f"{[len(p) for p in now]})"
    )


class PromptCache:
    """The breakpoint prefixes seen so far, and the usage a request gets from them: the longest
    prefix seen before is read, from there to its last breakpoint is written, the rest is input,
    each as characters // 4.  Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()  # digests of the breakpoint prefixes seen

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Usage cache fields for this request; its prefixes are remembered."""
        total = sum(len(piece) for piece, _ in _cache_segments(body))
        digests = [
            (len(p), hashlib.sha256(p.encode("utf-8", "surrogatepass")).hexdigest())
            for p in cache_prefixes(body)
        ]
        with self._lock:
            read = max((n for n, d in digests if d in self._seen), default=0)
            self._seen.update(d for _, d in digests)
        last = digests[-1][0] if digests else 0
        write = max(0, last - read)
        rest = total - max(read, last)
        return {
            "input_tokens": rest // 4,
            "cache_read_input_tokens": read // 4,
            "cache_creation_input_tokens": write // 4,
        }

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
