"""Proposals follow the user's typing: when the user changes a document while a proposal for it
waits for approval, the proposal is merged anew into the document as it is now (three-way:
the text the proposal was made from, the user's text now, the proposal; workspace/merge.py) and
redrawn (the proposal-rebased event: its WorkspaceEdit on the document now). Accepting then
applies it with the user's typing kept: the edit pipeline merges the same way when it writes
(verify/workspace.py).

Lines both changed are a conflict: the proposal is marked so (no edit), accepting it is refused
with the lines named (nothing is ever written over them), and rejecting it tells the model why.
Each change merges from the proposal as first asked, so undoing the overlapping typing clears
the conflict.
"""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path

from agentls.events import ProposalRebasedEvent
from agentls.lsp.accepted import Proposal, ProposedFile
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.approvals import edit_range, proposal_edit, text_edits_of
from agentls.lsp.workspace import relative_name
from agentls.workspace.hunks import unified_diff
from agentls.workspace.merge import merge


def rebase_proposals(ls: AgentServer, uri: str) -> None:
    """After a change of the document `uri`: each waiting proposal of it rebased, and redrawn
    (a proposal-rebased event) when what it shows changed."""
    agent = ls.running_agent
    if ls.ws is None or agent is None:
        return
    doc = ls.ws.documents(uri)
    if doc is None:
        return
    path = to_fs_path(uri)
    for request_id, proposal in list(ls.proposals.items()):
        for index, asked in enumerate(proposal.asked):
            if asked.uri != uri and (path is None or Path(path) != asked.path):
                continue  # another document
            if asked.old_text is None:
                continue  # a new file: nothing to merge with
            event = _rebase(ls, request_id, proposal, index, str(doc.source), doc.version)
            if event is not None:
                agent.emit(event)


def _rebase(
    ls: AgentServer,
    request_id: str,
    proposal: Proposal,
    index: int,
    now: str,
    version: int | None,
) -> ProposalRebasedEvent | None:
    asked, shown = proposal.asked[index], proposal.files[index]
    assert asked.old_text is not None and ls.ws is not None
    if now == shown.old_text:
        return None  # drawn on this text already
    rel = relative_name(asked.path, ls.root)
    merged = merge(asked.old_text, now, asked.new_text)
    session_id = proposal.session_id
    if merged.text is None:
        proposal.conflicts[asked.path] = merged.where()
        proposal.files[index] = ProposedFile(asked.path, asked.uri, now, now, version)
        pending = ls.pending_edits.get(request_id)
        if pending is not None:
            pending.hunks, pending.version = [], version
        return ProposalRebasedEvent(
            session_id=session_id,
            request_id=request_id,
            path=rel,
            conflict=True,
            lines=merged.where(),
            **proposal.origin,
        )
    proposal.conflicts.pop(asked.path, None)
    proposal.files[index] = ProposedFile(asked.path, asked.uri, now, merged.text, version)
    edit = proposal_edit(ls, proposal.files)
    pending = ls.pending_edits.get(request_id)
    if pending is not None and pending.uri == asked.uri:
        pending.hunks, pending.version = text_edits_of(edit), version
        pending.range = edit_range(edit)
    return ProposalRebasedEvent(
        session_id=session_id,
        request_id=request_id,
        path=rel,
        edit=ls.protocol._converter.unstructure(edit),
        diff=unified_diff(now, merged.text, f"a/{rel}", f"b/{rel}"),
        **proposal.origin,
    )
