"""Plan mode against a hostile model: programs the read-only list would take for readers that write
(`uniq a b`, `xxd -r`, `tree -o`, `file -C`, `date -s`, gawk's `@include`), no rule approving a plan,
rename and an MCP-like tool refused. The local Messages API scripts the tool calls; each attack is
counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.permission.bash_readonly import is_read_only
from agentls.permission.rules import PermissionRules
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.attack_support import FakeServer, results_of, text_edit
from tests.security.conftest import SecurityFigures

PLAN_WRITE = "plan mode write"


# ---- plan mode: programs the read-only list takes for readers that write --------------------

# Each writes a file (or sets the clock) though its program only reads in its usual use.
WRITING_READERS = [
    "uniq a.txt out.txt",
    "uniq -c a.txt out.txt",
    "uniq -- a.txt out.txt",
    "tree -o out.txt",
    "tree -fo out.txt .",
    "tree --output out.txt",
    "xxd a.txt out.txt",
    "xxd -r -p hex.txt out.txt",
    "xxd -revert hex.txt",
    "file -C -m magic",
    "file --compile --magic-file magic",
    "date -s 2020-01-01",
    "date --set=2020-01-01",
    "date -us 2020-01-01",
    "cat a.txt | uniq - out.txt",
    "tree -R",
    "tree -L 1 -R -H .",
    # gawk runs another file's awk program (a repository's, with system() in it) or a library.
    "awk '@include \"x.awk\"' /dev/null",
    "awk '@load \"./evil\"' /dev/null",
    "awk '@ include \"x.awk\"' /dev/null",
]
AWK_INCLUDES = WRITING_READERS[-3:]
# The same programs reading: still read-only.
READERS = [
    "uniq a.txt",
    "uniq -c a.txt",
    "tree -L 2",
    "xxd a.txt",
    "xxd -l 16 a.txt",
    "file a.txt",
    "date -u",
    "awk '{print $1}' a.txt",
]


@pytest.mark.parametrize("line", WRITING_READERS)
def test_plan_mode_takes_no_writing_reader_for_read_only(
    line: str, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt(PLAN_WRITE):
        assert not is_read_only(line)


@pytest.mark.parametrize("line", AWK_INCLUDES)
def test_an_awk_allow_rule_does_not_run_an_included_program(
    line: str, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    rules = PermissionRules.from_config({"bash": {"awk": "allow"}})
    with security_figures.attempt("option that runs or writes"):
        assert rules.evaluate("bash", line, root=tmp_path) == "ask"


@pytest.mark.parametrize("line", READERS)
def test_readers_stay_read_only(line: str) -> None:
    assert is_read_only(line)


async def test_plan_mode_refuses_writing_readers_through_the_loop(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"permissions": {"*": "allow"}, "sandbox": "off"})
    (h.root / "a.txt").write_text("a\na\nb\n")
    (h.root / "hex.txt").write_text("6869\n")
    lines = ["uniq a.txt out1.txt", "xxd a.txt out2.txt", "xxd -r -p hex.txt out3.txt"]
    api.enqueue(
        reply(*(tool_use("bash", {"command": line}) for line in lines)), reply(text("planned"))
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    await h.agent.prompt(session.id, "plan it")
    results = results_of(h.accepted_requests()[1])
    for i, (line, result) in enumerate(zip(lines, results, strict=True), start=1):
        with security_figures.attempt(PLAN_WRITE):
            assert not (h.root / f"out{i}.txt").exists(), line
            assert result["is_error"] and "plan mode" in result["content"], line


# ---- plan mode: no rule approves a plan; rename and an MCP-like tool are refused -------------


async def test_no_rule_approves_a_plan_and_plan_mode_refuses_rename(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    security_figures: SecurityFigures,
) -> None:
    server = FakeServer(tmp_path)
    settings = server.settings({"*": "allow", "exit_plan": "allow"})
    h = await make_harness(settings)
    (h.root / "app.py").write_text("def f():\n    return 1\n")
    app = (h.root / "app.py").as_uri()
    server.answer({"textDocument/rename": {"changes": {app: [text_edit(0, 4, 5, "g")]}}})
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(
            tool_use("rename", {"path": "app.py", "symbol": "f", "new_name": "g"}),
            tool_use("exit_plan", {"plan": "rename f"}),
        ),
        reply(text("waiting")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    await h.agent.prompt(session.id, "plan a rename")
    renamed, planned = results_of(h.accepted_requests()[2])
    with security_figures.attempt(PLAN_WRITE):
        assert renamed["is_error"] and "plan mode" in renamed["content"]
        assert (h.root / "app.py").read_text() == "def f():\n    return 1\n"
    with security_figures.attempt(PLAN_WRITE):
        # The plan was asked about (the question timed out): still planning.
        assert [q.tool for q in h.of_type("permission-request")] == ["exit_plan"]
        record = await h.store.get_session(session.id)
        assert record is not None and record.mode == "plan"
