"""The terminal: a model's or a repository's escape sequences are never shown raw by `agentls run`
or `agentls export`. Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.security.conftest import SecurityFigures

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
