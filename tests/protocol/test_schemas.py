"""schemas/ and docs/protocol.md are generated from the models; a stale copy fails here."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.protocol.schema import build, main

ROOT = Path(__file__).resolve().parents[2]


def test_generated_files_match_the_models() -> None:
    assert main(["--root", str(ROOT), "--check"]) == 0, "run `make schemas` and commit the result"


def test_every_method_and_the_event_union_have_a_schema() -> None:
    files = build()
    names = {Path(p).name for p in files}
    for method in (
        "newSession",
        "prompt",
        "cancel",
        "approve",
        "listSessions",
        "getMessages",
        "revert",
    ):
        assert f"agent.{method}.json" in names
    assert {"agent.event.json", "agent.diagnostics.json", "agent.runOnSelection.json"} <= names
    event = json.loads(files["schemas/notifications/agent.event.json"])
    kinds = {
        d["properties"]["type"]["const"]
        for d in event["$defs"].values()
        if "type" in d.get("properties", {})
    }
    assert {
        "turn-start",
        "text-delta",
        "tool-call",
        "tool-result",
        "permission-request",
        "permission-resolved",
        "retry",
        "usage",
        "turn-end",
        "error",
    } <= kinds


def test_a_stale_file_is_detected(tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path)]) == 0
    target = tmp_path / "schemas" / "requests" / "agent.prompt.json"
    target.write_text(target.read_text().replace("sessionId", "session_id"))
    assert main(["--root", str(tmp_path), "--check"]) == 1


def test_the_clients_language_method_lists_are_the_protocols() -> None:
    from typing import get_args

    from agentls.protocol.models import LanguageMethod

    files = build()
    for rel in (
        "client-vscode/src/protocol/languageMethods.ts",
        "editors/nvim/lua/agentls/methods.lua",
    ):
        quoted = [
            line.strip().rstrip(",").strip("'")
            for line in files[rel].splitlines()
            if line.startswith("  '")
        ]
        assert quoted == list(get_args(LanguageMethod)), rel


def test_a_client_method_list_out_of_date_fails_the_check(tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path)]) == 0
    lua = tmp_path / "editors" / "nvim" / "lua" / "agentls" / "methods.lua"
    lua.write_text(lua.read_text().replace("  'textDocument/diagnostic',\n", ""))
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert "'textDocument/diagnostic'" in lua.read_text()
