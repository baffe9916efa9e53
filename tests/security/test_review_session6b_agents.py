"""A second review of session 6's late features: sub-agents, custom commands, images and session
management, attacked with a hostile model (the local Messages API scripts its tool calls) and a
hostile repository (its files). Each hole found is fixed and kept here; the figures go to the
security table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.session import CommandError
from agentls.session.images import ImageRefused, file_image, pasted_image
from agentls.session.policy import Policy
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures

SPECIAL = "special file (FIFO) read"
SUB_AGENT = "sub-agent escape"
FTS = "search query syntax"


class FifoWatch:
    """Tells whether anyone opened the FIFO to read while it ran: it opens the FIFO's write end
    without blocking (which fails with ENXIO while there is no reader) until stopped, and closes
    it at once when it could (so a reader stuck in open() gets EOF and the test goes on)."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.reader_seen = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    continue
                raise
            self.reader_seen = True
            os.close(fd)

    def __enter__(self) -> FifoWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# ---- images and @paths: a repository's FIFO named like a picture or a note ----------------------


def test_a_fifo_named_png_is_refused_without_being_opened(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "shot.png")
    policy = Policy(Settings.model_validate({"model": "m"}), str(root))
    with security_figures.attempt(SPECIAL), FifoWatch(root / "shot.png") as watch:
        with pytest.raises(ImageRefused, match="not a regular file"):
            file_image((root / "shot.png").as_uri(), root, policy, [])
    assert not watch.reader_seen


async def test_a_commands_at_path_to_a_fifo_neither_blocks_nor_is_attached(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    _isolated_config_home: Path,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness()
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    os.mkfifo(h.root / "notes.md")
    session = await h.agent.new_session()
    with security_figures.attempt(SPECIAL), FifoWatch(h.root / "notes.md") as watch:
        # Read on the event loop before the fix: the whole server hung until a writer came.
        with pytest.raises(CommandError, match="not a regular file"):
            await h.agent.prompt(session.id, "/review @notes.md")
    assert not watch.reader_seen
    assert api.requests == []


async def test_a_commands_at_path_reads_no_more_than_it_attaches(
    make_harness: HarnessFactory, api: MessagesAPIServer, _isolated_config_home: Path
) -> None:
    h = await make_harness()
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    # Multi-byte characters across the cut: the prefix read is still decoded whole.
    (h.root / "big.txt").write_text("é" * 300_000)
    api.enqueue(reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "/review @big.txt")
    body = h.accepted_requests()[0]
    sent = "\n".join(
        b.get("text", "") for b in body["messages"][-1]["content"] if isinstance(b, dict)
    )
    assert "é" * 1000 in sent and "... (cut)" in sent
    assert "é" * 200_001 not in sent


# ---- sub-agents -----------------------------------------------------------------------------


def task(description: str, prompt: str, agent: str | None = None) -> Any:
    args: dict[str, Any] = {"description": description, "prompt": prompt}
    if agent is not None:
        args["agent"] = agent
    return tool_use("task", args)


async def test_plan_mode_holds_for_a_sub_agent_whose_type_can_write(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness(
        {
            "permissions": {"*": "allow"},
            "agents": {"writer": {"description": "writes", "tools": ["write", "bash", "edit"]}},
        }
    )
    api.enqueue(
        reply(task("write it", "write files", agent="writer")),
        reply(
            tool_use("write", {"path": "a.txt", "content": "x"}),
            tool_use("bash", {"command": "touch b.txt"}),
        ),
        reply(text("tried")),
        reply(text("planned")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    await h.agent.prompt(session.id, "plan it")
    child_results = [
        b for b in h.accepted_requests()[2]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    for name in ("a.txt", "b.txt"):
        with security_figures.attempt(SUB_AGENT):
            assert not (h.root / name).exists()
    assert all(r["is_error"] and "plan mode" in r["content"] for r in child_results)


async def test_a_sub_agent_gets_no_task_tool_even_when_its_type_names_it(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"agents": {"nest": {"description": "n", "tools": ["task", "read"]}}})
    api.enqueue(
        reply(task("outer", "go", agent="nest")),
        reply(task("inner", "go deeper", agent="nest")),
        reply(text("child done")),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "nest")
    child = h.accepted_requests()[1]
    with security_figures.attempt(SUB_AGENT):
        assert "task" not in {t["name"] for t in child["tools"]}
        [inner] = [
            b
            for b in h.accepted_requests()[2]["messages"][-1]["content"]
            if b["type"] == "tool_result"
        ]
        assert inner["is_error"]
    children = [s for s in await h.store.list_sessions() if s.parent_id is not None]
    assert len(children) == 1


# ---- session search: FTS5 syntax in the user's words ----------------------------------------

QUERIES = [
    '"',
    'a" OR "b',
    "NEAR(a b, 1)",
    "text:foo",
    "^start",
    "a AND",
    "* OR *",
    "-x",
    "(",
    "a\x00b",
]


@pytest.mark.parametrize("query", QUERIES)
async def test_search_takes_fts5_syntax_as_plain_words(
    query: str, make_harness: HarnessFactory, security_figures: SecurityFigures
) -> None:
    h = await make_harness()
    await h.agent.new_session(title="unrelated")
    with security_figures.attempt(FTS):
        assert await h.store.search_sessions(query) == []


async def test_search_still_finds_a_quoted_word(make_harness: HarnessFactory) -> None:
    h = await make_harness()
    record = await h.agent.new_session(title='say "hello" there')
    assert [r.id for r in await h.store.search_sessions('"hello"')] == [record.id]


# ---- images: a repository's "picture" in a format whose decoder runs a program ---------------

EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n0 0 moveto 10 10 lineto stroke\n%%EOF\n"


async def test_an_eps_named_png_runs_no_ghostscript_when_the_model_reads_it(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
) -> None:
    from PIL import EpsImagePlugin

    # A `gs` on PATH (the user's Ghostscript), which Pillow runs to decode an EPS file.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "gs-ran"
    (bin_dir / "gs").write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    (bin_dir / "gs").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(EpsImagePlugin, "gs_binary", None)
    h = await make_harness()
    (h.root / "logo.png").write_bytes(EPS)
    api.enqueue(reply(tool_use("read", {"path": "logo.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look at the logo")
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    with security_figures.attempt("image decoder runs a program"):
        assert not ran.exists()
    assert result["is_error"]


@pytest.mark.parametrize("fmt", ["EPS", "BMP", "TIFF", "ICO", "PCX"])
def test_a_pasted_image_is_decoded_only_as_png_jpeg_gif_or_webp(
    fmt: str, security_figures: SecurityFigures
) -> None:
    import base64
    import io

    from PIL import Image

    if fmt == "EPS":
        raw = EPS
    else:
        out = io.BytesIO()
        Image.new("RGB", (16, 16)).save(out, format=fmt)
        raw = out.getvalue()
    with security_figures.attempt("image decoder runs a program"):
        with pytest.raises(ImageRefused, match="not one of PNG, JPEG, GIF, WebP"):
            pasted_image(base64.b64encode(raw).decode("ascii"))


# ---- a sub-agent's session title is the model's words: no control characters ----------------

HOSTILE_TITLES = [
    "\x1b]0;owned\x07 then \x1b[2J",  # terminal escapes: retitle the window, clear the screen
    "line\nfake-session-id  New row",  # a second row in `agentls sessions`
    "right\u202eto-left",  # text direction override
    "lone \ud800 surrogate",  # SQLite refuses it
]


@pytest.mark.parametrize("description", HOSTILE_TITLES)
async def test_a_sub_agents_title_from_the_model_is_plain_text(
    description: str,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness()
    api.enqueue(reply(task(description, "look around")), reply(text("ok")), reply(text("done")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    with security_figures.attempt("control characters in a session title"):
        [child] = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
        assert child.title.isprintable() and child.title.strip()


async def test_plan_mode_set_while_a_sub_agent_runs_holds_for_it(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness(
        {
            "permissions": {"write": "allow", "bash": "ask"},
            "agents": {"writer": {"description": "writes", "tools": ["write", "bash"]}},
        }
    )
    api.enqueue(
        reply(task("write it", "write files", agent="writer")),
        reply(tool_use("bash", {"command": "echo hi"})),
        reply(tool_use("write", {"path": "a.txt", "content": "x"})),
        reply(text("tried")),
        reply(text("planned")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    question = await h.wait_for("permission-request")
    # The user switches the session to plan mode while its sub-agent waits on a question.
    await h.agent.set_mode(session.id, "plan")
    h.agent.approve(question.session_id, question.request_id, "once")
    await asyncio.wait_for(turn, 10)
    with security_figures.attempt(SUB_AGENT):
        assert not (h.root / "a.txt").exists()


# ---- @paths and image uris out of the workspace or to a secret ---------------------------------


def png_bytes() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 4)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """A workspace with links out of it and to its secret, and a secret beside it."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("secret.txt", "secret.png"):
        (outside / name).write_bytes(png_bytes() if name.endswith(".png") else b"TOPSECRET\n")
    (root / ".env").write_text("TOKEN=TOPSECRET\n")
    (root / "id_rsa.png").write_bytes(png_bytes())
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "out.png").symlink_to(outside / "secret.png")
    (root / "env.txt").symlink_to(root / ".env")
    (root / "env.png").symlink_to(root / ".env")
    return root


AT_PATHS = ["../outside/secret.txt", "@/etc/passwd", "out.txt", "env.txt", ".env", "~/.bashrc"]


@pytest.mark.parametrize("ref", AT_PATHS)
async def test_a_commands_at_path_attaches_nothing_outside_or_secret(
    ref: str,
    hostile_tree: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    _isolated_config_home: Path,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness({"permissions": {"read": "allow"}})
    assert h.root == hostile_tree
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    session = await h.agent.new_session()
    with security_figures.attempt("@path out of the workspace or to a secret"):
        try:
            await h.agent.prompt(session.id, f"/review @{ref.removeprefix('@')}")
        except CommandError:
            pass
        assert api.requests == [] or all(
            "TOPSECRET" not in str(r.body) and "root:" not in str(r.body) for r in api.requests
        )


IMAGE_URIS = ["out.png", "env.png", "../outside/secret.png", "file:///etc/passwd", "id_rsa.png"]


@pytest.mark.parametrize("uri", IMAGE_URIS)
def test_an_image_uri_attaches_nothing_outside_or_secret(
    uri: str, hostile_tree: Path, security_figures: SecurityFigures
) -> None:
    policy = Policy(
        Settings.model_validate({"model": "m", "secretPatterns": ["**/id_rsa*"]}),
        str(hostile_tree),
    )
    with security_figures.attempt("image uri out of the workspace or to a secret"):
        with pytest.raises(ImageRefused):
            file_image(uri, hostile_tree, policy, [])


# ---- the terminal: a model's or a repository's escape sequences in `agentls run` and export ----

# OSC 52 writes the user's clipboard; OSC 0 retitles the window; CSI 2J clears the screen; a
# carriage return and "cursor up" rewrite lines already shown (an approval's diff); U+202E
# reverses what follows.
ESCAPES = "\x1b]52;c;ZWNobyBvd25lZA==\x07 \x1b]0;owned\x07 \x1b[2J \x1b[1A\rfake \u202eevil \x9b"


def test_agentls_run_and_export_show_no_escape_sequence(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    import subprocess
    import sys

    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "README.md").write_text(f"{ESCAPES}\nmore\n")
    api.enqueue(
        reply(text(f"Looking {ESCAPES}"), tool_use("read", {"path": "README.md"})),
        reply(text(f"done {ESCAPES}")),
    )

    def agentls(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentls.cli.main", *args],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    run = agentls("run", "--cwd", str(root), "--yes", "read the readme")
    assert run.returncode == 0, run.stderr
    session_id = run.stderr.split(" session ")[1].split()[0]
    export = agentls("export", session_id)
    assert export.returncode == 0, export.stderr
    for shown in (run.stdout, run.stderr, export.stdout):
        with security_figures.attempt("terminal escape sequence shown raw"):
            assert not any(c in shown for c in "\x1b\x07\r\x9b\u202e"), repr(shown[:300])
    assert "done \\x1b]52;c;ZWNobyBvd25lZA==" in run.stdout  # visible, not run


async def test_tasks_over_max_parallel_wait_and_a_childs_question_is_answered_only_there(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    from agentls.session import ApprovalError

    h = await make_harness(
        {
            "maxParallelTasks": 1,
            "permissions": {"bash": "ask"},
            "agents": {"sh": {"description": "runs", "tools": ["bash"]}},
        }
    )
    api.enqueue(
        reply(task("one", "run it", agent="sh"), task("two", "run it", agent="sh")),
        reply(tool_use("bash", {"command": "echo one"})),
        reply(text("one done")),
        reply(text("two done")),
        reply(text("both done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "two tasks"))
    question = await h.wait_for("permission-request")
    with security_figures.attempt(SUB_AGENT):
        # The second task waits for the first's slot: no session of its own yet.
        children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
        assert len(children) == 1
        # The child's question is the child's: the parent session does not answer it.
        with pytest.raises(ApprovalError):
            h.agent.approve(session.id, question.request_id, "always")
    h.agent.approve(question.session_id, question.request_id, "reject")
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
    assert len(children) == 2


def test_an_untrusted_workspace_defines_no_agent_type(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    import json

    from agentls.config import load_settings

    root = tmp_path / "repo"
    (root / ".agentls").mkdir(parents=True)
    layer = {
        "agents": {"general": {"description": "x", "tools": ["bash", "write", "edit"]}},
        "maxParallelTasks": 32,
    }
    (root / ".agentls" / "config.json").write_text(json.dumps(layer))
    settings = load_settings(root, {"model": "m"})
    with security_figures.attempt(SUB_AGENT):
        assert not settings.agents and settings.max_parallel_tasks == 4


async def test_the_read_tool_opens_no_fifo_named_like_an_image(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness()
    os.mkfifo(h.root / "shot.png")
    api.enqueue(reply(tool_use("read", {"path": "shot.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    with security_figures.attempt(SPECIAL), FifoWatch(h.root / "shot.png") as watch:
        await asyncio.wait_for(h.agent.prompt(session.id, "look"), 30)
    assert not watch.reader_seen
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert result["is_error"]


async def test_a_png_link_to_a_secret_outside_is_refused_and_not_shown(
    hostile_tree: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness({"permissions": {"read": "allow"}})
    api.enqueue(reply(tool_use("read", {"path": "out.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    await asyncio.wait_for(h.agent.prompt(session.id, "look"), 10)
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    with security_figures.attempt("image uri out of the workspace or to a secret"):
        assert result["is_error"] and "outside the workspace" in str(result["content"])
        assert "image" not in str(result["content"])


async def test_a_fork_taken_mid_turn_sends_no_dangling_tool_call(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"permissions": {"bash": "ask"}})
    api.enqueue(
        reply(text("ok"), tool_use("bash", {"command": "echo hi"})),
        reply(text("done")),
        reply(text("fork answer")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    question = await h.wait_for("permission-request")
    messages = await h.store.load_messages(session.id, repair=False)
    fork = await h.agent.fork_session(session.id, messages[-1].id)  # its bash call is running
    h.agent.approve(question.session_id, question.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    with security_figures.attempt("fork of a session mid-turn"):
        result = await h.agent.prompt(fork.id, "continue")
        assert result.finish_reason == "end_turn" and result.text == "fork answer"
        assert not [r for r in api.all_requests if r.rejected]
