"""Helpers shared by the tools: text lines, diffs, file-size thresholds, ripgrep, process groups."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
import shutil
import signal
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from agentls.tools.base import (
    PermissionQuery,
    ShowFilter,
    ToolContext,
    ToolError,
    ToolInput,
)
from agentls.workspace.protocol import EditOutcome

# Files bigger than this are paged straight from disk by `read` (never loaded whole); write and
# edit cannot verify such files against the ledger (read records only the page it showed).
LARGE_FILE_BYTES = 4 * 1024 * 1024

# edit and write refuse files bigger than this: a change holds the old and the new text, their
# diff and their bytes at once (about four times the file), and a model has no business rewriting
# such a file through a tool call anyway.
MAX_EDIT_BYTES = 32 * 1024 * 1024

# Diffs of texts bigger than this (after trimming the common head and tail) are summarised.
_DIFF_MAX_LINES = 5000


InputT = TypeVar("InputT", bound=ToolInput)


def expect_input(params: object, model: type[InputT]) -> InputT:
    """The tool's own input model (what Tool.parse returns); a raw dict is validated."""
    if isinstance(params, model):
        return params
    if isinstance(params, dict):
        return model.model_validate(params)
    raise TypeError(f"expected {model.__name__}, got {type(params).__name__}")


def input_dict(params: Any) -> dict[str, Any]:
    """The call's input as a plain dict (for PermissionQuery.input)."""
    dumped: dict[str, Any] = params.model_dump(exclude_none=True)
    return dumped


def split_lines(text: str) -> list[str]:
    """Lines split on "\\n" only (never on \\f, \\u2028, ...), line ends kept."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def display_lines(text: str) -> list[str]:
    """Lines without their terminators (\\n or \\r\\n), as a person reads them."""
    return [line.rstrip("\n").removesuffix("\r") for line in split_lines(text)]


def uses_crlf(text: str) -> bool:
    """Whether the text's line breaks are (mostly) CRLF."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")


def to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover


def number_lines(lines: Sequence[str], first: int) -> str:
    """`cat -n` style: right-aligned line number, a tab, the line."""
    width = max(6, len(str(first + len(lines) - 1)))
    return "\n".join(f"{first + i:>{width}}\t{line}" for i, line in enumerate(lines))


# ---- diffs ---------------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def unified_diff(old: str | None, new: str, rel: str) -> str:
    """A unified diff with a/ b/ headers. Only the region between the common head and tail is
    compared, so edits of large files stay cheap; a huge changed region is summarised."""
    name = rel.lstrip("/")
    a = split_lines(old or "")
    b = split_lines(new)
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    if head == len(a) == len(b):
        return ""
    start = max(0, head - 3)
    a_mid = a[start : len(a) - max(0, tail - 3)]
    b_mid = b[start : len(b) - max(0, tail - 3)]
    header = f"--- a/{name}\n+++ b/{name}\n"
    if len(a_mid) > _DIFF_MAX_LINES or len(b_mid) > _DIFF_MAX_LINES:
        return header + (
            f"@@ -{start + 1},{len(a_mid)} +{start + 1},{len(b_mid)} @@\n"
            f"(diff of {len(a_mid)} -> {len(b_mid)} changed lines omitted: too large to show)\n"
        )
    out: list[str] = []
    for line in difflib.unified_diff(a_mid, b_mid, n=3, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        match = _HUNK.match(line)
        if match:
            old_start = int(match.group(1)) + start
            new_start = int(match.group(3)) + start
            line = f"@@ -{old_start}{match.group(2) or ''} +{new_start}{match.group(4) or ''} @@"
            out.append(line + "\n")
            continue
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return header + "".join(out)


# ---- ripgrep -------------------------------------------------------------------------------


_found_rg: list[str] = []  # the last binary found, checked again at each use


def rg_binary() -> str:
    """The ripgrep binary: the one the `ripgrep` wheel put next to this Python, else PATH."""
    if _found_rg and os.access(_found_rg[0], os.X_OK):
        return _found_rg[0]
    _found_rg.clear()
    candidates = [Path(sys.executable).parent / "rg"]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / "rg")
    found = next((str(c) for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    found = found or shutil.which("rg")
    if not found:
        raise ToolError("ripgrep (rg) is not installed, so this tool cannot run. Use bash instead.")
    _found_rg.append(found)
    return found


# Flags every rg call shares: no user config, .gitignore honoured even outside a git repository.
RG_BASE_FLAGS = ("--no-config", "--no-require-git", "--color", "never")


@dataclass
class RgResult:
    returncode: int
    stderr: str
    stopped_early: bool  # on_line asked to stop; rg was killed


async def _drain(stream: asyncio.StreamReader, keep: int) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(64 * 1024):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return bytes(kept)


# Output lines longer than this (without the line break) are dropped.
_RG_LINE_LIMIT = 1024 * 1024
_RG_READ = 256 * 1024


async def run_rg(args: Sequence[str], cwd: Path, on_line: Callable[[bytes], bool]) -> RgResult:
    """Run rg, handing each stdout line (with its line break) to on_line (False: seen enough,
    kill rg). rg is killed when we are cancelled."""

    def each(block: bytes, ended: bool) -> bool:
        for line in block.split(b"\n"):
            if not on_line(line + b"\n" if ended else line):
                return False
        return True

    return await _run_rg(args, cwd, each)


async def run_rg_lines(
    args: Sequence[str], cwd: Path, on_lines: Callable[[list[bytes]], bool]
) -> RgResult:
    """run_rg for many lines: on_lines gets them (without their line breaks) a read at a time."""
    return await _run_rg(args, cwd, lambda block, _ended: on_lines(block.split(b"\n")))


async def run_rg_blocks(
    args: Sequence[str], cwd: Path, on_block: Callable[[bytes], bool]
) -> RgResult:
    """run_rg for many lines: on_block gets them a read at a time, as one bytes object (the lines
    joined by line breaks, no break at its end)."""
    return await _run_rg(args, cwd, lambda block, _ended: on_block(block))


async def _run_rg(
    args: Sequence[str], cwd: Path, on_block: Callable[[bytes, bool], bool]
) -> RgResult:
    """on_block(block, ended): whole lines joined by line breaks, without one at the end (ended
    True), or at the very end a last line that has none (ended False). False: stop rg."""
    proc = await asyncio.create_subprocess_exec(
        rg_binary(),
        *args,
        cwd=str(cwd),
        # Like bash: no API credentials in any child process.
        env={k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_RG_LINE_LIMIT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err_task = asyncio.ensure_future(_drain(proc.stderr, 16 * 1024))
    stopped = False
    try:
        pending = b""  # the start of a line whose end has not come yet
        dropping = False  # in a line over the limit: skip to its end
        while True:
            chunk = await proc.stdout.read(_RG_READ)
            if not chunk:
                if pending and not dropping and not on_block(pending, False):
                    stopped = True
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                if not dropping:
                    pending += chunk
                    if len(pending) > _RG_LINE_LIMIT:
                        pending, dropping = b"", True
                continue
            block = pending + chunk[:cut] if pending else chunk[:cut]
            pending = chunk[cut + 1 :]
            # Only the first line can be longer than a read: it goes when it is over the
            # limit, or the end of one that was.
            first_end = block.find(b"\n")
            if dropping or (len(block) if first_end < 0 else first_end) > _RG_LINE_LIMIT:
                dropping = False
                if first_end < 0:
                    continue
                block = block[first_end + 1 :]
            if not on_block(block, True):
                stopped = True
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                # Drain what is left so the pipe reaches EOF (wait() needs it closed).
                while await proc.stdout.read(_RG_READ):
                    pass
                break
        returncode = await proc.wait()
        stderr = await err_task
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        err_task.cancel()
        raise
    return RgResult(returncode, stderr.decode("utf-8", "replace").strip(), stopped)


async def run_rg_parts(
    arg_lists: Sequence[Sequence[str]],
    cwd: Path,
    handlers: Sequence[Callable[[bytes], bool]],
) -> RgResult:
    """run_rg_blocks for rg processes run side by side (see walk_parts), a handler each; one
    result for all: the worst return code, their errors, stopped if one was."""
    if len(arg_lists) == 1:
        return await run_rg_blocks(arg_lists[0], cwd, handlers[0])
    # On a busy machine more processes than free cores only take turns: the parts wait for one.
    room = asyncio.Semaphore(_free_cores())

    async def part(args: Sequence[str], handler: Callable[[bytes], bool]) -> RgResult:
        async with room:
            return await run_rg_blocks(args, cwd, handler)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(part(args, handler))
                for args, handler in zip(arg_lists, handlers, strict=True)
            ]
    except BaseExceptionGroup as failed:  # the others were cancelled, their rg killed
        raise failed.exceptions[0] from None
    results = [t.result() for t in tasks]
    codes = [r.returncode for r in results]
    errors = dict.fromkeys(line for r in results for line in r.stderr.splitlines() if line)
    return RgResult(
        2 if 2 in codes else min(codes),
        "\n".join(errors),
        any(r.stopped_early for r in results),
    )


# Not more rg processes than this for one walk (walk_parts).
_MAX_PARTS = 4
# Top-level entries past this: one process (as many exclusions in each).
_MAX_PART_ENTRIES = 256


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _free_cores() -> int:
    """The cores no other task is running on now: _cores() less the tasks runnable this instant
    but this one (/proc/loadavg); all of them when that cannot be read."""
    cores = _cores()
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return cores
    return max(1, cores - max(0, running - 1))


def _glob_literal(name: str) -> str:
    return "".join("\\" + c if c in "\\*?[]{}" else c for c in name)


def names_hidden(pattern: str) -> bool:
    """Whether the pattern spells out a dotfile or dot-directory (`.env`, `.github/**`)."""
    for segment in pattern.replace("\\", "/").split("/"):
        if segment.startswith(".") and segment not in (".", ".."):
            return True
        if segment.startswith("{") and any(
            p.startswith(".") for p in segment.strip("{}").split(",")
        ):
            return True
    return False


def walk_parts(base: Path, *, hidden: bool) -> list[list[str]]:
    """rg arguments that split one walk of directory `base` into parts, an rg process each, run
    side by side (rg walks on one thread when it sorts its output): one per core, 4 at most.
    Always as many, so that the order of a listing among files of the same time stays the same
    from one call to the next (run_rg_parts runs no more at once than there are free cores).
    Each part walks a range of the top-level entries in name order, the others left out by
    exclusion globs (`--glob !/name`: unlike rg's include globs, exclusions leave .gitignore in
    force), so that the outputs of `--sort path` parts, one after the other, are the whole
    walk's. [[]] (one part, the whole walk) with one core, fewer than two directories to share,
    or a name a glob could not spell exactly."""
    count = min(_cores(), _MAX_PARTS)
    if count < 2:
        return [[]]
    try:
        with os.scandir(base) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError:
        return [[]]
    if len(entries) > _MAX_PART_ENTRIES:
        return [[]]
    # Whitespace at either end (a glob line would lose it), control characters, undecodable bytes.
    if any(name != name.strip() or not name.isprintable() for name, _ in entries):
        return [[]]
    shared = [n for n, is_dir in entries if is_dir and (hidden or not n.startswith("."))]
    if len(shared) < 2:
        return [[]]
    count = min(count, len(shared))
    # Ranges of the names in order (rg --sort path walks them so: the parts' outputs one after
    # the other are the whole walk's), about as many directories to share in each.
    shared_set = set(shared)
    part_of: dict[str, int] = {}
    seen = current = 0
    names = sorted(n for n, _ in entries)
    for name in names:
        if name in shared_set:
            current = seen * count // len(shared)
            seen += 1
        part_of[name] = current
    return [
        [arg for n in names if part_of[n] != i for arg in ("--glob", "!/" + _glob_literal(n))]
        for i in range(count)
    ]


# ---- what searches may show ----------------------------------------------------------------


class _EachPath:
    """show_filter for a context without one of its own: may_show for each file."""

    def __init__(self, ctx: ToolContext, base: Path) -> None:
        self._ctx = ctx
        self._base = base

    def __call__(self, name: str) -> bool:
        return self._ctx.may_show(self._base / name)

    def split(self, names: Sequence[str]) -> tuple[list[str], int]:
        shown = [n for n in names if self(n)]
        return shown, len(names) - len(shown)

    def shows_all(self, listing: str) -> bool:
        return False


def show_filter(ctx: ToolContext, base: Path) -> ShowFilter:
    """ctx.may_show for the files under directory `base`, by paths relative to it: the context's
    own show_filter when it has one (one rule check for a whole listing), else may_show a file."""
    make = getattr(ctx, "show_filter", None)
    made = make(base) if callable(make) else None
    return cast(ShowFilter, made) if made is not None else _EachPath(ctx, base)


# ---- process groups ------------------------------------------------------------------------


def _group_members_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies don't count)."""
    proc_dir = Path("/proc")
    if proc_dir.is_dir():
        try:
            entries = os.listdir(proc_dir)
        except OSError:
            entries = []
        if entries:
            for entry in entries:
                if not entry.isdigit():
                    continue
                try:
                    stat = (proc_dir / entry / "stat").read_text()
                except OSError:
                    continue
                # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
                fields = stat[stat.rfind(")") + 2 :].split()
                if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                    return True
            return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def kill_process_group(pgid: int, grace: float) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is still running after `grace` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    gone = False
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline:
            if not _group_members_alive(pgid):
                gone = True
                break
            await asyncio.sleep(0.05)
    finally:
        # Also reached when we are cancelled while waiting: never leave the group behind.
        # (Not once it is gone: the id could in principle be reused by then.)
        if not gone:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)


# ---- write/edit shared ---------------------------------------------------------------------


def check_new_size(text: str, rel: str) -> None:
    """Refuse a new text over MAX_EDIT_BYTES, the limit a changed file has: write and edit create
    no file they could not change afterwards."""
    # A character is at most 4 bytes of UTF-8: most texts are told apart without encoding them.
    if len(text) * 4 <= MAX_EDIT_BYTES:
        return
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"The new text of {rel} would be {human_size(size)}, over this tool's limit of "
            f"{human_size(MAX_EDIT_BYTES)}; nothing was written. Write a file that big with bash "
            "(a script that generates it), or split it into smaller files."
        )


async def current_text(ctx: ToolContext, path: Path, rel: str) -> str | None:
    """The file's current text as the workspace sees it, or None when it does not exist."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"{rel} is {human_size(size)}, too large to change with this tool (the limit is "
            f"{human_size(MAX_EDIT_BYTES)}). Use bash (sed, a script) for a targeted change."
        )
    try:
        return await ctx.workspace.read_text(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory, not a file.") from None
    except UnicodeDecodeError:
        raise ToolError(
            f"{rel} is a binary (non-UTF-8) file; this tool only changes text files. "
            "Use bash if you really need to replace it."
        ) from None


async def authorize_and_write(
    ctx: ToolContext,
    *,
    tool: str,
    params: Any,
    path: Path,
    rel: str,
    verb: str,
    current: str | None,
    new_text: str,
    not_done: str,
    refusal: str,
) -> EditOutcome:
    """The shared end of edit and write: ask (with the diff and the proposed text), then apply
    through the workspace; `not_done` and `refusal` word the error when it is not applied."""
    check_new_size(new_text, rel)
    await ctx.authorize(
        PermissionQuery(
            tool=tool,
            subject=rel,
            title=f"{verb} {rel}",
            input=input_dict(params),
            diff=unified_diff(current, new_text, rel),
            path=path,
            outside_workspace=ctx.is_outside(path),
            old_text=current,
            new_text=new_text,
        )
    )
    outcome = await ctx.workspace.write_text(path, new_text, current)
    if not outcome.applied:
        raise ToolError(f"{rel} {not_done}: {outcome.reason or refusal}.")
    return outcome


def is_large(text: str) -> bool:
    """Texts this big were paged by read, so the ledger holds only a page of them."""
    return (
        len(text) > LARGE_FILE_BYTES // 4
        and len(text.encode("utf-8", "surrogatepass")) > LARGE_FILE_BYTES
    )


def outcome_lines(outcome: EditOutcome) -> list[str]:
    lines = [f"Note: {note}" for note in outcome.notes]
    if outcome.diagnostics:
        lines.append(outcome.diagnostics.rstrip())
    return lines


# ---- globs ---------------------------------------------------------------------------------


def _translate_glob(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "{":
            depth, j = 0, i
            while j < n:
                if pattern[j] == "{":
                    depth += 1
                elif pattern[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            alternatives = _split_top_level(pattern[i + 1 : j])
            out.append("(?:" + "|".join(_translate_glob(a) for a in alternatives) + ")")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        current.append(c)
    parts.append("".join(current))
    return parts


def glob_matcher(pattern: str) -> re.Pattern[str]:
    """A regex for a gitignore-style glob over slash-separated relative paths: a pattern without
    `/` matches the file name at any depth; one with `/` matches the whole path from the search
    root; `**` crosses directories, `*` and `?` do not; `{a,b}` and `[abc]` work."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.endswith("/"):
        pattern += "**"
    if "/" not in pattern:
        return re.compile("(?:.*/)?" + _translate_glob(pattern) + r"\Z", re.DOTALL)
    return re.compile(_translate_glob(pattern.lstrip("/")) + r"\Z", re.DOTALL)
