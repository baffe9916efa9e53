"""What plan mode lets bash run: lines that only read (permission/bash_readonly.py)."""

from __future__ import annotations

import pytest

from agentls.permission.bash_readonly import is_read_only


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "cat a.py | grep -n def | head -5",
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1 -- src",
        "git branch",
        "rg TODO src",
        "find . -name '*.py'",
        "cd src && ls",
        "wc -l $(ls)",  # the substitution is read too: ls
        "cat x > /dev/null",
        "sed -n 1,10p a.py",
    ],
)
def test_reads(line: str) -> None:
    assert is_read_only(line)


@pytest.mark.parametrize(
    "line",
    [
        "touch x",
        "rm -rf build",
        "echo hi > f.txt",
        "cat a | tee b",
        "sed -i s/a/b/ f",
        "sort -o out in",
        "find . -delete",
        "find . -exec rm {} ;",
        "git commit -m x",
        "git branch new-feature",
        "git -c core.pager=sh log",
        "git log --output=f",
        "python -c 'print(1)'",
        "npm test",
        "$TOOL a.txt",  # the command is not known
        'eval "$X"',
        "./ls",  # a file of the workspace named ls
        "ls; make",
        "env PATH=/tmp ls",
        "",
    ],
)
def test_does_not_read_only(line: str) -> None:
    assert not is_read_only(line)
