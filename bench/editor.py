"""editor: steps50's scenario (25 rounds of read the module, edit one function, then an answer)
through `agentls serve`, driven by an editor-like client, against the same turn as `agentls run
--yes` runs it (the agent on disk, in a warm process: `agentls run` without its start).

The client (EditorClient) keeps the module open in a versioned buffer, as an editor does. It
declares `applyEdit` with `documentChanges` and `savesEdits`, and applies each
workspace/applyEdit as VS Code's client does (client-vscode/src/applyEdit.ts): it checks the
version the edit names, applies it to the buffer (didChange), saves it (the file written,
didSave), then answers. It pushes diagnostics (agent/diagnostics) as a language server behind the
editor would, by profile:

* never: it declares `diagnosticsPush` but nothing ever comes (Markdown, YAML, plain text...);
* 50ms, 300ms: one push for the new version that long after each change (and after opening);
* stale: at once a push for the previous version (what the editor held when the change came),
  then the new version's after 300 ms;
* own: no `diagnosticsPush` (a plain client): the server verifies with its own checks.

Each measured turn gets a fresh server (warmed up by a first prompt) and workspace; the profiles
alternate in order between rounds. Where the time of an edit goes is timed on the client side
(the server keeps no timing of its own there), each message stamped as it is read or written:
prepare (tool-call event -> applyEdit request: the server reads the file, takes the diagnostics
before, builds the edit), apply (the client applies it and sends didChange), save (the file
written, didSave, the answer), after the answer (-> tool-result event: buffer and disk sync and
the verification wait; with a push, split at the push into the editor's own latency and the
server's time beyond it). The rest of a step is the model's request and the events.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    ApiServer,
    BenchResult,
    Figure,
    api_server,
    child_env,
    inprocess_env,
    log,
    median,
    quiet,
    runs,
    summary,
    temp_dir,
)
from bench.lsp_client import LspClient, Notification
from bench.steps50 import MODULE, PROMPT, ROUNDS, check_workspace, new_workspace, replies

STEPS = 2 * ROUNDS + 1  # requests to the model in the turn


@dataclass(frozen=True)
class Profile:
    name: str
    diagnostics_push: bool  # declared in capabilities.experimental.agent
    delay_s: float | None = None  # the push for a new version comes this long after the change
    stale_first: bool = False  # a push for the previous version at once

    @property
    def pushes(self) -> bool:
        return self.delay_s is not None


PROFILES = (
    Profile("never", True),
    Profile("50ms", True, 0.05),
    Profile("300ms", True, 0.3),
    Profile("stale", True, 0.3, stale_first=True),
    Profile("own", False),
)
# What the language server behind the editor reports for the module, before and after each edit.
DIAGNOSTICS = [
    {
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}},
        "severity": 2,
        "source": "bench",
        "message": "module docstring mentions a number",
    }
]


@dataclass
class Buffer:
    path: Path
    text: str
    version: int


@dataclass
class EditTiming:
    """One workspace/applyEdit, stamped with time.time() on the client."""

    requested_at: float
    applied_at: float = 0.0  # the buffer changed, didChange written
    answered_at: float = 0.0  # the file saved, didSave and the answer written
    pushed_at: float | None = None  # the push for the new version written
    stale_at: float | None = None


class EditorClient(LspClient):
    """An editor with versioned buffers that applies, saves and pushes diagnostics (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.profile = PROFILES[0]
        self.buffers: dict[str, Buffer] = {}
        self.edits: list[EditTiming] = []
        self.pushes = 0

    def capabilities(self) -> dict[str, Any]:
        return {
            "workspace": {
                "applyEdit": True,
                "workspaceEdit": {
                    "documentChanges": True,
                    "resourceOperations": ["create", "rename", "delete"],
                },
            },
            "experimental": {
                "agent": {
                    "approvals": False,
                    "diagnosticsPush": self.profile.diagnostics_push,
                    "savesEdits": True,
                }
            },
        }

    def open(self, path: Path) -> None:
        uri = "file://" + str(path)
        buffer = Buffer(path, path.read_text(), 1)
        self.buffers[uri] = buffer
        item = {"uri": uri, "languageId": "python", "version": 1, "text": buffer.text}
        self.notify("textDocument/didOpen", {"textDocument": item})
        self._schedule_pushes(uri, buffer.version, None)

    def handle_request(self, at: float, method: str, params: Any) -> Any:
        if method == "workspace/applyEdit":
            return self._apply(at, params["edit"])
        return None

    def _apply(self, at: float, edit: dict[str, Any]) -> dict[str, Any]:
        from lsprotocol import types

        from agentls.lsp.textedit import apply_text_edits

        timing = EditTiming(requested_at=at)
        changes = [(c["textDocument"], c["edits"]) for c in edit.get("documentChanges", [])]
        changes += [({"uri": uri}, edits) for uri, edits in edit.get("changes", {}).items()]
        for doc, _ in changes:
            buffer = self.buffers.get(doc["uri"])
            if buffer is None:
                return {"applied": False, "failureReason": f"{doc['uri']} is not open"}
            if doc.get("version") is not None and doc["version"] != buffer.version:
                reason = f"version {buffer.version}, the edit is for version {doc['version']}"
                return {"applied": False, "failureReason": reason}
        for doc, edits in changes:
            buffer = self.buffers[doc["uri"]]
            text_edits = [
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(**e["range"]["start"]),
                        end=types.Position(**e["range"]["end"]),
                    ),
                    new_text=e["newText"],
                )
                for e in edits
            ]
            buffer.text = apply_text_edits(buffer.text, text_edits)
            buffer.version += 1
            content = (
                [{"range": edits[0]["range"], "text": edits[0]["newText"]}]
                if len(edits) == 1
                else [{"text": buffer.text}]
            )
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": doc["uri"], "version": buffer.version},
                    "contentChanges": content,
                },
            )
        timing.applied_at = time.time()
        for doc, _ in changes:  # savesEdits: every edited buffer was clean, so it is saved
            buffer = self.buffers[doc["uri"]]
            with buffer.path.open("w", encoding="utf-8", newline="") as f:
                f.write(buffer.text)
            self.notify("textDocument/didSave", {"textDocument": {"uri": doc["uri"]}})
        for doc, _ in changes:
            self._schedule_pushes(doc["uri"], self.buffers[doc["uri"]].version, timing)
        self.edits.append(timing)
        timing.answered_at = time.time()
        return {"applied": True}

    def _schedule_pushes(self, uri: str, version: int, timing: EditTiming | None) -> None:
        profile = self.profile
        if profile.delay_s is None or not profile.diagnostics_push:
            return
        if profile.stale_first and version > 1:
            self._push(uri, version - 1, timing, stale=True)
        asyncio.get_running_loop().call_later(profile.delay_s, self._push, uri, version, timing)

    def _push(self, uri: str, version: int, timing: EditTiming | None, stale: bool = False) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing() or self.proc.returncode is not None:
            return  # a push still scheduled when the server was shut down
        params = {"uri": uri, "version": version, "diagnostics": DIAGNOSTICS}
        self.notify("agent/diagnostics", params)
        self.pushes += 1
        if timing is not None:
            if stale:
                timing.stale_at = time.time()
            else:
                timing.pushed_at = time.time()


@dataclass
class Turn:
    """One measured turn through `agentls serve`, and where its edits' time went (ms)."""

    wall_s: float
    phases: dict[str, list[float]] = field(default_factory=dict)
    waits_ran_out: int = 0  # edits whose result says no diagnostics arrived
    results_before_push: int = 0  # edits verified before the push for their version came
    notifications: dict[str, int] = field(default_factory=dict)


def _analyse(client: EditorClient, notes: list[Notification], wall_s: float) -> Turn:
    turn = Turn(wall_s)
    calls: dict[str, float] = {}
    edit_spans: list[tuple[float, float, str]] = []
    read_ms: list[float] = []
    model_ms: list[float] = []
    last_result: float | None = None
    for note in notes:
        params = note.params
        kind = params.get("type")
        turn.notifications[kind] = turn.notifications.get(kind, 0) + 1
        if kind == "tool-call":
            calls[params["callId"]] = note.at
            if last_result is not None:
                model_ms.append(1000 * (note.at - last_result))
        elif kind == "tool-result":
            if params.get("isError"):
                raise RuntimeError(f"editor: {params['tool']} failed: {params['output']:.500}")
            started = calls[params["callId"]]
            if params["tool"] == "edit":
                edit_spans.append((started, note.at, params["output"]))
            else:
                read_ms.append(1000 * (note.at - started))
            last_result = note.at
    if len(edit_spans) != ROUNDS or len(client.edits) != ROUNDS:
        raise RuntimeError(
            f"editor: {len(edit_spans)} edit results, {len(client.edits)} applyEdit requests"
        )
    names = ["edit", "prepare", "apply", "save", "after answer", "to push", "beyond push"]
    phases: dict[str, list[float]] = {name: [] for name in names}
    for (called, done, output), t in zip(edit_spans, client.edits, strict=True):
        phases["edit"].append(1000 * (done - called))
        phases["prepare"].append(1000 * (t.requested_at - called))
        phases["apply"].append(1000 * (t.applied_at - t.requested_at))
        phases["save"].append(1000 * (t.answered_at - t.applied_at))
        phases["after answer"].append(1000 * (done - t.answered_at))
        if t.pushed_at is not None:
            phases["to push"].append(1000 * (t.pushed_at - t.answered_at))
            phases["beyond push"].append(1000 * (done - t.pushed_at))
            turn.results_before_push += done < t.pushed_at
        turn.waits_ran_out += "none arrived" in output
    phases["read"] = read_ms
    phases["model and events"] = model_ms
    turn.phases = {k: v for k, v in phases.items() if v}
    return turn


async def _serve_turn(tmp: Path, srv: ApiServer, profile: Profile, name: str) -> Turn:
    ws = new_workspace(tmp, name)
    client = await EditorClient.spawn([AGENTLS, "serve"], child_env(tmp, srv.url), str(ws))
    assert isinstance(client, EditorClient)
    client.profile = profile
    try:
        options = {"agent": {"model": MODEL, "permissions": {"*": "allow"}}}
        await client.initialize(str(ws), options, client.capabilities())
        client.open(ws / MODULE)
        warm = (await client.request("agent/newSession", {}))["sessionId"]
        srv.enqueue(["warm-up answer"])
        await client.request("agent/prompt", {"sessionId": warm, "text": "hi"})
        session = (await client.request("agent/newSession", {}))["sessionId"]
        srv.control("/_test/clear", {})
        srv.enqueue(replies())
        notes: list[Notification] = []

        def on_note(note: Notification) -> None:
            params = note.params or {}
            if note.method == "agent/event" and params.get("sessionId") == session:
                notes.append(note)

        client.on_notification = on_note
        quiet()
        started = time.time()
        result = await client.request(
            "agent/prompt", {"sessionId": session, "text": PROMPT}, timeout=600
        )
        wall_s = time.time() - started
        client.on_notification = None
        if result.get("finishReason") != "end_turn":
            raise RuntimeError(f"editor ({profile.name}): the turn ended with {result!r:.300}")
        if len(srv.requests()) != STEPS:
            raise RuntimeError(f"editor ({profile.name}): {len(srv.requests())} requests")
        check_workspace(ws)
        buffer = client.buffers["file://" + str(ws / MODULE)]
        if buffer.text != (ws / MODULE).read_text():
            raise RuntimeError(f"editor ({profile.name}): the buffer and the disk differ")
        return _analyse(client, notes, wall_s)
    finally:
        await client.close()


async def _disk_turn(tmp: Path, name: str) -> float:
    """The turn `agentls run --yes` runs: the agent on disk, every call allowed."""
    from agentls.config import Settings
    from agentls.permission.broker import Answer
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace

    async def yes(ctx: Any) -> Answer:
        return Answer("once")

    ws = new_workspace(tmp, name)
    store = await Store.open(tmp / f"{name}-data" / "agentls.db")
    agent = Agent(
        store=store, workspace=DiskWorkspace(ws), settings=Settings(model=MODEL), asker=yes
    )
    session = await agent.new_session(model=MODEL)
    started = time.perf_counter()
    result = await agent.prompt(session.id, PROMPT)
    wall_s = time.perf_counter() - started
    await agent.aclose()
    await store.close()
    if result.finish_reason != "end_turn":
        raise RuntimeError(f"editor, on disk: {result}")
    check_workspace(ws)
    return wall_s


def run(result: BenchResult) -> None:
    n = runs()
    disk: list[float] = []
    turns: dict[str, list[Turn]] = {p.name: [] for p in PROFILES}
    with temp_dir("editor") as tmp, api_server(tmp) as srv:
        for i in range(n):
            with inprocess_env(tmp, srv.url):
                for warm in range(2 if i == 0 else 1):  # the very first warms up
                    srv.control("/_test/clear", {})
                    srv.enqueue(replies())
                    quiet()
                    took = asyncio.run(_disk_turn(tmp, f"disk{i}-{warm}"))
                if i or warm:
                    disk.append(took)
            order = PROFILES if i % 2 == 0 else PROFILES[::-1]
            for profile in order:
                turn = asyncio.run(_serve_turn(tmp, srv, profile, f"{profile.name}{i}"))
                turns[profile.name].append(turn)
            log(
                f"round {i + 1}/{n}: on disk {disk[-1]:.2f} s, through serve "
                + ", ".join(f"{p.name} {turns[p.name][-1].wall_s:.2f} s" for p in PROFILES)
            )

    def phase(rows: list[Turn], key: str) -> float | None:
        values = [v for t in rows for v in t.phases.get(key, [])]
        return median(values) if values else None

    details: dict[str, Any] = {"disk_turn_s": summary(disk), "profiles": {}}
    for profile in PROFILES:
        rows = turns[profile.name]
        beyond = [(t.wall_s - d) / STEPS * 1000 for t, d in zip(rows, disk, strict=True)]
        walls = median([t.wall_s for t in rows])
        p = {k: phase(rows, k) for k in rows[0].phases}
        split = (
            f", of which {p['to push']:.0f} ms to the editor's push and "
            f"{p['beyond push']:.1f} ms beyond it"
            if profile.pushes
            else ""
        )
        result.add(
            Figure(
                f"editor ({profile.name}): per step beyond agentls run's turn",
                median(beyond),
                "ms",
                note=f"turn {walls:.2f} s through serve vs {median(disk):.2f} s on disk; an edit "
                f"{p['edit']:.0f} ms: prepare {p['prepare']:.1f}, apply {p['apply']:.1f}, "
                f"save {p['save']:.1f}, after the answer {p['after answer']:.0f}{split}; "
                f"a read {p['read']:.1f} ms",
            )
        )
        if profile.pushes and not profile.stale_first:
            value = p["beyond push"] or 0.0
            result.add(
                Figure(
                    f"editor ({profile.name}): edit verified after the editor's push",
                    value,
                    "ms",
                    target="<= 30 ms",
                    met=value <= 30,
                )
            )
        elif profile.name == "never":
            value = p["after answer"] or 0.0
            result.add(
                Figure(
                    "editor (never): edit verified after the answer, no push",
                    value,
                    "ms",
                    target="<= 150 ms",
                    met=value <= 150,
                )
            )
        details["profiles"][profile.name] = {
            "turn_s": summary([t.wall_s for t in rows]),
            "per_step_beyond_ms": summary(beyond, 2),
            "phases_ms": {
                k: summary([v for t in rows for v in t.phases.get(k, [])], 2)
                for k in rows[0].phases
            },
            "waits_ran_out": [t.waits_ran_out for t in rows],
            "results_before_push": [t.results_before_push for t in rows],
            "notifications": rows[0].notifications,
        }
    result.details = details
