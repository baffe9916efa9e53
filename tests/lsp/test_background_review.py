"""The panel's review of a finished background session over real LSP: agent/backgroundDiff lists
its branch's hunks against the base, agent/backgroundApply brings exactly the kept hunks into the
user's file through workspace/applyEdit (a hunk clashing with the user's text is reported, not
written), agent/backgroundRemove deletes the worktree and branch (refused without force while
its work is not merged)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from agentls.session import background as bg
from agentls.workspace import worktree as wt
from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.com")
BASE = "".join(f"line {n}\n" for n in range(1, 13))
# The session changed line 2 and line 11: two hunks, far apart.
BRANCH = BASE.replace("line 2\n", "line two\n").replace("line 11\n", "line eleven\n")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest_asyncio.fixture
async def editor(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Editor]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    git(workspace, "init", "--quiet", "-b", "main")
    (workspace / "app.txt").write_text(BASE)
    git(workspace, "add", "app.txt")
    git(workspace, "commit", "--quiet", "-m", "first")
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


def finished_session(root: Path, tmp_path: Path) -> bg.BackgroundRecord:
    """A background session that ended (its run's result line written) having changed app.txt
    in its worktree, as a detached run leaves it."""
    tree = wt.create(root, "edit the app")
    (tree.path / "app.txt").write_text(BRANCH)
    (tree.path / "new.txt").write_text("brand new\n")
    log = bg.records_dir() / "ses_review0001.log"  # where a run's log is (a record says)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({"type": "result", "finishReason": "end_turn"}) + "\n")
    record = bg.BackgroundRecord(
        session_id="ses_review0001",
        repo_root=str(wt.repository_root(root)),
        worktree=str(tree.path),
        branch=tree.branch,
        base=tree.base,
        prompt="edit the app",
        log=str(log),
    )
    bg.save(record)
    return record


async def test_the_diff_lists_each_changed_file_with_its_hunks(
    editor: Editor, tmp_path: Path
) -> None:
    record = finished_session(editor.root, tmp_path)
    diff = await editor.request("agent/backgroundDiff", {"sessionId": record.session_id})
    assert diff["state"] == "done" and diff["branch"] == "agentls/edit-the-app"
    files = {f["path"]: f for f in diff["files"]}
    app = files["app.txt"]
    assert app["base"] == BASE and app["branch"] == BRANCH
    assert [(h["index"], h["oldStart"], h["oldLines"]) for h in app["hunks"]] == [
        (0, 1, 1),
        (1, 10, 1),
    ]
    assert app["hunks"][0]["diff"] == "@@ -2 +2 @@\n-line 2\n+line two\n"
    assert files["new.txt"].get("base") is None and len(files["new.txt"]["hunks"]) == 1


async def test_keeping_one_hunk_brings_in_exactly_that_hunk_through_the_editor(
    editor: Editor, tmp_path: Path
) -> None:
    record = finished_session(editor.root, tmp_path)
    result = await editor.request(
        "agent/backgroundApply",
        {"sessionId": record.session_id, "keep": [{"path": "app.txt", "hunks": [1]}]},
    )
    assert result == {"applied": [{"path": "app.txt", "hunks": [1]}], "conflicts": []}
    # Through workspace/applyEdit: the editor's buffer took it.
    assert editor.buffers[editor.uri("app.txt")].text == BASE.replace("line 11\n", "line eleven\n")
    # Nothing else came: not the other hunk, not the file it created; nothing merged.
    assert not (editor.root / "new.txt").exists()
    assert git(editor.root, "log", "--oneline").count("\n") == 1


async def test_a_hunk_clashing_with_the_users_text_is_reported_and_not_written(
    editor: Editor, tmp_path: Path
) -> None:
    record = finished_session(editor.root, tmp_path)
    # The user typed over line 2 (unsaved): the session's first hunk no longer fits there.
    mine = BASE.replace("line 2\n", "my line 2\n")
    editor.open("app.txt")
    editor.type_text("app.txt", mine)
    result = await editor.request(
        "agent/backgroundApply",
        {
            "sessionId": record.session_id,
            "keep": [{"path": "app.txt", "hunks": None}, {"path": "new.txt"}],
        },
    )
    assert result["applied"] == [
        {"path": "app.txt", "hunks": [1]},
        {"path": "new.txt", "hunks": [0]},
    ]
    [conflict] = result["conflicts"]
    assert conflict["path"] == "app.txt" and conflict["hunks"] == [0]
    # The user's typing is kept, the clashing hunk not written, the other one is.
    now = mine.replace("line 11\n", "line eleven\n")
    assert editor.buffers[editor.uri("app.txt")].text == now
    # What the merge editor needs: the user's file as output, the base, the user's buffer as
    # it is now, the base with the clashing hunk, and the conflict between git's markers.
    merge = conflict["merge"]
    assert merge["uri"] == editor.uri("app.txt")
    assert (merge["base"], merge["yours"]) == (BASE, now)
    assert merge["theirs"] == BASE.replace("line 2\n", "line two\n")
    assert merge["marked"] == now.replace(
        "my line 2\n", "<<<<<<< yours\nmy line 2\n=======\nline two\n>>>>>>> agentls/edit-the-app\n"
    )
    assert editor.root.joinpath("app.txt").read_text() == BASE  # nothing saved
    assert editor.buffers[editor.uri("new.txt")].text == "brand new\n"


async def test_bad_params_name_their_field(editor: Editor, tmp_path: Path) -> None:
    record = finished_session(editor.root, tmp_path)
    cases = [
        ("agent/backgroundDiff", {"sessionId": "ses_nope"}, "sessionId: ses_nope is not a"),
        (
            "agent/backgroundApply",
            {"sessionId": record.session_id, "keep": [{"path": "other.txt"}]},
            "keep: other.txt: not changed by the session",
        ),
        (
            "agent/backgroundApply",
            {"sessionId": record.session_id, "keep": [{"path": "app.txt", "hunks": [5]}]},
            "keep: app.txt: no hunk 5",
        ),
    ]
    for method, params, said in cases:
        with pytest.raises(JsonRpcException, match=said):
            await editor.request(method, params)
    assert editor.root.joinpath("app.txt").read_text() == BASE


async def test_remove_refuses_unmerged_work_without_force_then_deletes_worktree_and_branch(
    editor: Editor, tmp_path: Path
) -> None:
    record = finished_session(editor.root, tmp_path)
    params = {"sessionId": record.session_id}
    with pytest.raises(JsonRpcException, match="force: .* has work not merged"):
        await editor.request("agent/backgroundRemove", params)
    assert Path(record.worktree).is_dir()
    assert await editor.request("agent/backgroundRemove", {**params, "force": True}) == {
        "removed": True
    }
    assert not Path(record.worktree).exists()
    assert git(editor.root, "branch", "--list", record.branch).strip() == ""
    with pytest.raises(JsonRpcException, match="sessionId: "):
        await editor.request("agent/backgroundDiff", params)
