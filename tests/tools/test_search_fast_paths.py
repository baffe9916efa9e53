"""The fast paths of glob and grep give the answers of the slow ones: the rules read once for a
whole listing (PathFilter, a context's show_filter), rg's type filter on the file name, the walk
split between rg processes, rg's output read in blocks."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import agentls.tools.glob as glob_module
import agentls.tools.support.ripgrep as ripgrep
from agentls.permission.rules import PathFilter, PermissionRules, Rule, secret_globs
from agentls.tools.base import show_filter
from agentls.tools.glob import GlobTool, file_name_glob, newest_of
from agentls.tools.grep import GrepTool
from agentls.tools.support.ripgrep import run_rg, run_rg_lines, walk_parts
from tests.tools.conftest import ToolTestContext

glob = GlobTool()
grep = GrepTool()


class FilterContext(ToolTestContext):
    """ToolTestContext with a show_filter, as agentls.session.agent.CallContext has one."""

    def show_filter(self, base: Path) -> PathFilter | None:
        return self.rules.read_filter(self.root, base)


def put(root: Path, rel: str, text: str = "x\n", mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def both(tool: Any, root: Path, rules: PermissionRules | None = None, **raw: Any) -> str:
    """The tool's output through the fast context; asserts the per-file context agrees."""
    outputs = []
    for cls in (FilterContext, ToolTestContext):
        ctx = cls(root)
        if rules is not None:
            ctx.rules = rules
        ctx.open_outside = [Path(raw["path"]).resolve()] if "path" in raw else []
        outputs.append((await tool.run(tool.parse(raw), ctx)).output)
    assert outputs[0] == outputs[1]
    return outputs[0]


# ---- PathFilter: the same answers as PermissionRules.evaluate --------------------------------

NAMES = [
    "a.py",
    "src/a.py",
    ".env",
    "src/.env",
    ".env.local",
    "x/.env.local",
    ".envrc",
    "keys/id_rsa",
    "id_rsa.pub",
    "id_ed25519",
    "deep/a/b/server.pem",
    "deep/a/b/pem",
    "srv.key",
    "a.key.txt",
    "docs/readme.md",
    "docs/deep/readme.md",
    "private/x.txt",
    "privatex/y.txt",
    "db.secret",
    "config/credentials.json",
    "weird name [1].py",
    "a\nb.pem",  # a line break in a name: each name is then checked on its own
    "shared/a.py",
    "shared/b.pem",
    # letter case: the secret globs ignore it
    ".ENV",
    "src/.Env.Local",
    "deep/Server.PEM",
    "keys/ID_RSA",
    "keys/id_rsa.PUB",
    "x/.AWS/credentials",
    ".npmrc",
    "pkg/.NPMRC",
    "SERVICE-ACCOUNT-1.json",
    "İ.env",  # lower-casing lengthens it
    "İx/a.py",
    "**",
    "[a]",
    "./~",
]

CONFIGS: list[Any] = [
    None,
    {"read": "ask"},
    {"*": "allow"},
    {"*": "deny", "read": "allow"},
    [{"tool": "read", "pattern": "**/*.key", "action": "allow"}],
    [{"tool": "read", "pattern": "private", "action": "deny"}],
    [{"tool": "*", "pattern": "docs/*", "action": "deny"}],
    [{"tool": "read", "pattern": "*", "action": "deny"}],  # no plain part: every path checked
    [
        {"tool": "read", "pattern": "**", "action": "deny"},
        {"tool": "read", "pattern": "src/**", "action": "allow"},
    ],
    [{"tool": "read", "pattern": "~/shared", "action": "allow"}],
    [{"tool": "read", "pattern": "~/shared/*.pem", "action": "allow"}],
    [{"tool": "edit", "pattern": "**/*.py", "action": "deny"}],  # another tool's rule
]


def rule_sets(home: Path) -> list[PermissionRules]:
    sets = [PermissionRules.from_config(c) for c in CONFIGS]
    sets.append(
        PermissionRules.from_config(
            None, secret_patterns=secret_globs(["*.secret", "config/credentials.json"])
        )
    )
    # The session's "always" grants come last.
    sets.append(sets[0].extended([Rule(tool="read", pattern="src/.env", action="allow")]))
    # Literal "always" grants (grants.grant_for): one path each, glob-looking or not.
    sets.append(
        sets[0].extended(
            [
                Rule(tool="read", pattern=p, action="allow", exact=True)
                for p in ("**", "[a]", "./~", "pkg/.NPMRC", "src/.env")
            ]
        )
    )
    sets.append(
        PermissionRules.from_config({"read": "deny"}).extended(
            [Rule(tool="read", pattern="deep/Server.PEM", action="allow", exact=True)]
        )
    )
    sets.append(PermissionRules([]))
    return sets


@pytest.mark.parametrize("outside", [False, True])
def test_path_filter_answers_as_evaluate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: bool
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    prefixes = [f"{home}/", f"{home}/shared/", "/elsewhere/"] if outside else ["", "src/", "x/"]
    for rules in rule_sets(home):
        for prefix in prefixes:
            allowed = PathFilter(rules.rules, "read", prefix=prefix, outside_workspace=outside)
            expected = {
                n: rules.evaluate("read", prefix + n, outside_workspace=outside) == "allow"
                for n in NAMES
            }
            context = (rules.rules, prefix)
            assert {n: allowed(n) for n in NAMES} == expected, context
            shown = [n for n in NAMES if expected[n]]
            assert allowed.split(NAMES) == (shown, len(NAMES) - len(shown)), context
            for name in NAMES:
                assert allowed.split([name]) == (
                    [name] if expected[name] else [],
                    0 if expected[name] else 1,
                )
                if allowed.shows_all(name):
                    assert expected[name], (context, name)
            if allowed.shows_all("\n".join(NAMES)):
                assert all(expected.values()), context
            plain = [n for n in NAMES if expected[n] and "\n" not in n]
            assert allowed.split(plain) == (plain, 0)


def test_path_filter_tells_a_clean_listing_at_once() -> None:
    allowed = PermissionRules.from_config(None).path_filter("read")
    assert allowed.shows_all("src/a.py\nsrc/b.py\nREADME.md")
    assert not allowed.shows_all("src/a.py\nconf/.env\nREADME.md")
    assert not allowed.shows_all("src/a.py\nkeys/id_rsa")
    # A needle in the directory part only makes a candidate; the rules still show it.
    assert not allowed.shows_all("id_rsa_tools/a.py")
    assert allowed.split(["id_rsa_tools/a.py", "id_rsa_tools/id_rsa"]) == (
        ["id_rsa_tools/a.py"],
        1,
    )
    # No rule with a pattern: nothing to look for.
    assert (
        PermissionRules([Rule(tool="read", action="allow")])
        .path_filter("read")
        .shows_all("a\n.env")
    )
    assert not PermissionRules.from_config({"read": "ask"}).path_filter("read").shows_all("a.py")


def test_read_filter_reads_paths_as_may_show_does(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    rules = PermissionRules.from_config([{"tool": "read", "pattern": "/opt/x", "action": "allow"}])
    at_root = rules.read_filter(root, root)
    assert at_root is not None and at_root.prefix == ""
    inside = rules.read_filter(root, root / "src" / "deep")
    assert inside is not None and inside.prefix == "src/deep/"
    assert not inside("id_rsa") and inside("a.py")
    outside = rules.read_filter(root, Path("/opt/x"))
    assert outside is not None and outside.prefix == "/opt/x/"
    # (a rule naming a directory opens the secrets in it: see PermissionRules.from_config)
    assert outside("a.py") and outside("b.pem")
    elsewhere = rules.read_filter(root, Path("/opt/y"))
    assert elsewhere is not None and not elsewhere("a.py")
    # A directory holding the root has files inside and outside: no filter (may_show a file).
    assert rules.read_filter(root, tmp_path) is None
    assert rules.read_filter(root, Path("/")) is None


async def test_show_filter_falls_back_to_may_show(tmp_path: Path) -> None:
    ctx = ToolTestContext(tmp_path)  # no show_filter of its own
    each = show_filter(ctx, tmp_path / "src")
    assert each("a.py") and not each("conf/.env")
    assert each.split(["a.py", "conf/.env", "b.py"]) == (["a.py", "b.py"], 1)
    assert not each.shows_all("a.py")
    fast = show_filter(FilterContext(tmp_path), tmp_path / "src")
    assert isinstance(fast, PathFilter) and fast.prefix == "src/"


# ---- glob and grep with the fast filter --------------------------------------------------------


async def test_deep_secrets_stay_hidden(tmp_path: Path) -> None:
    put(tmp_path, "pkg/a/b/c/server.pem", mtime=1_000_000)
    put(tmp_path, "pkg/a/b/c/id_rsa", mtime=1_000_001)
    put(tmp_path, "pkg/a/b/c/ok.py", mtime=1_000_002)
    put(tmp_path, "top.py", mtime=1_000_003)
    everything = await both(glob, tmp_path, pattern="**/*")
    assert everything.splitlines()[:2] == ["top.py", "pkg/a/b/c/ok.py"]
    assert "2 files that may hold secrets" in everything
    assert "server.pem" not in everything and "id_rsa" not in everything
    pems = await both(glob, tmp_path, pattern="**/*.pem")  # rg's type filter, exact
    assert pems.startswith("No files found") and "1 file that may hold secrets" in pems
    under = await both(glob, tmp_path, pattern="*", path=str(tmp_path / "pkg" / "a"))
    assert under.splitlines()[0] == "pkg/a/b/c/ok.py" and "2 files that" in under
    put(tmp_path, "pkg/a/b/c/notes.txt", "secret: TOKEN\n")
    put(tmp_path, "pkg/a/b/c/server.pem", "TOKEN\n")
    found = await both(grep, tmp_path, pattern="TOKEN")
    assert "notes.txt" in found and "server.pem" not in found
    assert "1 file that may hold secrets" in found
    single = await both(
        grep, tmp_path, pattern="TOKEN", path=str(tmp_path / "pkg/a/b/c/server.pem")
    )
    assert single.startswith("No matches") and "1 file that may hold secrets" in single


async def test_an_allow_rule_shows_a_secret(tmp_path: Path) -> None:
    put(tmp_path, "deploy/server.pem", "TOKEN\n")
    put(tmp_path, "deploy/id_rsa", "TOKEN\n")
    put(tmp_path, "app.py", "TOKEN\n")
    rules = PermissionRules.from_config(
        [{"tool": "read", "pattern": "deploy/*.pem", "action": "allow"}]
    )
    listed = await both(glob, tmp_path, rules, pattern="**/*")
    assert "deploy/server.pem" in listed and "deploy/id_rsa" not in listed
    assert "1 file that may hold secrets" in listed
    found = await both(grep, tmp_path, rules, pattern="TOKEN")
    assert "deploy/server.pem" in found and "deploy/id_rsa" not in found
    # A pattern that denies a directory hides all of it; "read": "ask" shows nothing.
    denied = PermissionRules.from_config([{"tool": "read", "pattern": "deploy", "action": "deny"}])
    listed = await both(glob, tmp_path, denied, pattern="**/*")
    assert listed.splitlines()[0] == "app.py" and "deploy" not in listed.split("(")[0]
    asking = PermissionRules.from_config({"read": "ask"})
    assert (await both(glob, tmp_path, asking, pattern="**/*")).startswith("No files found")


async def test_home_rules_outside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    put(workspace, "a.py")
    shared = home / "shared"
    put(shared, "lib/a.py", "TOKEN\n", mtime=2_000_000)
    put(shared, "lib/b.pem", "TOKEN\n", mtime=2_000_001)
    rules = PermissionRules.from_config(
        [{"tool": "read", "pattern": "~/shared/lib/*.py", "action": "allow"}]
    )
    listed = await both(glob, workspace, rules, pattern="**/*", path=str(shared))
    assert listed.splitlines()[0] == f"{shared}/lib/a.py"
    assert "b.pem" not in listed and "1 file that may hold secrets" in listed
    found = await both(grep, workspace, rules, pattern="TOKEN", path=str(shared))
    assert f"{shared}/lib/a.py" in found and "b.pem" not in found
    # A rule naming the directory opens all of it, the secrets in it too.
    opened = PermissionRules.from_config(
        [{"tool": "read", "pattern": "~/shared", "action": "allow"}]
    )
    listed = await both(glob, workspace, opened, pattern="**/*", path=str(shared))
    assert listed.splitlines() == [f"{shared}/lib/b.pem", f"{shared}/lib/a.py"]
    # Without a rule naming it, nothing outside may be shown.
    nothing = await both(
        glob, workspace, PermissionRules.from_config(None), pattern="**/*", path=str(shared)
    )
    assert nothing.startswith("No files found") and "2 files" in nothing


# ---- rg's type filter on the file name ---------------------------------------------------------


def test_file_name_glob() -> None:
    assert file_name_glob("*.py") == ("*.py", True)
    assert file_name_glob("**/test_*.py") == ("test_*.py", True)
    assert file_name_glob("./*.{ts,tsx}") == ("*.{ts,tsx}", True)
    assert file_name_glob("src/**/*.py") == ("*.py", False)
    assert file_name_glob("/setup.py") == ("setup.py", False)
    assert file_name_glob("{src,lib}/*.py") == ("*.py", False)
    for unsafe in (
        "*",
        "src/",
        "**",
        "src/**",
        "?.py",  # rg: one byte; the tool: one character
        "f[0-9].py",
        "a\\*.py",
        "x:y.py",
        "!a.py",
        "*.{py,{a,b}}",
        "*.{,py}",
        "*.{py,}",
        "*.{py",
        "*.py}",
        "{a/b,c}.py",  # the last "/" is inside braces
        "src/**.py",
    ):
        assert file_name_glob(unsafe) is None, unsafe


async def test_type_filter_keeps_hidden_and_ignored_files_out(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("ignored/\nskip.py\n")
    for rel in (
        "a.py",
        ".h.py",
        "sub/.x.py",
        "sub/b.py",
        ".hid/c.py",
        "ignored/d.py",
        "skip.py",
        "é.py",
        "q.py",
    ):
        put(tmp_path, rel, mtime=3_000_000)
    assert sorted((await both(glob, tmp_path, pattern="**/*.py")).splitlines()) == [
        "a.py",
        "q.py",
        "sub/b.py",
        "é.py",
    ]
    assert sorted((await both(glob, tmp_path, pattern="*.py")).splitlines()) == sorted(
        (await both(glob, tmp_path, pattern="**/*")).splitlines()
    )
    assert sorted((await both(glob, tmp_path, pattern=".*.py")).splitlines()) == [
        ".h.py",
        "sub/.x.py",
    ]
    assert sorted((await both(glob, tmp_path, pattern="?.py")).splitlines()) == [
        "a.py",
        "q.py",
        "sub/b.py",
        "é.py",
    ]
    assert (await both(glob, tmp_path, pattern="sub/*.py")).splitlines() == ["sub/b.py"]


# ---- the walk split between rg processes --------------------------------------------------------


def tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    for i, rel in enumerate(
        (
            "top.py",
            "debug.log",
            "build/gen.py",
            ".hidden/h.py",
            "src/a.py",
            "src/deep/b.py",
            "src/build/c.py",
            "lib/d.py",
            "lib/src/e.py",
            "tests/test_f.py",
            "x{y}/g.py",
            "a*b/h.py",
            "[z]/i.py",
            "!bang/j.py",
            "#hash/k.py",
            "docs/server.pem",
            "docs/l.md",
        )
    ):
        put(root, rel, mtime=4_000_000 + 7 * i % 17)


@pytest.mark.parametrize(("cores", "free"), [(2, 2), (2, 1), (3, 3), (4, 2), (8, 8)])
async def test_parts_split_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int, free: int
) -> None:
    tree(tmp_path)
    monkeypatch.setattr(ripgrep, "_cores", lambda: cores)
    monkeypatch.setattr(ripgrep, "_free_cores", lambda: free)  # parts run so many at once
    parts = walk_parts(tmp_path, hidden=False)
    assert len(parts) == min(cores, 4)

    async def files(extra: list[str]) -> list[str]:
        lines: list[bytes] = []
        await run_rg_lines(
            [*ripgrep.RG_BASE_FLAGS, "--files", *extra], tmp_path, lambda b: lines.extend(b) or True
        )
        return [line.decode() for line in lines]

    whole = sorted(await files([]))
    split = [await files(part) for part in parts]
    assert sorted(f for part in split for f in part) == whole  # each file in exactly one part
    assert "build/gen.py" not in whole and "src/build/c.py" not in whole
    outputs = []
    for pattern in ("**/*", "**/*.py", "src/**/*.py", "*.md", "**/*.pem"):
        outputs.append(await both(glob, tmp_path, pattern=pattern))
    monkeypatch.setattr(glob_module, "walk_parts", lambda base, hidden: [[]])
    for pattern, output in zip(
        ("**/*", "**/*.py", "src/**/*.py", "*.md", "**/*.pem"), outputs, strict=True
    ):
        assert (await both(glob, tmp_path, pattern=pattern)) == output


def test_walk_parts_only_when_it_can(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "_cores", lambda: 2)
    put(tmp_path, "one/a.py")
    put(tmp_path, "b.py")
    assert walk_parts(tmp_path, hidden=False) == [[]]  # one directory to share
    put(tmp_path, ".two/a.py")
    assert walk_parts(tmp_path, hidden=False) == [[]]  # hidden, not walked
    assert len(walk_parts(tmp_path, hidden=True)) == 2
    put(tmp_path, "three /a.py")  # a glob cannot spell a name ending in a space
    assert walk_parts(tmp_path, hidden=True) == [[]]
    assert walk_parts(tmp_path / "missing", hidden=True) == [[]]
    monkeypatch.setattr(ripgrep, "_cores", lambda: 1)
    put(tmp_path, "four/a.py")
    assert walk_parts(tmp_path, hidden=False) == [[]]


def test_newest_of_merges_lists_newest_first(tmp_path: Path) -> None:
    for i in range(10):
        put(tmp_path, f"f{i}", mtime=5_000_000 + i)
    first = ["f9", "f6", "f4", "f1"]
    second = ["f8", "f7", "f5", "f3", "f2", "f0", "gone"]
    assert newest_of(tmp_path, [first, second], 100) == [f"f{i}" for i in range(9, -1, -1)] + [
        "gone"
    ]
    assert newest_of(tmp_path, [first, second], 3) == ["f9", "f8", "f7"]
    assert newest_of(tmp_path, [first, ["f9", "f8"]], 3) == ["f9", "f8", "f6"]


async def test_glob_count_and_limit_across_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "_cores", lambda: 4)
    for i in range(130):
        put(tmp_path, f"d{i % 5}/f{i:03}.txt", mtime=6_000_000 + i)
    put(tmp_path, "d1/.env")
    put(tmp_path, "d2/x.key")
    result = await both(glob, tmp_path, pattern="**/*")
    lines = result.splitlines()
    assert lines[0] == "d4/f129.txt" and lines[99] == "d0/f030.txt"
    assert "130 files" in result and "30 more" in result
    assert "1 file that may hold secrets" in result  # x.key (.env is hidden: not listed at all)


# ---- rg's output read in blocks -------------------------------------------------------------------


def fake_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: bytes) -> None:
    script = tmp_path / "fake-rg"
    (tmp_path / "out").write_bytes(output)
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"sys.stdout.buffer.write(open({str(tmp_path / 'out')!r}, 'rb').read())\n"
    )
    script.chmod(0o755)
    monkeypatch.setattr(ripgrep, "rg_binary", lambda: str(script))


async def test_lines_long_and_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = b"x" * (ripgrep._RG_LINE_LIMIT + 10)
    fake_rg(tmp_path, monkeypatch, b"a\n" + long + b"\nb\n" + b"y" * 300_000 + b"\nlast")
    seen: list[bytes] = []
    result = await run_rg([], tmp_path, lambda line: seen.append(line) or True)
    assert seen == [b"a\n", b"b\n", b"y" * 300_000 + b"\n", b"last"]
    assert result.returncode == 0 and not result.stopped_early
    blocks: list[list[bytes]] = []
    await run_rg_lines([], tmp_path, lambda lines: blocks.append(lines) or True)
    assert [line for block in blocks for line in block] == [b"a", b"b", b"y" * 300_000, b"last"]
    fake_rg(tmp_path, monkeypatch, long + b"\n" + long)  # nothing but lines over the limit
    seen.clear()
    await run_rg([], tmp_path, lambda line: seen.append(line) or True)
    assert seen == []


async def test_stop_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_rg(tmp_path, monkeypatch, b"".join(b"line %d\n" % i for i in range(200_000)))
    seen: list[bytes] = []
    result = await run_rg([], tmp_path, lambda line: seen.append(line) or len(seen) < 3)
    assert seen == [b"line 0\n", b"line 1\n", b"line 2\n"] and result.stopped_early


@pytest.mark.parametrize(("cores", "free"), [(2, 2), (3, 3), (3, 1)])
async def test_grep_parts_read_as_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int, free: int
) -> None:
    import agentls.tools.grep as grep_module

    tree(tmp_path)
    hits = "".join(f"hit {i}\n" for i in range(4000))
    put(tmp_path, "b/x.txt", hits)
    put(tmp_path, "c/server.pem", hits)  # left out (a secret) before the count is reached
    put(tmp_path, "d/y.txt", hits)
    put(tmp_path, "e/z.txt", hits)
    put(tmp_path, "f/late.key", hits)  # after it: never seen
    put(tmp_path, "a.txt", "hit top\n")
    put(tmp_path, "g/bin.dat", "hit\0binary\n")
    put(tmp_path, "src/few.py", "hit = 1\n")
    monkeypatch.setattr(ripgrep, "_cores", lambda: cores)
    monkeypatch.setattr(ripgrep, "_free_cores", lambda: free)
    queries: list[dict[str, str]] = [
        {"pattern": "hit"},
        {"pattern": "hit (1|2)\\d\\d\\d$"},
        {"pattern": "hit", "include": "*.py"},
        {"pattern": "hit", "include": "src/**"},
        {"pattern": "x = 1|hit = 1"},
        {"pattern": "nothing such"},
    ]
    split = [await both(grep, tmp_path, **q) for q in queries]
    assert "at least 10000 matching lines" in split[0]
    assert "1 file that may hold secrets" in split[0] and "late.key" not in split[0]
    monkeypatch.setattr(grep_module, "walk_parts", lambda base, hidden: [[]])
    assert [await both(grep, tmp_path, **q) for q in queries] == split


async def test_parts_fail_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.tools.base import ToolError

    tree(tmp_path)
    monkeypatch.setattr(ripgrep, "_cores", lambda: 2)
    assert len(walk_parts(tmp_path, hidden=False)) == 2

    def missing() -> str:
        raise ToolError("ripgrep (rg) is not installed")

    monkeypatch.setattr(ripgrep, "rg_binary", missing)
    for tool, raw in ((glob, {"pattern": "**/*"}), (grep, {"pattern": "x"})):
        with pytest.raises(ToolError, match="not installed"):
            await tool.run(tool.parse(raw), FilterContext(tmp_path))


def test_free_cores_never_below_one() -> None:
    assert 1 <= ripgrep._free_cores() <= ripgrep._cores()
