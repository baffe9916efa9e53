"""ripgrep (rg) for the search tools: finding the binary, running it with its output handed over
line by line or a read at a time, and splitting one walk into parts run side by side."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.environ_scrub import child_environment
from agentls.tools.base import ToolError

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


async def _start_rg(args: Sequence[str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        rg_binary(),
        *args,
        cwd=str(cwd),
        # Like bash: no API credentials in any child process.
        env=child_environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_RG_LINE_LIMIT,
    )


async def _run_rg(
    args: Sequence[str], cwd: Path, on_block: Callable[[bytes, bool], bool]
) -> RgResult:
    """on_block(block, ended): whole lines joined by line breaks, without one at the end (ended
    True), or at the very end a last line that has none (ended False). False: stop rg."""
    proc = await _start_rg(args, cwd)
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
