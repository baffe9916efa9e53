"""A prompt's images: pasted data, or a workspace file read through the `read` rules (a file
outside the workspace, a secret or one a rule asks about is refused, as for an @path)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from agentls.history import Attachment, ImagePart, clean_text
from agentls.images import MAX_FILE_BYTES, ImageError, decode_base64, prepare
from agentls.permission.rules import Rule
from agentls.session.policy import Policy


class ImageRefused(ValueError):
    """An image that is not attached; the message says why."""


def read_regular(path: Path, limit: int) -> bytes:
    """Up to `limit` bytes of a regular file. Anything else (a FIFO a repository names shot.png,
    a device, a socket) is an OSError before it is opened: opening a FIFO waits for a writer."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(f"{path.name} is not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the stat
            raise OSError(f"{path.name} is not a regular file")
        return f.read(limit)


def pasted_image(data: str) -> ImagePart:
    """Base64 data as an image part (its type read from the data itself)."""
    try:
        image = prepare(decode_base64(data))
    except ImageError as exc:
        raise ImageRefused(f"the image is not attached: {exc}") from None
    return ImagePart(media_type=image.media_type, data=image.data)


def file_image(uri: str, root: Path, policy: Policy, grants: list[Rule]) -> ImagePart:
    """The image file a uri (file:) or path names, when the read rules allow it without asking."""
    parsed = urlparse(uri)
    raw = unquote(parsed.path) if parsed.scheme == "file" else uri
    if parsed.scheme not in ("", "file") and len(parsed.scheme) > 1:
        raise ImageRefused(f"{uri}: only a file of the workspace can be attached")
    candidate = Path(os.path.expanduser(raw))
    path = Path(os.path.realpath(candidate if candidate.is_absolute() else root / candidate))
    if path == root or root not in path.parents:
        raise ImageRefused(f"{uri} is outside the workspace ({root}); it is not attached")
    rel = path.relative_to(root).as_posix()
    action = policy.rules_with(grants).evaluate("read", rel, root=root)
    if action == "deny":
        raise ImageRefused(f"reading {rel} is denied by the permission rules")
    if action != "allow":
        raise ImageRefused(
            f"{rel} is not read without asking (a secret, or a rule that asks); it is not "
            "attached. Ask the agent to read it instead."
        )
    try:
        image = prepare(read_regular(path, MAX_FILE_BYTES + 1))
    except OSError as exc:
        raise ImageRefused(f"cannot read {rel} ({exc.strerror or exc})") from None
    except ImageError as exc:
        raise ImageRefused(f"{rel} is not attached: {exc}") from None
    return ImagePart(media_type=image.media_type, data=image.data, uri=path.as_uri())


def user_image(path: Path) -> ImagePart:
    """An image file the user named (agentls run --image): any file they can read."""
    try:
        with open(path, "rb") as f:
            raw_bytes = f.read(MAX_FILE_BYTES + 1)
        image = prepare(raw_bytes)
    except OSError as exc:
        raise ImageRefused(f"{path}: {exc.strerror or exc}") from None
    except ImageError as exc:
        raise ImageRefused(f"{path}: {exc}") from None
    return ImagePart(media_type=image.media_type, data=image.data, uri=path.resolve().as_uri())


def prompt_title(text: str, context: Sequence[Attachment]) -> str:
    """A new session's title from its first prompt: the text's first 60 characters on one line;
    for a prompt of images only, the first image's file name, or "Image" for a pasted one; ""
    when there is neither."""
    if text.strip():
        return " ".join(text.split())[:60]
    for part in context:
        if isinstance(part, ImagePart):
            name = PurePosixPath(unquote(urlparse(part.uri).path)).name if part.uri else ""
            return " ".join(clean_text(name).split())[:60] or "Image"
    return ""
