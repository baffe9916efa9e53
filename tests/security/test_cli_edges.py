"""CLI edges: Ctrl+C at the approval prompt ends the turn and the process at once (a real pty as
stdin and controlling terminal); without a terminal the refusal's how-to-allow hint reaches the
user on stderr, once; a NUL byte in any tool input is a clear tool error, never a traceback; and
write's 32 MB limit holds for the new text (write and edit) as it does for existing files."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.tools.support.file_writes import MAX_EDIT_BYTES
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures
from tests.security.fault_support import agentls, agentls_env, spawn_agentls

ALLOW_ALL = {"permissions": {"*": "allow"}}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    return root


# ---- NUL bytes in tool input ---------------------------------------------------------------

NUL_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    ("grep", {"pattern": "a\0b"}, "pattern"),
    ("grep", {"pattern": "a", "path": "src\0"}, "path"),
    ("grep", {"pattern": "a", "include": "*.py\0"}, "include"),
    ("glob", {"pattern": "**/*\0.py"}, "pattern"),
    ("glob", {"pattern": "*.py", "path": "\0"}, "path"),
    ("bash", {"command": "touch made\0; touch made"}, "command"),
    ("bash", {"command": "echo\0"}, "command"),
    ("read", {"path": "a.txt\0/etc/passwd"}, "path"),
    ("list", {"path": "sub\0"}, "path"),
    ("write", {"path": "made\0.txt", "content": "x"}, "path"),
    ("write", {"path": "made.txt", "content": "a\0b"}, "content"),
    ("edit", {"path": "a.txt", "old_string": "hello\0", "new_string": "bye"}, "old_string"),
    ("edit", {"path": "a.txt", "old_string": "hello", "new_string": "b\0ye"}, "new_string"),
    ("edit", {"path": "a\0.txt", "old_string": "hello", "new_string": "bye"}, "path"),
    ("grep", {"pattern": "a", "extra\0": 1}, "extra\\0"),
]


@pytest.mark.parametrize(
    ("tool", "tool_input", "field"), NUL_INPUTS, ids=[f"{t}-{f}" for t, _, f in NUL_INPUTS]
)
async def test_a_nul_byte_in_tool_input_is_a_clear_tool_error(
    tool: str,
    tool_input: dict[str, Any],
    field: str,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    with security_figures.attempt("cli edge"):
        api.enqueue(reply(tool_use(tool, tool_input)), reply(text("done")))
        h = await make_harness(ALLOW_ALL)
        (h.root / "a.txt").write_text("hello\n")
        session = await h.agent.new_session()
        result = await h.agent.prompt(session.id, "go")
        assert result.finish_reason == "end_turn"
        (event,) = h.of_type("tool-result")
        assert event.is_error, event.output
        assert "NUL byte" in event.output and f"{field}: contains" in event.output, event.output
        assert "unexpectedly" not in event.output and "Traceback" not in event.output
        assert (h.root / "a.txt").read_text() == "hello\n"
        assert not (h.root / "made").exists() and not (h.root / "made.txt").exists()


# ---- the size limit of new text ------------------------------------------------------------


async def test_write_refuses_new_content_over_the_limit(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt("cli edge"):
        # Two-byte characters: one more byte than the limit, in half as many characters.
        content = "é" * (MAX_EDIT_BYTES // 2) + "x"
        api.enqueue(
            reply(tool_use("write", {"path": "big.txt", "content": content}), chunk_size=1 << 22),
            reply(text("done")),
        )
        h = await make_harness(ALLOW_ALL)
        session = await h.agent.new_session()
        await h.agent.prompt(session.id, "go")
        (event,) = h.of_type("tool-result")
        assert event.is_error and "over this tool's limit" in event.output, event.output[:300]
        assert not (h.root / "big.txt").exists()


async def test_edit_refuses_a_result_over_the_limit(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt("cli edge"):
        # A small file and a small call whose replace_all would make a 40 MB file.
        api.enqueue(
            reply(tool_use("read", {"path": "x.txt"})),
            reply(
                tool_use(
                    "edit",
                    {
                        "path": "x.txt",
                        "old_string": "x",
                        "new_string": "y" * 1000,
                        "replace_all": True,
                    },
                )
            ),
            reply(text("done")),
        )
        h = await make_harness(ALLOW_ALL)
        (h.root / "x.txt").write_text("x" * 40_000)
        session = await h.agent.new_session()
        await h.agent.prompt(session.id, "go")
        edit = h.of_type("tool-result")[-1]
        assert edit.is_error and "over this tool's limit" in edit.output, edit.output[:300]
        assert (h.root / "x.txt").read_text() == "x" * 40_000


# ---- no terminal: the hint reaches the user --------------------------------------------------


def test_without_a_terminal_the_refusal_hint_is_printed_on_stderr_once(
    tmp_path: Path, api: MessagesAPIServer, workspace: Path, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt("cli edge"):
        api.enqueue(
            reply(tool_use("bash", {"command": "touch one"})),
            reply(tool_use("write", {"path": "two.txt", "content": "2"})),
            reply(text("I could not do it.")),
        )
        proc = agentls("run", "--cwd", str(workspace), "make files", env=agentls_env(tmp_path, api))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.count("Rerun with --yes") == 1, proc.stderr
        hint = next(line for line in proc.stderr.splitlines() if "Rerun with --yes" in line)
        assert hint.startswith("agentls: refused") and "no terminal" in hint, hint
        assert '{"permissions": {"bash": "allow"}}' in hint, hint
        assert "Traceback" not in proc.stderr
        assert not (workspace / "one").exists() and not (workspace / "two.txt").exists()
        # The model is told at every refusal that no one can be asked (not the user's hint).
        results = [
            block
            for body in [r.body for r in api.requests][1:]
            for message in body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert results and all(
            "the user is not at a terminal" in str(b["content"])
            and "--yes" not in str(b["content"])
            for b in results
        )


# ---- Ctrl+C at the approval prompt ------------------------------------------------------------


def _read_until(fd: int, needle: bytes, proc: subprocess.Popen[Any], sink: bytearray) -> None:
    """Read fd into sink until it holds needle; fails if the process ends first."""
    while needle not in sink:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, f"no {needle!r} within a minute: {bytes(sink)!r}"
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        assert chunk, f"output ended before {needle!r}: {bytes(sink)!r} (exit {proc.poll()})"
        sink += chunk


@pytest.mark.parametrize("how", ["ctrl-c typed", "sigint"])
def test_ctrl_c_at_the_approval_prompt_ends_the_turn_and_the_process(
    how: str,
    tmp_path: Path,
    api: MessagesAPIServer,
    workspace: Path,
    security_figures: SecurityFigures,
) -> None:
    with security_figures.attempt("cli edge"):
        api.enqueue(reply(tool_use("bash", {"command": "touch approved"})))
        master, slave = os.openpty()

        def controlling_terminal() -> None:
            # The pty becomes the child's controlling terminal: ^C typed on it is a SIGINT.
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = spawn_agentls(
            "run",
            "--cwd",
            str(workspace),
            "touch a file",
            env=agentls_env(tmp_path, api),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=controlling_terminal,
        )
        os.close(slave)
        seen = bytearray()
        try:
            _read_until(master, b"[n]o: ", proc, seen)
            if how == "ctrl-c typed":
                os.write(master, b"\x03")
            else:
                proc.send_signal(signal.SIGINT)
            # Once it is cancelled nothing waits for Enter: the process ends by itself. (Before,
            # the prompt's reading thread kept it alive until a line came.)
            code = proc.wait(timeout=60)
            while True:
                ready, _, _ = select.select([master], [], [], 0.5)
                if not ready:
                    break
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
        output = seen.decode("utf-8", "replace")
        assert code == 130, output
        assert "Traceback" not in output, output
        assert "[cancelled]" in output, output
        assert not (workspace / "approved").exists()


# ---- the interactive prompt still answers ----------------------------------------------------


def test_a_typed_yes_at_the_prompt_still_allows(
    tmp_path: Path, api: MessagesAPIServer, workspace: Path
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "touch approved"})), reply(text("done")))
    proc, master = _spawn_at_pty(tmp_path, api, workspace)
    seen = bytearray()
    try:
        _read_until(master, b"[n]o: ", proc, seen)
        os.write(master, b"y\n")
        _read_until(master, b"[end_turn]", proc, seen)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert (workspace / "approved").exists(), seen.decode("utf-8", "replace")


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux ptys")


# ---- keys typed before the question answer nothing ------------------------------------------


def _spawn_at_pty(tmp_path: Path, api: MessagesAPIServer, workspace: Path) -> tuple[Any, int]:
    master, slave = os.openpty()
    proc = spawn_agentls(
        "run",
        "--cwd",
        str(workspace),
        "touch a file",
        env=agentls_env(tmp_path, api),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    return proc, master


def _quiet_for(fd: int, seconds: float, sink: bytearray) -> None:
    """Read what comes within `seconds` into sink."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                sink += os.read(fd, 65536)
            except OSError:
                return


@pytest.mark.parametrize("typed", [b"y\n", b"y", b"yyyy\n\n", b"a\n", b"\n"])
def test_keys_typed_while_the_model_streams_answer_no_later_question(
    typed: bytes,
    tmp_path: Path,
    api: MessagesAPIServer,
    workspace: Path,
    security_figures: SecurityFigures,
) -> None:
    # The model streams its text slowly, then asks to edit: what was typed meanwhile is dropped.
    api.enqueue(
        reply(
            text("Let me look at this for a moment, then change a file."),
            tool_use("bash", {"command": "touch approved"}),
            chunk_size=4,
            delay_s=0.05,
        ),
        reply(text("done")),
    )
    proc, master = _spawn_at_pty(tmp_path, api, workspace)
    seen = bytearray()
    with security_figures.attempt("cli edge"):
        try:
            _read_until(master, b"Let me", proc, seen)
            os.write(master, typed)
            _read_until(master, b"[n]o: ", proc, seen)
            _quiet_for(master, 1.5, seen)
            assert proc.poll() is None, seen.decode("utf-8", "replace")
            assert not (workspace / "approved").exists()
            os.write(master, b"n")  # no at once ("e" would ask for a note)
            _read_until(master, b"[end_turn]", proc, seen)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
        assert not (workspace / "approved").exists(), seen.decode("utf-8", "replace")


def test_enter_alone_never_approves_and_one_key_does(
    tmp_path: Path, api: MessagesAPIServer, workspace: Path
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "touch approved"})), reply(text("done")))
    proc, master = _spawn_at_pty(tmp_path, api, workspace)
    seen = bytearray()
    try:
        _read_until(master, b"[n]o: ", proc, seen)
        os.write(master, b"\n\n")
        _quiet_for(master, 1.0, seen)
        assert not (workspace / "approved").exists() and proc.poll() is None
        os.write(master, b"y")  # no Enter
        _read_until(master, b"[end_turn]", proc, seen)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert (workspace / "approved").exists(), seen.decode("utf-8", "replace")
