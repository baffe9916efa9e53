"""The editor's own language servers as the agent's Languages (workspace.protocol.Languages).

A method the client declared in capabilities.experimental.agent.languageRequests is asked of the
editor with the server -> client request `agent/languageRequest` {method, params}; the editor
answers from its other language servers (never from agentls). Every other method goes to the
fallback: language servers agentls starts itself from the `languageServers` setting, or nothing.
The editor's answer is checked against the method's LSP result type before a tool sees it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from agentls.protocol.models import LanguageRequestParams
from agentls.workspace.protocol import Languages, LanguageUnavailable

log = logging.getLogger(__name__)

METHOD = "agent/languageRequest"

SendRequest = Callable[[str, dict[str, Any]], Awaitable[Any]]
Structure = Callable[[Any, type], Any]


class EditorLanguages:
    """Languages answered by the editor for the methods it declared, by `fallback` for the rest.

    `send` sends a request to the client and returns its raw JSON result (raising on a JSON-RPC
    error); `declared` is what the client declared (read at every call: initialize sets it);
    `structure` is the LSP converter's structure function, used to check an answer."""

    def __init__(
        self,
        *,
        send: SendRequest,
        declared: Callable[[], frozenset[str]],
        timeout_s: Callable[[], float],
        structure: Structure,
        fallback: Languages,
    ) -> None:
        self.send = send
        self.declared = declared
        self.timeout_s = timeout_s
        self.structure = structure
        self.fallback = fallback

    def methods(self, path: Path | None) -> frozenset[str]:
        return self.declared() | self.fallback.methods(path)

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        if method not in self.declared():
            return await self.fallback.request(method, params, path)
        # A tool's request that is not a wire-valid agent/languageRequest is a bug: say which.
        message = LanguageRequestParams.model_validate({"method": method, "params": params})
        timeout_s = self.timeout_s()
        try:
            result = await asyncio.wait_for(self.send(METHOD, message.wire()), timeout_s)
        except TimeoutError:
            raise LanguageUnavailable(
                f"the editor's language server did not answer {method} within {timeout_s:g} s "
                "(it may still be indexing); try again later or use grep."
            ) from None
        except Exception as exc:  # a JSON-RPC error from the client
            detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise LanguageUnavailable(f"the editor could not answer {method}: {detail}") from None
        self.check(method, result)
        return result

    def check(self, method: str, result: Any) -> None:
        """Raise LanguageUnavailable unless `result` is a valid LSP result of `method`."""
        if result is None:
            return
        response_type = types.METHOD_TO_TYPES[method][1]
        assert response_type is not None  # every LANGUAGE_METHODS entry is a request
        try:
            self.structure({"jsonrpc": "2.0", "id": 0, "result": result}, response_type)
        except Exception as exc:
            log.info("malformed %s answer from the editor: %r", method, exc)
            raise LanguageUnavailable(
                f"the editor's answer to {method} is not a valid LSP result "
                f"({_shape(result)}); nothing can be said from it."
            ) from None

    async def aclose(self) -> None:
        await self.fallback.aclose()


def _shape(value: Any) -> str:
    if isinstance(value, list):
        first = f" of {_shape(value[0])}" if value else ""
        return f"a list{first}"
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:6])
        return f"an object with {keys}" if keys else "an empty object"
    return f"a {type(value).__name__}"
