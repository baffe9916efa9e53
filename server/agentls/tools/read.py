"""read: a text file's lines, numbered like `cat -n`, a page at a time."""

from __future__ import annotations

import asyncio
import codecs
import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from agentls.images import (
    MAX_FILE_BYTES,
    ImageError,
    PreparedImage,
    describe,
    is_image_path,
    prepare,
)
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.file_writes import LARGE_FILE_BYTES
from agentls.tools.support.text import display_lines, human_size, number_lines, plural

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192
_CHUNK = 1024 * 1024


class ReadInput(ToolInput):
    path: str = Field(description="The file to read: relative to the workspace root, or absolute.")
    offset: int | None = Field(
        default=None, ge=1, description="1-based number of the first line to show (default 1)."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to show (default {DEFAULT_LIMIT})."
    )


@dataclass
class _Page:
    lines: list[str]  # without line terminators, not yet truncated for display
    long_lines: dict[int, int]  # index in `lines` -> the line's full length when it was cut short
    total_lines: int


class _NotText(Exception):
    pass


def cut_line(line: str, full_length: int | None = None) -> str:
    length = full_length if full_length is not None else len(line)
    if length <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" ... [line truncated: {length} characters in all]"


def _stream_page(path: Path, offset: int, limit: int) -> _Page:
    """Page through a large file without ever holding more than a chunk plus the page."""
    keep = MAX_LINE_CHARS * 4 + 4  # bytes enough for MAX_LINE_CHARS characters of UTF-8
    page: list[bytes] = []
    lengths: list[int] = []
    newlines = 0  # newlines seen so far = completed lines
    last_byte = b""
    current = bytearray()
    current_len = 0
    with open(path, "rb") as f:
        if b"\0" in f.read(_SNIFF_BYTES):
            raise _NotText("it contains NUL bytes")
        f.seek(0)
        while chunk := f.read(_CHUNK):
            last_byte = chunk[-1:]
            pos = 0
            n = len(chunk)
            while pos < n:
                line_no = newlines + 1  # the line `pos` is in
                if line_no < offset:
                    # Skip whole lines quickly.
                    need = offset - line_no
                    count = chunk.count(b"\n", pos)
                    if count < need:
                        newlines += count
                        pos = n
                        break
                    for _ in range(need):
                        pos = chunk.index(b"\n", pos) + 1
                    newlines += need
                    continue
                if line_no >= offset + limit:
                    newlines += chunk.count(b"\n", pos)
                    pos = n
                    break
                nl = chunk.find(b"\n", pos)
                end = n if nl < 0 else nl
                if len(current) < keep:
                    current += chunk[pos : min(end, pos + keep - len(current))]
                current_len += end - pos
                if nl < 0:
                    pos = n
                    break
                page.append(bytes(current))
                lengths.append(current_len)
                current.clear()
                current_len = 0
                newlines += 1
                pos = nl + 1
    total = newlines + (1 if last_byte not in (b"", b"\n") else 0)
    if current_len and offset <= newlines + 1 < offset + limit:
        page.append(bytes(current))
        lengths.append(current_len)
    lines, long_lines = _decode_page(page, lengths)
    return _Page(lines, long_lines, total)


def _decode_page(page: list[bytes], lengths: list[int]) -> tuple[list[str], dict[int, int]]:
    """The page's lines as text (each cut to the bytes kept of it, `lengths` its full length),
    and the full length of each long one by its index."""
    lines: list[str] = []
    long_lines: dict[int, int] = {}
    for i, (raw, length) in enumerate(zip(page, lengths, strict=True)):
        truncated = length > len(raw)
        try:
            decoder = codecs.getincrementaldecoder("utf-8")()
            text = decoder.decode(raw, final=not truncated)
        except UnicodeDecodeError as exc:
            raise _NotText("it is not valid UTF-8") from exc
        if text.endswith("\r") and not truncated:
            text = text[:-1]
        lines.append(text)
        if truncated or len(text) > MAX_LINE_CHARS:
            long_lines[i] = max(length, len(text))  # bytes: close enough for the marker
    return lines, long_lines


def _similar_names(path: Path) -> list[str]:
    parent = path.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    target = path.name
    lowered = {n.lower(): n for n in names}
    found: list[str] = []
    if target.lower() in lowered:
        found.append(lowered[target.lower()])
    stem = target.split(".")[0].lower()
    for name in names:
        if stem and name.split(".")[0].lower() == stem and name not in found:
            found.append(name)
    for name in difflib.get_close_matches(target, names, n=5, cutoff=0.6):
        if name not in found:
            found.append(name)
    return [str(parent / n) for n in found[:5]]


def _prepare_file(path: Path) -> PreparedImage:
    with open(path, "rb") as f:
        raw = f.read(MAX_FILE_BYTES + 1)
    return prepare(raw)


def missing_file_error(ctx: ToolContext, path: Path) -> ToolError:
    rel = ctx.relative(path)
    parent = path.parent
    if not parent.is_dir():
        # Report the deepest directory that does exist.
        existing = parent
        while not existing.is_dir() and existing != existing.parent:
            existing = existing.parent
        return ToolError(
            f"File not found: {rel} (directory {ctx.relative(parent)} does not exist; "
            f"the nearest existing directory is {ctx.relative(existing)}). Use list or glob to find the file."
        )
    similar = [ctx.relative(Path(p)) for p in _similar_names(path)]
    message = f"File not found: {rel}."
    if similar:
        message += " Did you mean: " + ", ".join(similar) + "?"
    else:
        message += " Use list or glob to find the file."
    return ToolError(message)


def binary_error(rel: str, why: str) -> ToolError:
    return ToolError(
        f"Cannot read {rel}: it is a binary file ({why}), not text. The read tool only shows "
        "UTF-8 text; use bash (e.g. `file`, `xxd | head`) if you need to inspect it."
    )


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a text file. Returns its lines numbered like `cat -n` (line number, a tab, then the "
        "line); the numbers are not part of the file, so never copy them into edit's old_string. "
        f"Shows up to {DEFAULT_LIMIT} lines starting at `offset` (1-based, default 1); for longer "
        "files the result says how to get the next page. Lines over "
        f"{MAX_LINE_CHARS} characters are cut. Files open in the editor are read with their unsaved "
        "changes. A PNG, JPEG, GIF or WebP file is shown as an image. Other binary files are "
        "refused; for a directory use list. You must read a file before "
        "you edit or overwrite it. Read several files in one message when you need them all."
    )
    input_model = ReadInput
    read_only = True

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, ReadInput)
        path = ctx.resolve_path(params.path, tool=self.name)
        rel = ctx.relative(path)
        await ctx.authorize_path(self.name, path, f"Read {rel}", params)
        offset = params.offset or 1
        limit = params.limit or DEFAULT_LIMIT
        if path.is_dir():
            raise ToolError(
                f"{rel} is a directory, not a file. Use the list tool to see its contents."
            )
        try:
            info = path.stat()
        except OSError:
            size = None
        else:
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(
                    f"{rel} is not a regular file (a device, socket or pipe); it cannot be read."
                )
            size = info.st_size

        if is_image_path(path.name):
            return await self._image(ctx, path, rel)
        if size is not None and size > LARGE_FILE_BYTES:
            try:
                page = await asyncio.to_thread(_stream_page, path, offset, limit)
            except _NotText as exc:
                raise binary_error(rel, str(exc)) from None
            except FileNotFoundError:
                raise missing_file_error(ctx, path) from None
            # Only the page can be remembered: write/edit know they cannot verify the rest.
            ctx.ledger.record(path, "\n".join(page.lines))
            note = f"{rel} is large ({human_size(size)}); only the requested lines were read."
            return self._result(rel, page, offset, note)

        try:
            text = await ctx.workspace.read_text(path)
        except FileNotFoundError:
            raise missing_file_error(ctx, path) from None
        except IsADirectoryError:
            raise ToolError(
                f"{rel} is a directory, not a file. Use the list tool to see its contents."
            ) from None
        except UnicodeDecodeError as exc:
            why = "it contains NUL bytes" if "NUL" in str(exc.reason) else "it is not valid UTF-8"
            raise binary_error(rel, why) from None
        if "\0" in text[:_SNIFF_BYTES]:
            raise binary_error(rel, "it contains NUL bytes")
        ctx.ledger.record(path, text)
        all_lines = display_lines(text)
        shown = all_lines[offset - 1 : offset - 1 + limit]
        long_lines = {i: len(line) for i, line in enumerate(shown) if len(line) > MAX_LINE_CHARS}
        return self._result(rel, _Page(shown, long_lines, len(all_lines)), offset, None)

    async def _image(self, ctx: ToolContext, path: Path, rel: str) -> ToolResult:
        """A PNG, JPEG, GIF or WebP file as an image the model sees (downscaled when past the
        API's limits)."""
        try:
            image = await asyncio.to_thread(_prepare_file, path)
        except FileNotFoundError:
            raise missing_file_error(ctx, path) from None
        except OSError as exc:
            raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
        except ImageError as exc:
            raise ToolError(f"Cannot show {rel} as an image: {exc}.") from None
        meta = {"path": rel, "image": describe(image), "images": [(image.media_type, image.data)]}
        return ToolResult(f"[{rel}: {describe(image)}, shown to the model]", title=f"Read {rel}",
                          metadata=meta)  # fmt: skip

    def _result(self, rel: str, page: _Page, offset: int, note: str | None) -> ToolResult:
        total = page.total_lines
        meta = {"path": rel, "total_lines": total, "offset": offset, "lines_shown": len(page.lines)}
        if total == 0:
            return ToolResult(f"({rel} exists but is empty.)", title=f"Read {rel}", metadata=meta)
        if offset > total:
            raise ToolError(
                f"offset {offset} is past the end of {rel}, which has {plural(total, 'line')}. "
                f"Use an offset between 1 and {total}."
            )
        shown = [cut_line(line, page.long_lines.get(i)) for i, line in enumerate(page.lines)]
        body = number_lines(shown, offset)
        last = offset + len(shown) - 1
        footer: list[str] = []
        if last < total:
            footer.append(
                f"(Showing lines {offset}-{last} of {total}. {plural(total - last, 'more line')} "
                f"remain: call read with offset={last + 1} to continue.)"
            )
        elif offset > 1:
            footer.append(f"(Showing lines {offset}-{last} of {total}: the end of the file.)")
        if page.long_lines:
            footer.append(
                f"({plural(len(page.long_lines), 'line')} longer than {MAX_LINE_CHARS} characters "
                "were cut; use grep or bash to see specific parts of them.)"
            )
        if note:
            footer.append(f"({note})")
        output = body + ("\n\n" + "\n".join(footer) if footer else "")
        return ToolResult(output, title=f"Read {rel}", metadata=meta)
