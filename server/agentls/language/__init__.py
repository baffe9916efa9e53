"""Language intelligence: the language servers the agent asks (workspace.protocol.Languages).

NoLanguages is what a workspace has when nothing can answer: every request says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.language.errors import LanguageUnavailable


class NoLanguages:
    """No language server at all: the editor declared none and `languageServers` names none."""

    def methods(self, path: Path | None) -> frozenset[str]:
        return frozenset()

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        where = f" for {path.name}" if path is not None else ""
        raise LanguageUnavailable(
            f"no language server answers {method}{where}: the editor offers none and the "
            '`languageServers` setting names none (e.g. {"python": {"command": '
            '["jedi-language-server"], "extensions": [".py"]}}).'
        )

    async def aclose(self) -> None:
        return None
