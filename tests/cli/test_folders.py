"""`agentls run --folder A --folder B`: a workspace of two folders at the terminal. The second is
as much inside as the first (read and edited with the answers the first would get, its files
named by folder, its AGENTS.md in the prompt, its own config's rules for its paths); a folder
that is not a directory is a usage error naming the option."""

from __future__ import annotations

import json
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls


def two_folders(tmp_path: Path) -> tuple[Path, Path]:
    app, lib = tmp_path / "app", tmp_path / "lib"
    app.mkdir()
    lib.mkdir()
    (app / "main.py").write_text("import util\n")
    (lib / "util.py").write_text("VALUE = 1\n")
    (lib / "AGENTS.md").write_text("Library rule: no imports in util.py.\n")
    return app, lib


def test_run_edits_a_file_in_the_second_folder(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    app, lib = two_folders(tmp_path)
    api.enqueue(
        reply(tool_use("read", {"path": "lib/util.py"})),
        reply(tool_use("edit", {"path": "lib/util.py", "old_string": "1", "new_string": "2"})),
        reply(tool_use("glob", {"pattern": "*.py"})),
        reply(tool_use("grep", {"pattern": "import|VALUE"})),
        reply(tool_use("list", {})),
        reply(text("done")),
    )
    proc = agentls("run", "--folder", str(app), "--folder", str(lib), "--yes", "go", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (lib / "util.py").read_text() == "VALUE = 2\n"
    system = json.dumps(api.requests[0].body["system"])
    assert "Library rule: no imports in util.py." in system
    # glob, grep and list without a path: every folder, each file named by its folder.
    for request in api.requests[-3:-1]:
        found = json.dumps(request.body["messages"][-1]["content"])
        assert "app/main.py" in found and "lib/util.py" in found, found
    listed = api.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert listed.startswith("app/\n  main.py") and "lib/\n  AGENTS.md\n  util.py" in listed


def test_the_second_folders_config_rules_its_paths(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    app, lib = two_folders(tmp_path)
    (lib / ".agentls").mkdir()
    # Only tightens (an untrusted config's deny rules still count): util.py may not be edited.
    (lib / ".agentls" / "config.json").write_text(
        json.dumps({"permissions": {"edit": {"util.py": "deny"}}})
    )
    (app / "util.py").write_text("VALUE = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "lib/util.py"}), tool_use("read", {"path": "app/util.py"})),
        reply(tool_use("edit", {"path": "lib/util.py", "old_string": "1", "new_string": "2"})),
        reply(tool_use("edit", {"path": "app/util.py", "old_string": "1", "new_string": "2"})),
        reply(text("done")),
    )
    proc = agentls("run", "--folder", str(app), "--folder", str(lib), "--yes", "go", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (lib / "util.py").read_text() == "VALUE = 1\n"
    assert (app / "util.py").read_text() == "VALUE = 2\n"
    refused = json.dumps(api.requests[2].body["messages"][-1]["content"])
    assert "Permission denied" in refused


def test_a_folder_that_is_not_a_directory_is_a_usage_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    app, _ = two_folders(tmp_path)
    proc = agentls("run", "--folder", str(app), "--folder", str(tmp_path / "nope"), "x", env=env)
    assert proc.returncode == 2
    assert "--folder" in proc.stderr and "not a directory" in proc.stderr
