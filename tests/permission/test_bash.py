"""bash.analyze: the commands a line can run, normalised, the files it writes, and its problems."""

from __future__ import annotations

import pytest

from agentls.permission.bash import analyze


@pytest.mark.parametrize(
    ("line", "texts"),
    [
        ("ls -la", ["ls -la"]),
        ("/bin/rm -rf 'a b'", ["rm -rf a b"]),
        ("\\rm x; r''m y", ["rm x", "rm y"]),
        ("$'\\x72m' x", ["rm x"]),
        ("nice -n 5 timeout -s KILL 5 stdbuf -oL ls", ["ls"]),
        ("sudo -u bob make test", ["sudo -u bob make test", "make test"]),
        ("echo a | xargs -0 -I{} cp {} b", ["echo a", "xargs -0 -I{} cp {} b", "cp {} b"]),
        ("bash -c 'git status && ls'", ["bash -c git status && ls", "git status", "ls"]),
        ("find . -name x -exec rm {} +", ["find . -name x -exec rm {} +", "rm {}"]),
    ],
)
def test_commands_are_normalised_and_seen_through(line: str, texts: list[str]) -> None:
    analysis = analyze(line)
    assert sorted(c.text for c in analysis.commands) == sorted(texts)
    assert analysis.problems == ()


def test_wrappers_and_paths_are_kept() -> None:
    (command,) = analyze("nohup /usr/bin/ls").commands
    assert command.argv == ("ls",) and command.wrappers == ("nohup",)
    assert command.path == "/usr/bin/ls" and command.literal


def test_writes() -> None:
    analysis = analyze("ls > a 2>&1 >> b &> c 2>/dev/null | tee -a d -- -e; ls > $x")
    assert analysis.writes == ("a", "b", "c", "d", "-e", None)


@pytest.mark.parametrize(
    "line", ["{r,}m", "ls\0", "PATH=. ls", "echo x | bash", 'bash -c "$x"', "cat <<E\n`id`\nE"]
)
def test_problems(line: str) -> None:
    assert analyze(line).problems


def test_non_literal_names() -> None:
    assert [c.literal for c in analyze("$x; r?; rｍ; ls").commands] == [False, False, False, True]
