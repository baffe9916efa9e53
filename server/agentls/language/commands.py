"""Running a language server's command (`workspace/executeCommand`) without letting it change
anything: agentls is the client, so the edits the server sends back with `workspace/applyEdit`
while its command runs are captured (answered `applied: true`, never applied: the command then
ends normally) and returned, to be proposed like any edit. An applyEdit at any other time is
refused (`applied: false`). Commands that do something else than send edits (pyright's
create-type-stub writes files itself) are refused by name before they run; any other command
runs only in a server inside the read-only sandbox, where it cannot write anything itself."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

# Commands known to write files (or do anything else) themselves rather than send edits back.
WRITES_ITSELF = re.compile(r"(?i)(createtypestub|create[._-]?type[._-]?stub|restart|install)")


def commands_offered(capabilities: dict[str, Any]) -> list[str]:
    """The commands a server's executeCommandProvider lists."""
    provider = capabilities.get("executeCommandProvider")
    commands = provider.get("commands") if isinstance(provider, dict) else None
    return [c for c in commands if isinstance(c, str)] if isinstance(commands, list) else []


def refusal(command: str, offered: list[str], sandboxed: bool, label: str) -> str | None:
    """Why `command` is not run on this server (None: it may run, its edits captured)."""
    if WRITES_ITSELF.search(command):
        return (
            f"the command {command} does something itself (writes files or restarts a server) "
            "instead of sending its edits back; agentls does not run it"
        )
    if command not in offered:
        return f"{label} does not offer the command {command}"
    if not sandboxed:
        return (
            f"{label} runs outside the sandbox, where its command {command} could write files "
            "itself; agentls runs a language server's commands only in the read-only sandbox "
            '(the `sandbox` setting, "auto" or "on", with bubblewrap installed)'
        )
    return None


class EditCapture:
    """The edits a server sends with workspace/applyEdit while a command runs (one at a time)."""

    def __init__(self) -> None:
        self._edits: list[Any] | None = None
        self._lock = asyncio.Lock()

    def handle(self, params: Any) -> dict[str, Any]:
        """The answer to the server's workspace/applyEdit."""
        edit = params.get("edit") if isinstance(params, dict) else None
        if self._edits is None or not isinstance(edit, dict):
            return {"applied": False, "failureReason": "agentls applies edits itself"}
        self._edits.append(edit)
        return {"applied": True}

    async def run(self, execute: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        """{"result": the command's answer, "edits": the WorkspaceEdits it sent meanwhile}."""
        async with self._lock:
            self._edits = []
            try:
                result = await execute()
                # An applyEdit sent just before the answer is handled first (one connection, in
                # order): nothing more can come that belongs to this command.
                await asyncio.sleep(0)
                return {"result": result, "edits": list(self._edits)}
            finally:
                self._edits = None
