"""A prompt's context items, as a front end names them, made into what the model reads: a file or
a selection of it (an open buffer's text wins over the disk, read through the Workspace), text
the editor gathered under a label (@problems, @git), an image (pasted, or a workspace file).

Every policy check on an item lives here, the same for every front end: an image file is read
through the `read` rules (images.py); a file the editor names is attached only when it stays what
the user picked (refused_link). `PromptItems.prompt_with_items` is the one call a front end makes.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from agentls.history import Attachment, ContextPart, Range
from agentls.session.images import ImageRefused, file_image, pasted_image
from agentls.session.policy import Policy
from agentls.workspace.folders import folders_of

if TYPE_CHECKING:
    from agentls.session.state import SessionState, TurnResult
    from agentls.verify.workspace import VerifiedWorkspace
    from agentls.workspace.protocol import Workspace


class Prompting(Protocol):
    """What of the Agent a prompt with context items uses (the Agent inherits PromptItems)."""

    root: Path
    policy: Policy
    workspace: VerifiedWorkspace

    async def session(self, session_id: str) -> SessionState: ...

    async def prompt(
        self,
        session_id: str,
        text: str,
        context: Sequence[Attachment] | None = None,
        mode: str = "queue",
    ) -> TurnResult: ...


# A context file is read only up to this size (never a device, nor a huge file whole).
CONTEXT_MAX_FILE_BYTES = 4 * 1024 * 1024
# The text attached of one file, selection or labelled text.
CONTEXT_MAX_CHARS = 100_000


@dataclass(frozen=True)
class FileItem:
    """A file the editor names (`uri` is kept with the message), or a selection of it: `range`,
    which `select` cuts from the file's text (the editor's positions are its front end's to
    count: UTF-16 units, or what the client negotiated)."""

    path: Path
    uri: str
    range: Range | None = None
    select: Callable[[str], str] | None = None


@dataclass(frozen=True)
class TextItem:
    """Text the editor gathered, stored as a context part under its label."""

    label: str
    text: str


@dataclass(frozen=True)
class ImageItem:
    """An image: pasted (base64 `data`) or the workspace file `uri` names."""

    data: str | None = None
    uri: str | None = None


ContextItem = FileItem | TextItem | ImageItem


class PromptRefused(ValueError):
    """A prompt that was not sent: `field` names what is wrong ("sessionId", "context.2"), the
    message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotAttached(ValueError):
    """An item that is not attached; the message says why."""


class PromptItems:
    """The Agent's prompt with context items (the Agent inherits it)."""

    async def prompt_with_items(
        self,
        session_id: str,
        text: str,
        items: Sequence[ContextItem | Attachment] = (),
        mode: str = "queue",
    ) -> TurnResult:
        """Attach the items (in order) and run the prompt (Agent.prompt). KeyError for an unknown
        session; PromptRefused for a sub-agent's session (its tasks prompt it) or an item that is
        not attached; CommandError as Agent.prompt."""
        agent = cast(Prompting, self)
        state = await agent.session(session_id)
        if state.record.parent_id is not None:  # its history is read with agent/getMessages
            raise PromptRefused(
                "sessionId",
                f"{session_id!r} is a sub-agent's session (of a task in "
                f"{state.record.parent_id!r}): it takes no prompts",
            )
        context: list[Attachment] = []
        for i, item in enumerate(items):
            try:
                context.append(await attachment(agent, session_id, item))
            except (ImageRefused, NotAttached) as exc:
                raise PromptRefused(f"context.{i}", str(exc)) from None
        return await agent.prompt(session_id, text, context, mode=mode)


async def attachment(
    agent: Prompting, session_id: str, item: ContextItem | Attachment
) -> Attachment:
    """What the model reads of one item; ImageRefused or NotAttached when it is not attached."""
    if isinstance(item, TextItem):
        return ContextPart(uri=item.label, text=cut_context(item.text))
    if isinstance(item, ImageItem):
        if item.data is not None:
            return await asyncio.to_thread(pasted_image, item.data)
        grants = list((await agent.session(session_id)).grants)
        uri, root, policy = item.uri or "", agent.root, agent.policy
        return await asyncio.to_thread(file_image, uri, root, policy, grants)
    if isinstance(item, FileItem):
        # Judged in the workspace folder holding it (workspace/folders.py), the first by default.
        folder = folders_of(agent.workspace).folder_of(Path(os.path.abspath(item.path)))
        refused = refused_link(item.path, folder.root if folder else agent.root, agent.policy)
        if refused is not None:
            raise NotAttached(refused)
        text = await item_text(agent.workspace.for_session(session_id), item.path)
        if text is not None and item.select is not None:
            text = item.select(text)
        return ContextPart(uri=item.uri, range=item.range, text=cut_context(text))
    return item  # already an attachment (a front end's own)


async def item_text(workspace: Workspace, path: Path) -> str | None:
    """A context file's text: an open buffer's (unsaved changes included), else the disk's; None
    when it cannot be read. What is on disk is looked at first: never a device, a FIFO or a file
    past CONTEXT_MAX_FILE_BYTES (a buffer of a file not saved yet is read)."""
    try:
        info = await asyncio.to_thread(os.stat, path)
    except FileNotFoundError:
        info = None
    except (OSError, ValueError):
        return None
    if info is not None and (
        not stat.S_ISREG(info.st_mode) or info.st_size > CONTEXT_MAX_FILE_BYTES
    ):
        return None
    try:
        return await workspace.read_text(path)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def cut_context(text: str | None) -> str | None:
    """A context item's text, cut past CONTEXT_MAX_CHARS."""
    if text is not None and len(text) > CONTEXT_MAX_CHARS:
        return text[:CONTEXT_MAX_CHARS] + "\n... (cut)"
    return text


def refused_link(path: Path, root: Path, policy: Policy) -> str | None:
    """Why the context file at `path` is not attached, or None to attach it. A link in the
    workspace to a file outside it, or to one the `read` rules do not allow without asking (a
    secret such as .env), is refused: the user chose a name, not that file. Only a path in the
    workspace that resolves elsewhere is judged; other files are the editor's to name."""
    named = Path(os.path.abspath(path))
    if named == root or root not in named.parents:
        return None
    real = Path(os.path.realpath(named))
    if real == named:
        return None
    if real == root or root not in real.parents:
        return f"{named.name} is a link to {real}, outside the workspace; it is not attached"
    rel = real.relative_to(root).as_posix()
    rules = policy.folder_rules.get(root) or policy.rules_with([])  # that folder's own rules
    if rules.evaluate("read", rel, root=root) != "allow":
        return (
            f"{named.name} is a link to {rel}, which is not read without asking (a secret, or a "
            "rule that asks or denies); it is not attached"
        )
    return None
