"""Workspace folders: which folder holds a path, how a path is shown and read back, and how the
set follows the editor's changes (the first folder stays)."""

from __future__ import annotations

from pathlib import Path

from agentls.workspace.folders import Folders


def make(tmp_path: Path, *names: str) -> tuple[Folders, dict[str, Path]]:
    paths = {name: tmp_path / name for name in names}
    for path in paths.values():
        path.mkdir()
    return Folders.of([(name, path) for name, path in paths.items()]), paths


def test_one_folder_shows_paths_as_before(tmp_path: Path) -> None:
    folders, paths = make(tmp_path, "app")
    assert folders.relative(paths["app"] / "src" / "a.py") == "src/a.py"
    assert folders.relative(paths["app"]) == "."
    assert folders.join("app/x.py") == paths["app"] / "app" / "x.py"


def test_several_folders_name_each_path_by_its_folder(tmp_path: Path) -> None:
    folders, paths = make(tmp_path, "app", "lib")
    assert folders.relative(paths["lib"] / "util.py") == "lib/util.py"
    assert folders.relative(paths["app"] / "main.py") == "app/main.py"
    assert folders.join("lib/util.py") == paths["lib"] / "util.py"
    assert folders.join("lib") == paths["lib"]
    # A path naming no folder is read in the first one.
    assert folders.join("src/x.py") == paths["app"] / "src" / "x.py"
    assert folders.relative(tmp_path / "elsewhere") == str(tmp_path / "elsewhere")
    assert folders.is_outside(tmp_path / "elsewhere")


def test_the_innermost_folder_holds_a_nested_path(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    folders = Folders.of([("outer", outer), ("inner", inner)])
    assert folders.relative(inner / "a.py") == "inner/a.py"


def test_names_are_unique_and_path_safe(tmp_path: Path) -> None:
    a, b = tmp_path / "x" / "app", tmp_path / "y" / "app"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    folders = Folders.of([("app", a), ("app", b), ("bad/name", tmp_path / "x")])
    assert [f.name for f in folders.all] == ["app", "app-2", "x"]


def test_a_change_adds_and_removes_but_keeps_the_first(tmp_path: Path) -> None:
    folders, paths = make(tmp_path, "app", "lib", "extra")
    folders = Folders.of([("app", paths["app"]), ("lib", paths["lib"])])
    problems = folders.change([("extra", paths["extra"])], [paths["lib"], paths["app"]])
    assert [f.name for f in folders.all] == ["app", "extra"]
    assert "first workspace folder" in problems[0]
    assert folders.is_outside(paths["lib"] / "util.py")
