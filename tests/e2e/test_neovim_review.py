"""Neovim with the shipped module (editors/nvim) keeps one hunk of a two-hunk proposal, decided in
the file's own buffer with the module's keys.

Headless Neovim (tests/e2e/nvim_review.lua) opens calc.py of the demo project; the module starts
the real `agentls serve` over stdio with the scripted model (scenario e2e), and `:Agent` asks it to
reword two docstrings in one edit. The edit's permission question goes through vim.ui.select,
answered "Review hunk by hunk in calc.py": the module draws both hunks in calc.py's buffer (removed
lines highlighted, added lines as virtual lines). The script types the keys a user would: keep
the hunk under the cursor, `]h`, drop that one. agent/approve then carries only the first hunk,
so calc.py holds exactly that change, in the buffer and on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

NVIM = shutil.which("nvim")
REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("nvim_review.lua")
MODULE = REPO / "editors" / "nvim"
WAIT_MS = 60_000  # each wait inside Neovim
RUN_TIMEOUT_S = 120  # the whole Neovim run
MEAN_OLD = '    """The arithmetic mean of a non-empty list."""'
MEAN_NEW = '    """Mean of a non-empty list."""'
MEDIAN_OLD = '    """The middle value; for an even count, the mean of the two middle values."""'
MEDIAN_NEW = '    """Median; for an even count, the mean of the two middle values."""'

pytestmark = pytest.mark.skipif(
    NVIM is None,
    reason="nvim is not installed: the Neovim end-to-end test needs Neovim 0.7+ on PATH "
    "(scripts/ensure-system-deps.sh installs it with apt-get when run as root)",
)


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(line[:1000] for line in text.splitlines()[-lines:])


def run_neovim(tmp: Path) -> tuple[dict[str, Any], str]:
    """Runs the script; returns its result and a report of everything seen, for failures."""
    workspace = tmp / "project"
    workspace.mkdir()
    sample = resources.files("agentls.demo") / "sample"
    for name in ("calc.py", "test_calc.py"):
        (workspace / name).write_text((sample / name).read_text(encoding="utf-8"), "utf-8")
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
        AGENTLS_DATA_DIR=str(tmp / "agentls-data"),
        AGENTLS_E2E_RESULT=str(result_file),
        AGENTLS_E2E_WORKSPACE=str(workspace),
        AGENTLS_E2E_SERVER_CMD=json.dumps([sys.executable, "-m", "agentls.cli.main", "serve"]),
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
        start_new_session=True,  # its own process group: the server goes down with it
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
        f"nvim stdout:\n{_tail(stdout)}\nnvim stderr:\n{_tail(stderr)}",
        f":messages:\n{result.get('messages')}",
    ]
    log = result.get("lsp_log")
    if log and Path(log).exists():
        parts.append(
            f"LSP log ({log}), last lines:\n{_tail(Path(log).read_text(errors='replace'))}"
        )
    result["returncode"] = proc.returncode
    result["workspace"] = str(workspace)
    return result, "\n\n".join(parts)


def test_neovim_keeps_one_hunk_of_two_with_the_review_keys(tmp_path: Path) -> None:
    result, report = run_neovim(tmp_path)
    assert result.get("ok") is True and result["returncode"] == 0, report

    # The edit asked once; the question offered the review in the file beside the whole answers.
    [question] = result["questions"]
    assert question["prompt"].startswith("agentls wants to run edit"), question
    choices = question["choices"]
    assert choices[0] == "Allow once" and choices[-1] == "Reject", choices
    assert "Review hunk by hunk in calc.py" in choices, choices

    # Both hunks drawn in calc.py's buffer: each removed line highlighted, each added line below
    # it as a virtual line, and the cursor put on the first hunk.
    before = result["hunks_before"]
    assert [(h["start"], h["removed"], h["added"]) for h in before] == [
        (4, 1, [MEAN_NEW]),
        (9, 1, [MEDIAN_NEW]),
    ], before
    marks = [m[3] for m in result["marks_before"]]
    removed = sorted(m_row[1] for m_row in result["marks_before"] if m_row[3].get("hl_group"))
    assert removed == [4, 9], marks
    assert all(m["hl_group"] == "DiffDelete" for m in marks if "hl_group" in m), marks
    virtual = [m["virt_lines"][0][0][0] for m in marks if m.get("virt_lines")]
    assert virtual == [MEAN_NEW, MEDIAN_NEW], marks
    assert result["current_buffer_is_calc"] is True, report
    assert result["cursor"] == [5, 10], result["cursor"]  # on hunk 1, then ]h to hunk 2
    assert result["states"] == [["accepted", "undecided"]], result["states"]

    # Exactly the kept hunk is in calc.py: in Neovim's buffer and on disk.
    on_disk = (Path(result["workspace"]) / "calc.py").read_text(encoding="utf-8").splitlines()
    assert MEAN_NEW in on_disk and MEAN_OLD not in on_disk, on_disk
    assert MEDIAN_OLD in on_disk and MEDIAN_NEW not in on_disk, on_disk
    sample = resources.files("agentls.demo") / "sample" / "calc.py"
    original = sample.read_text(encoding="utf-8").splitlines()
    assert [i for i, (a, b) in enumerate(zip(original, on_disk, strict=True)) if a != b] == [4]
    assert result["buffer_lines"] == on_disk, report

    # The answer said what was kept; the marks and the keys are gone with the proposal.
    transcript = result["transcript"]
    assert "[answered] 1 of 2 hunks kept" in transcript, transcript
    assert result["hunks_after"] == [] and result["marks_after"] == 0, report
    assert result["next_key_after"] == "", report
