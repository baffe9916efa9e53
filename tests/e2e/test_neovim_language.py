"""Neovim with the shipped module (editors/nvim) and jedi-language-server: the agent's
`references` come from jedi through Neovim, and its answer shows in the transcript buffer.

Headless Neovim (tests/e2e/nvim_language.lua) opens shapes.py of a small project; FileType python
starts jedi as a user's config would, and the module attaches `agentls serve`, declaring
agent/languageRequest. The user picks "Ask agent about this" among the code actions. The model
(the local Messages API) calls `references` on `area` in use_a.py: agentls asks Neovim, the
module loads that file's buffer (jedi attaches) and asks jedi, and the model gets jedi's answer: the two files that use shapes.area, and neither the
namesake method Room.area nor the notes that mention the word (what a grep would return).
Then `:Agent` prompts again in the same session; the model's write asks, and the module's
question goes through vim.ui.select (answered "Allow once" by the script). Last, the module's
answer to textDocument/diagnostic, which jedi does not answer: what jedi pushed for broken.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use

NVIM = shutil.which("nvim")
JEDI = Path(sys.executable).with_name("jedi-language-server")
REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("nvim_language.lua")
MODULE = REPO / "editors" / "nvim"
WAIT_MS = 60_000  # each wait inside Neovim
RUN_TIMEOUT_S = 120  # the whole Neovim run
ANSWER = "`area` is used in use_a.py and in pkg/use_b.py."
WRITTEN = "Wrote hello.txt."

pytestmark = [
    pytest.mark.skipif(
        NVIM is None,
        reason="nvim is not installed: the Neovim end-to-end test needs Neovim 0.7+ on PATH "
        "(scripts/ensure-system-deps.sh installs it with apt-get when run as root)",
    ),
    pytest.mark.skipif(
        not JEDI.exists(), reason="jedi-language-server is not installed (pip install -e .[dev])"
    ),
]

PROJECT = {
    "shapes.py": '"""Shapes."""\n\n\ndef area(width, height):\n    return width * height\n',
    "use_a.py": "from shapes import area\n\nprint(area(2, 3))\n",
    "pkg/__init__.py": "",
    "pkg/use_b.py": "import shapes\n\nTOTAL = shapes.area(4, 5)\n",
    # A namesake and a mention: a grep for "area" finds both, the language server neither.
    "room.py": "class Room:\n    def area(self):\n        return 12\n",
    "notes.md": "The area of a room is its width times its height.\n",
    "broken.py": "def broken(:\n    pass\n",
}


def _tail(text_: str, lines: int = 60) -> str:
    return "\n".join(line[:1000] for line in text_.splitlines()[-lines:])


def run_neovim(tmp: Path, api: MessagesAPIServer) -> tuple[dict[str, Any], str]:
    """Runs the script; returns its result and a report of everything seen, for failures."""
    workspace = tmp / "project"
    for name, content in PROJECT.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(content, encoding="utf-8")
    result_file = tmp / "result.json"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "AGENTLS_", "NVIM", "VIM", "MYVIMRC", "XDG_"))
    }
    for name in ("config", "data", "state", "cache", "runtime"):
        folder = tmp / "xdg" / name
        folder.mkdir(parents=True, mode=0o700)
        env["XDG_RUNTIME_DIR" if name == "runtime" else f"XDG_{name.upper()}_HOME"] = str(folder)
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="test-key",
        AGENTLS_MODEL="claude-sonnet-5-5",
        AGENTLS_DATA_DIR=str(tmp / "agentls-data"),
        AGENTLS_E2E_RESULT=str(result_file),
        AGENTLS_E2E_WORKSPACE=str(workspace),
        AGENTLS_E2E_SERVER_CMD=json.dumps([sys.executable, "-m", "agentls.cli.main", "serve"]),
        AGENTLS_E2E_JEDI_CMD=json.dumps([str(JEDI)]),
        AGENTLS_E2E_MODULE=str(MODULE),
        AGENTLS_E2E_TIMEOUT_MS=str(WAIT_MS),
    )
    assert NVIM is not None
    proc = subprocess.Popen(
        [NVIM, "--headless", "--clean", "-u", str(SCRIPT)],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the servers go down with it
    )
    try:
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=10)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # a server left behind, if any
        except ProcessLookupError:
            pass
    result: dict[str, Any] = {}
    if result_file.exists():
        result = json.loads(result_file.read_text(encoding="utf-8"))
    parts = [
        f"nvim exit code {proc.returncode}, stage {result.get('stage')!r}",
        f"error: {result.get('error')}",
        f"transcript: {result.get('transcript')}",
        f"language requests: {json.dumps(result.get('language_requests'))[:3000]}",
        f"jedi requests: {result.get('jedi_requests')}",
        f"nvim stdout:\n{_tail(stdout)}\nnvim stderr:\n{_tail(stderr)}",
        f":messages:\n{result.get('messages')}",
    ]
    log = result.get("lsp_log")
    if log and Path(log).exists():
        parts.append(
            f"LSP log ({log}), last lines:\n{_tail(Path(log).read_text(errors='replace'))}"
        )
    result["returncode"] = proc.returncode
    return result, "\n\n".join(parts)


def tool_results(api: MessagesAPIServer) -> list[str]:
    """The text of every tool result the model received (the last request holds them all: both
    turns are in one session)."""
    found = []
    for message in api.requests[-1].body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(part.get("text", "") for part in inner)
                found.append(str(inner))
    return found


def test_references_come_from_jedi_through_neovim(tmp_path: Path, api: MessagesAPIServer) -> None:
    # Asked of use_a.py, which Neovim has not loaded: the module loads it, and jedi attaches.
    api.enqueue(reply(tool_use("references", {"path": "use_a.py", "symbol": "area", "line": 3})))
    api.enqueue(reply(text(ANSWER)))
    # The second turn (:Agent): a question to the user, then a write, which asks; vim.ui.select
    # answers both (the choice "hi", "Allow once").
    api.enqueue(
        reply(tool_use("ask_user", {"question": "Which word?", "choices": ["hello", "hi"]}))
    )
    api.enqueue(reply(tool_use("write", {"path": "hello.txt", "content": "hello\n"})))
    api.enqueue(reply(text(WRITTEN)))
    result, report = run_neovim(tmp_path, api)
    assert result.get("ok") is True and result["returncode"] == 0, report

    # The user picked the code action agentls offers.
    assert "Ask agent about this" in result["code_actions"], report

    # agentls asked Neovim, and the module answered from jedi (never from agentls itself).
    asked = [r for r in result["language_requests"] if r["method"] == "textDocument/references"]
    assert asked, report
    assert "textDocument/references" in result["jedi_requests"], report
    uris = {location["uri"].rsplit("/project/", 1)[1] for location in asked[0]["result"]}
    assert {"use_a.py", "pkg/use_b.py"} <= uris, report
    assert "room.py" not in uris and "notes.md" not in uris, report
    loaded = [b for b in result["buffers"] if b["name"].endswith("/project/use_a.py")]
    assert loaded and loaded[0]["jedi"] is True and loaded[0]["listed"] is False, report

    # The model received jedi's references: the two users, no namesake, no mention.
    results = tool_results(api)
    assert len(results) == 3, report
    assert results[1] == "The user answered: hi", results
    assert "use_a.py" in results[0] and "pkg/use_b.py" in results[0], results[0]
    assert "room.py" not in results[0] and "notes.md" not in results[0], results[0]

    # The transcript buffer showed the turn: the tool call and the streamed answer.
    transcript = result["transcript"]
    assert result["transcript_shown"] is True, report
    assert any(line.startswith("[references]") for line in transcript), transcript
    assert ANSWER in transcript, transcript
    assert transcript.index(ANSWER) < transcript.index("[end_turn]"), transcript

    # The agent's question, then the write's permission question, went through vim.ui.select,
    # and their answers were taken.
    asked_user, question = result["questions"]
    assert asked_user["prompt"] == "agentls asks: Which word?", asked_user
    assert asked_user["choices"] == ["hello", "hi", "Answer in my own words…", "Skip"]
    assert "[answered] hi" in transcript, transcript
    assert question["prompt"].startswith("agentls wants to run write"), question
    assert question["choices"][0] == "Allow once" and question["choices"][-1] == "Reject"
    assert "[answered] Allow once" in transcript, transcript
    assert WRITTEN in transcript, transcript
    assert (tmp_path / "project" / "hello.txt").read_text() == "hello\n"

    # textDocument/diagnostic, which jedi does not answer: the module reports what jedi pushed.
    pulled = result["pulled"]
    assert pulled["kind"] == "full" and pulled["items"], report
    assert all(item["range"]["start"]["line"] == 0 for item in pulled["items"]), pulled
    assert pulled["items"][0]["severity"] == 1, pulled
