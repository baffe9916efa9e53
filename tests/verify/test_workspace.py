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
from agentls.verify.workspace import VerifiedWorkspace
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
