"""One edit pipeline under every front end: VerifiedWorkspace on the disk's, the ACP editor's and
the LSP editor's raw file access makes the same calls in the same order, refuses and verifies
alike, puts back what a failed change of several files wrote, and hands each call its session."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import ReadTextFileResponse, WriteTextFileResponse

from agentls.acp.workspace import AcpWorkspace
from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.lsp.capabilities import ClientCaps
from agentls.lsp.workspace import LspWorkspace
from agentls.protocol.models import ClientAgentCapabilities
from agentls.verify.workspace import DiskWorkspace, VerifiedWorkspace
from agentls.workspace.disk import DiskFiles
from agentls.workspace.protocol import EditorDiagnostics, EditOutcome, FileAccess, FileChange

FRONT_ENDS = ["disk", "acp", "lsp"]


class EditorFiles:
    """An ACP client's fs methods, on the disk: what it was asked, for which session."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []  # (method, session, path)

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.asked.append(("read", session_id, path))
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.asked.append(("write", session_id, path))
        Path(path).write_text(content)
        return WriteTextFileResponse()


class Spy:
    """A front end's raw access, watched: each call (method, file name, session) in order; a
    write of `refuse` is not applied."""

    def __init__(self, inner: FileAccess, refuse: str | None = None) -> None:
        self.inner = inner
        self.refuse = refuse
        self.calls: list[tuple[str, str, str | None]] = []

    @property
    def root(self) -> Path:
        return self.inner.root

    @property
    def languages(self) -> Any:
        return self.inner.languages

    @property
    def waited(self) -> str:
        return self.inner.waited

    @property
    def diagnostics(self) -> EditorDiagnostics | None:
        return self.inner.diagnostics

    async def read_text(self, path: Path, session: str | None = None) -> str:
        self.calls.append(("read_text", path.name, session))
        return await self.inner.read_text(path, session)

    async def current_text(self, path: Path, session: str | None = None) -> str | None:
        self.calls.append(("current_text", path.name, session))
        return await self.inner.current_text(path, session)

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        self.calls.append(("write_text", path.name, session))
        if path.name == self.refuse:
            return EditOutcome(applied=False, reason=f"{path.name} is read-only")
        return await self.inner.write_text(path, new_text, old_text, session)

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        self.calls.append(("delete", path.name, session))
        return await self.inner.delete(path, session)

    async def apply_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome] | None:
        self.calls.append(("apply_all", ",".join(c.path.name for c in changes), session))
        return await self.inner.apply_all(changes, session)


async def never_asked(params: Any) -> Any:
    raise AssertionError("workspace/applyEdit sent to a client that cannot apply edits")


def raw_access(kind: str, root: Path, published: list[Any]) -> FileAccess:
    settings = Settings  # the defaults: no language servers, no verifyCommands
    if kind == "disk":
        return DiskFiles(root, settings)
    if kind == "acp":
        return AcpWorkspace(root, EditorFiles(), reads=True, writes=True, settings=settings)
    return LspWorkspace(  # an editor that applies no workspace edits: written to disk
        root,
        documents=lambda uri: None,
        caps=ClientCaps,
        settings=settings,
        apply_edit=never_asked,  # the client cannot apply edits
        publish_diagnostics=lambda uri, diagnostics: published.append((uri, diagnostics)),
        languages=NoLanguages(),
    )


@pytest.mark.parametrize("kind", FRONT_ENDS)
async def test_one_edit_goes_the_same_way_on_every_front_end(kind: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    published: list[Any] = []
    spy = Spy(raw_access(kind, tmp_path, published))
    session = VerifiedWorkspace(spy, Settings).for_session("s1")

    outcome = await session.write_text(tmp_path / "app.py", "x = (\n", "x = 1\n")

    assert outcome.applied
    assert spy.calls == [("current_text", "app.py", "s1"), ("write_text", "app.py", "s1")]
    assert (tmp_path / "app.py").read_text() == "x = (\n"
    assert outcome.diagnostics is not None
    assert outcome.diagnostics.startswith(
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) "
        "in app.py after this edit"
    )
    # An editor is shown agentls' own checks of the file it has no diagnostics of its own for.
    assert [uri for uri, _ in published] == (
        [(tmp_path / "app.py").as_uri()] if kind == "lsp" else []
    )


@pytest.mark.parametrize("kind", FRONT_ENDS)
async def test_a_file_changed_meanwhile_is_never_written(kind: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 2  # the user's\n")
    spy = Spy(raw_access(kind, tmp_path, []))
    session = VerifiedWorkspace(spy, Settings).for_session("s1")

    outcome = await session.write_text(tmp_path / "app.py", "x = 3\n", "x = 1\n")

    assert not outcome.applied
    assert outcome.reason is not None and "changed while the change waited" in outcome.reason
    assert spy.calls == [("current_text", "app.py", "s1")]
    assert (tmp_path / "app.py").read_text() == "x = 2  # the user's\n"


@pytest.mark.parametrize("kind", FRONT_ENDS)
async def test_a_change_is_merged_into_other_lines_changed_meanwhile(
    kind: str, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n\n\n\ny = 2  # the user's\n")
    session = VerifiedWorkspace(raw_access(kind, tmp_path, []), Settings).for_session("s1")

    outcome = await session.write_text(
        tmp_path / "app.py", "x = 3\n\n\n\ny = 1\n", "x = 1\n\n\n\ny = 1\n"
    )

    assert outcome.applied
    assert outcome.merged == "x = 3\n\n\n\ny = 2  # the user's\n"
    assert (tmp_path / "app.py").read_text() == outcome.merged


@pytest.mark.parametrize("kind", FRONT_ENDS)
async def test_a_change_of_several_files_that_fails_midway_is_put_back(
    kind: str, tmp_path: Path
) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    spy = Spy(raw_access(kind, tmp_path, []), refuse="b.py")
    session = VerifiedWorkspace(spy, Settings).for_session("s1")

    outcomes = await session.write_all(
        [
            FileChange(tmp_path / "a.py", "a = 2\n", "a = 1\n"),
            FileChange(tmp_path / "b.py", "b = 2\n", "b = 1\n"),
            FileChange(tmp_path / "c.py", "c = 2\n", None),
        ]
    )

    assert [o.applied for o in outcomes] == [False, False, False]
    assert outcomes[1].reason == "b.py is read-only"
    assert outcomes[0].reason == outcomes[2].reason == "not applied: b.py is read-only"
    assert (tmp_path / "a.py").read_text() == "a = 1\n"
    assert not (tmp_path / "c.py").exists()
    # Checked first, then written one by one (no front end here applies several natively), and
    # the file written before the refusal put back.
    assert spy.calls[3:] == [
        ("apply_all", "a.py,b.py,c.py", "s1"),
        ("write_text", "a.py", "s1"),
        ("write_text", "b.py", "s1"),
        ("write_text", "a.py", "s1"),
    ]


async def test_each_call_is_made_for_its_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    editor = EditorFiles()
    files = AcpWorkspace(tmp_path, editor, reads=True, writes=True, settings=Settings)
    workspace = VerifiedWorkspace(files, Settings)

    await workspace.for_session("s1").write_text(tmp_path / "a.txt", "two\n", "one\n")
    assert await workspace.for_session("s2").read_text(tmp_path / "a.txt") == "two\n"
    # Without a session there is no editor to ask: the disk.
    assert (
        await workspace.for_session(None).write_text(tmp_path / "a.txt", "3\n", "two\n")
    ).applied

    name = str(tmp_path / "a.txt")
    assert editor.asked == [("read", "s1", name), ("write", "s1", name), ("read", "s2", name)]
    assert (tmp_path / "a.txt").read_text() == "3\n"


async def test_where_the_editor_pushes_diagnostics_its_push_answers_the_edit(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.ts").write_text("let x = 1\n")
    caps = ClientCaps(agent=ClientAgentCapabilities(diagnostics_push=True))
    editor = LspWorkspace(
        tmp_path,
        documents=lambda uri: None,
        caps=lambda: caps,
        settings=Settings,
        apply_edit=never_asked,
        publish_diagnostics=lambda uri, diagnostics: None,
        languages=NoLanguages(),
    )
    uri = (tmp_path / "app.ts").as_uri()
    await editor.diagnostics_pushed(uri, None, [])  # the editor checks .ts files
    error = {"message": "Type 'string' is not assignable", "severity": 1, "source": "ts"}

    class PushingAfterWrite(Spy):
        async def write_text(self, *args: Any, **kwargs: Any) -> EditOutcome:
            outcome = await super().write_text(*args, **kwargs)
            asyncio.get_running_loop().call_soon(
                lambda: asyncio.ensure_future(editor.diagnostics_pushed(uri, None, [error]))
            )
            return outcome

    workspace = VerifiedWorkspace(PushingAfterWrite(editor), Settings)
    outcome = await workspace.write_text(
        tmp_path / "app.ts", 'let x: number = "a"\n', "let x = 1\n"
    )

    assert outcome.applied
    assert outcome.diagnostics is not None
    assert outcome.diagnostics.startswith("Diagnostics (editor): 1 new problem(s) in app.ts")
    assert "Type 'string' is not assignable" in outcome.diagnostics


# On the disk (DiskWorkspace: the pipeline on DiskFiles), what the pipeline says of a change.


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def ws(root: Path) -> DiskWorkspace:
    return DiskWorkspace(root)


async def test_write_refuses_when_the_file_changed_since_old_text(
    ws: DiskWorkspace, root: Path
) -> None:
    # The change may have waited for an approval while the user edited the file: never erase that.
    (root / "f.txt").write_text("changed on disk")
    outcome = await ws.write_text(root / "f.txt", "mine", "what the caller saw")
    assert not outcome.applied and "changed while the change waited" in (outcome.reason or "")
    assert (root / "f.txt").read_text() == "changed on disk"
    outcome = await ws.write_text(root / "new.txt", "mine", None)
    assert outcome.applied
    outcome = await ws.write_text(root / "new.txt", "again", None)
    assert not outcome.applied and "was created" in (outcome.reason or "")
    (root / "new.txt").unlink()
    outcome = await ws.write_text(root / "new.txt", "again", "mine")
    assert not outcome.applied and "was deleted" in (outcome.reason or "")


async def test_a_write_that_breaks_python_reports_it(ws: DiskWorkspace, root: Path) -> None:
    (root / "pkg").mkdir()
    path = root / "pkg" / "m.py"
    path.write_text("def f():\n    return 1\n")
    outcome = await ws.write_text(path, "def f(:\n    return 1\n", "def f():\n    return 1\n")
    assert outcome.applied and outcome.diagnostics is not None
    assert outcome.diagnostics.startswith(
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) in pkg/m.py after this edit:\n"
        "  line 1: error [agentls] SyntaxError:"
    )
    fixed = await ws.write_text(path, "def f():\n    return 2\n", "def f(:\n    return 1\n")
    assert fixed.diagnostics == (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in pkg/m.py. "
        "It fixed 1 problem(s) the file had before."
    )


async def test_a_new_json_file_is_checked(ws: DiskWorkspace, root: Path) -> None:
    outcome = await ws.write_text(root / "c.json", '{"a": }', None)
    assert outcome.diagnostics is not None and "1 new problem(s) in c.json" in outcome.diagnostics


async def test_files_nothing_checks_get_no_summary(ws: DiskWorkspace, root: Path) -> None:
    outcome = await ws.write_text(root / "notes.txt", "def f(:\n", None)
    assert outcome.applied and outcome.diagnostics is None


async def test_a_refused_write_is_not_verified(root: Path) -> None:
    ran = root / "RAN"
    ws = DiskWorkspace(root, lambda: Settings(verify_commands={"*.py": f"touch {ran}"}))
    (root / "a.py").write_text("x = 1\n")
    outcome = await ws.write_text(root / "a.py", "x = (\n", "x = 0\n")
    assert not outcome.applied and outcome.diagnostics is None
    assert not ran.exists()


async def test_verify_commands_of_the_settings_run_after_a_write(root: Path) -> None:
    settings = Settings(verify_commands={"*.txt": "grep -c TODO {path}"})
    ws = DiskWorkspace(root, lambda: settings)
    outcome = await ws.write_text(root / "notes.txt", "TODO one\nTODO two\n", None)
    assert outcome.diagnostics == (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in notes.txt.\n"
        f"Check `grep -c TODO {root / 'notes.txt'}` passed:\n2"
    )


# On the disk, several files as one change: all or none.


async def test_all_files_are_written_when_each_is_still_what_the_change_was_made_from(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.py"
    a.write_text("x = 1\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(b, "y = 2\n", None)]
    )
    assert [o.applied for o in outcomes] == [True, True]
    assert a.read_text() == "x = 2\n" and b.read_text() == "y = 2\n"


async def test_nothing_is_written_when_one_file_changed_meanwhile(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 1 # changed by the user\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(b, "y = 2\n", "y = 1\n")]
    )
    assert [o.applied for o in outcomes] == [False, False]
    assert outcomes[1].reason and "changed" in outcomes[1].reason
    assert outcomes[0].reason and "none was written" in outcomes[0].reason
    assert a.read_text() == "x = 1\n" and b.read_text() == "y = 1 # changed by the user\n"


async def test_a_failed_write_puts_back_the_files_written_before_it(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("x = 1\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, so nothing can be created under it\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(blocked / "new.py", "z\n", None)]
    )
    assert [o.applied for o in outcomes] == [False, False]
    assert outcomes[1].reason and "could not write" in outcomes[1].reason
    assert a.read_text() == "x = 1\n"


async def test_a_delete_is_part_of_the_change_and_put_back_when_a_later_write_fails(
    tmp_path: Path,
) -> None:
    made, kept = tmp_path / "made.py", tmp_path / "kept.py"
    made.write_text("made = 1\n")
    kept.write_text("k = 2\n")
    ws = DiskWorkspace(tmp_path)
    # A delete checks what the file must still be, as a write does.
    stale = await ws.write_all([FileChange(made, "", "made = 0\n", delete=True)])
    assert not stale[0].applied and made.exists()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, so nothing can be created under it\n")
    failed = await ws.write_all(
        [
            FileChange(made, "", "made = 1\n", delete=True),
            FileChange(blocked / "new.py", "z\n", None),
        ]
    )
    assert [o.applied for o in failed] == [False, False]
    assert made.read_text() == "made = 1\n"  # deleted, then put back
    done = await ws.write_all(
        [FileChange(made, "", "made = 1\n", delete=True), FileChange(kept, "k = 1\n", "k = 2\n")]
    )
    assert [o.applied for o in done] == [True, True]
    assert not made.exists() and kept.read_text() == "k = 1\n"
