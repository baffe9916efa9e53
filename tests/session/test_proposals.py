"""A change the user proposes from the editor (session/proposals.py, behind agent/proposeEdit):
asked about as the agent's edits are and written once allowed, a tool-result closing it; the same
text asks nothing; a path outside the workspace, protected, or a directory is refused before
anything is asked; an unknown session is a KeyError."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentls.session import ProposalRefused, propose_edit
from tests.conftest import HarnessFactory


async def test_an_allowed_proposal_is_asked_about_then_written(
    make_harness: HarnessFactory,
) -> None:
    h = await make_harness()
    (h.root / "calc.py").write_text("x = 1\n")
    session = await h.agent.new_session()
    running = asyncio.ensure_future(propose_edit(h.agent, session.id, "calc.py", "x = 2\n"))
    asked = await h.wait_for("permission-request")
    assert asked.title == "Apply to calc.py" and "+x = 2" in (asked.diff or "")
    assert (h.root / "calc.py").read_text() == "x = 1\n"  # nothing written before the answer
    h.agent.approve(session.id, asked.request_id, "once")
    proposal = await running
    assert (proposal.decision, proposal.applied) == ("once", True)
    assert (h.root / "calc.py").read_text() == "x = 2\n"
    closed = h.of_type("tool-result")[-1]
    assert (closed.call_id, closed.output) == (asked.call_id, "Applied to calc.py.")


async def test_the_same_text_asks_nothing_and_refused_paths_ask_nothing(
    make_harness: HarnessFactory, tmp_path: Path
) -> None:
    h = await make_harness()
    (h.root / "calc.py").write_text("x = 1\n")
    (h.root / "pkg").mkdir()
    session = await h.agent.new_session()
    same = await propose_edit(h.agent, session.id, "calc.py", "x = 1\n")
    assert (same.decision, same.applied) == ("unchanged", False)
    for raw, why in [
        (str(tmp_path / "elsewhere.py"), "not inside the workspace"),
        ("../elsewhere.py", "not inside the workspace"),
        (".git/hooks/pre-commit", "protected"),
        ("pkg", "is a directory"),
        ("  ", "give a file path"),
    ]:
        with pytest.raises(ProposalRefused, match=why):
            await propose_edit(h.agent, session.id, raw, "print('hi')\n")
    with pytest.raises(KeyError):
        await propose_edit(h.agent, "ses_unknown", "calc.py", "x = 3\n")
    assert h.of_type("permission-request") == []
    assert (h.root / "calc.py").read_text() == "x = 1\n"
