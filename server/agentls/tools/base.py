"""What every tool is and what it may use: the Tool base and its context (the Workspace seam
itself is agentls.workspace.protocol)."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

# Re-exported until every importer takes them from agentls.workspace.protocol.
from agentls.workspace.protocol import EditOutcome as EditOutcome
from agentls.workspace.protocol import FileChange
from agentls.workspace.protocol import Workspace as Workspace


class ToolError(Exception):
    """A failure the model should read: becomes an error tool_result with this message."""


class PermissionDenied(ToolError):
    """The user (or a rule) refused the call; the message carries any feedback."""


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# The texts the agent read, kept (besides their hashes) so a write made from one can be merged
# into what the user changed since (workspace/merge.py): the last few, none very large.
KEPT_TEXTS = 32
KEPT_TEXT_CHARS = 512 * 1024


class ReadLedger:
    """Which files the agent has read in this session, and the content it saw then (staleness;
    the text itself for the last KEPT_TEXTS files that are not large)."""

    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}
        self._texts: OrderedDict[Path, str] = OrderedDict()

    def record(self, path: Path, text: str) -> None:
        self._seen[path] = content_hash(text)
        self._texts.pop(path, None)
        if len(text) <= KEPT_TEXT_CHARS:
            self._texts[path] = text
            while len(self._texts) > KEPT_TEXTS:
                self._texts.popitem(last=False)

    def text_read(self, path: Path) -> str | None:
        """The text the agent last saw of `path`, when it is kept (None: not read, or not kept)."""
        return self._texts.get(path)

    def has_read(self, path: Path) -> bool:
        return path in self._seen

    def changed_since_read(self, path: Path, current_text: str) -> bool:
        return self._seen.get(path) != content_hash(current_text)

    def forget(self, path: Path) -> None:
        self._seen.pop(path, None)
        self._texts.pop(path, None)


@dataclass
class PermissionQuery:
    """One question to the permission layer: may `tool` act on `subject`?"""

    tool: str
    subject: str  # file tools: the path (relative inside the workspace, absolute outside); bash: the command
    title: str  # one line a person reads, e.g. "Edit src/app.py"
    input: dict[str, Any]
    diff: str | None = None  # unified diff for edits
    path: Path | None = None  # resolved path for file tools
    outside_workspace: bool = False
    # For edit/write: the text the change starts from (None: a new file) and the proposed result,
    # so a front end can show or pre-build the change before it is approved.
    old_text: str | None = None
    new_text: str | None = None
    # bash: the command will run inside the sandbox (tools/support/sandbox.py), every secret path hidden;
    # a "sandboxed" rule then allows it without a question.
    sandboxed: bool = False
    # A change to several files (rename): each file's old and new text, in order; `diff` is
    # their combined unified diff and `path`/`old_text`/`new_text` stay None.
    changes: list[FileChange] | None = None


@dataclass
class Accepted:
    """What the user accepted instead of a proposed change (part of it, or their own version):
    each file's text (a proposed file not in it stays as it was), and their note, if any."""

    texts: dict[Path, str]
    note: str | None = None


class SandboxSettings(Protocol):
    """What the settings ask of bash's sandbox (Settings.sandbox, sandboxNetwork, secretPatterns);
    tools/support/sandbox.py SandboxPolicy holds them."""

    @property
    def mode(self) -> str:
        """ "auto", "off" or "required" (tools/support/sandbox.py SandboxMode)."""
        ...

    @property
    def network(self) -> bool: ...

    @property
    def secret_globs(self) -> tuple[str, ...]: ...

    @property
    def home_readable(self) -> tuple[str, ...]:
        """Setting sandboxHomeReadable: more of $HOME shown in the sandbox."""
        ...


class ToolContext(Protocol):
    """What the loop hands a running tool."""

    workspace: Workspace
    ledger: ReadLedger
    call_id: str
    session_id: str

    @property
    def sandbox(self) -> SandboxSettings:
        """How bash runs its commands: the sandbox settings (tools/support/sandbox.py SandboxPolicy)."""
        ...

    def resolve_path(self, raw: str | None, *, tool: str) -> Path:
        """Resolve a path argument against the workspace root; raises ToolError for a path outside
        the workspace (after following symlinks) unless a permission rule whose pattern names it
        opens it."""
        ...

    def is_outside(self, path: Path) -> bool: ...

    def relative(self, path: Path) -> str:
        """How to show a path to the model: relative inside the workspace, absolute outside."""
        ...

    async def authorize(self, query: PermissionQuery) -> Accepted | None:
        """Returns when allowed (by rule or by the user); raises PermissionDenied otherwise.
        For a proposed change (old_text/new_text, or changes), what the user accepted instead of
        it; None: as proposed."""
        ...

    def may_show(self, path: Path) -> bool:
        """Whether a search may list this file without asking: False for secrets (.env, keys)
        that the rules do not allow reading.

        A context may also offer `show_filter(base: Path) -> ShowFilter | None`: may_show for
        every file under directory `base` at once, by paths relative to it, for searches that
        list thousands of files (tools reach it through tools.base.show_filter, which falls
        back to may_show for each file)."""
        ...

    def progress(self, message: str) -> None:
        """Report what the tool is doing now (shown as progress by front ends)."""
        ...

    async def authorize_path(self, tool: str, path: Path, title: str, params: Any) -> None:
        """Ask whether `tool` may act on `path` (already resolve_path'ed), whose
        workspace-relative name is the question's subject; raises PermissionDenied otherwise.
        Implemented once by PathAuthorization."""
        ...


class PathAuthorization:
    """ToolContext.authorize_path for every context: the one PermissionQuery of a tool that
    reads, lists or searches a path (mixed into session/calls.py CallContext and the tests')."""

    async def authorize_path(
        self: ToolContext, tool: str, path: Path, title: str, params: Any
    ) -> None:
        await self.authorize(
            PermissionQuery(
                tool=tool,
                subject=self.relative(path),
                title=title,
                input=input_dict(params),
                path=path,
                outside_workspace=self.is_outside(path),
            )
        )


class ShowFilter(Protocol):
    """ToolContext.may_show for the files under one directory, by their paths relative to it as
    ripgrep prints them ("pkg/a.py", no "./")."""

    def __call__(self, name: str) -> bool: ...

    def split(self, names: Sequence[str]) -> tuple[list[str], int]:
        """The names that may be shown, in their order, and how many may not."""
        ...

    def shows_all(self, listing: str) -> bool:
        """True when every name of the listing (names joined by line breaks) may be shown, told
        without taking it apart; False when some may not, or it cannot tell."""
        ...


@dataclass
class ToolResult:
    output: str
    is_error: bool = False
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _nul_field(raw: Any) -> str | None:
    """The name of the first field (dotted, with list indexes) whose string (or key) holds a NUL
    character; None when none does. Iterative: the input may nest deeply."""
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if "\0" in value:
                return where or "input"
        elif isinstance(value, dict):
            items = []
            for key, item in value.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and "\0" in key:
                    return name.replace("\0", "\\0")
                items.append((name, item))
            stack.extend(reversed(items))
        elif isinstance(value, list | tuple):
            stack.extend(
                reversed(
                    [(f"{where}.{i}" if where else str(i), item) for i, item in enumerate(value)]
                )
            )
    return None


# Other agents' names for our parameters (Claude Code's `file_path`, `glob`, `timeout`,
# `subagent_type`; opencode's camelCase), taken as the parameter they mean when the tool has it
# and the call does not also give it. Never in the schema the model is sent.
PARAMETER_ALIASES: dict[str, str] = {
    "file_path": "path",
    "filePath": "path",
    "notebook_path": "path",
    "directory": "path",
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
    "glob": "include",
    "timeout": "timeout_ms",
    "subagent_type": "agent",
    "subagentType": "agent",
}
# Claude Code's label of a call ("Run the tests"): it changes nothing, so a tool without such a
# parameter drops it rather than failing the call.
IGNORED_PARAMETERS = frozenset({"description"})


def _with_aliases(raw: dict[str, Any], fields: Any) -> dict[str, Any]:
    """`raw` with each alias the tool does not take itself renamed to its parameter, and the
    ignored labels it does not take dropped."""
    if not any(key in PARAMETER_ALIASES or key in IGNORED_PARAMETERS for key in raw):
        return raw
    taken = {k: v for k, v in raw.items() if k in fields or k not in IGNORED_PARAMETERS}
    for alias, name in PARAMETER_ALIASES.items():
        if alias in taken and alias not in fields and name in fields and name not in taken:
            taken[name] = taken.pop(alias)
    return taken


class Tool:
    """A tool: a name, a description and input model for the model, and an async run()."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[ToolInput]]
    # Read-only tools may run concurrently with their read-only neighbours in one message.
    read_only: ClassVar[bool] = False

    def schema(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return {"name": self.name, "description": self.description, "input_schema": schema}

    def parse(self, raw: dict[str, Any]) -> ToolInput:
        nul = _nul_field(raw)
        if nul is not None:
            # No path, pattern or command can hold one (the OS and ripgrep refuse them, or they
            # cut the string short): refused here for every tool, naming the field.
            raise ToolError(
                f"Invalid input for {self.name}: {nul}: contains a NUL byte (\\0), which no "
                "path, pattern, command or file text given to a tool may hold; remove it. "
                "Nothing was run."
            )
        fields = self.input_model.model_fields
        try:
            return self.input_model.model_validate(_with_aliases(raw, fields))
        except ValidationError as exc:
            problems = "; ".join(self._problem(err, raw) for err in exc.errors())
            raise ToolError(f"Invalid input for {self.name}: {problems}") from exc

    def _problem(self, err: Any, raw: dict[str, Any]) -> str:
        """One validation error in words naming the parameter: an unknown one says which the
        tool takes (and which it may have meant), a missing one says it is required."""
        where = ".".join(str(x) for x in err["loc"]) or "input"
        fields = self.input_model.model_fields
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            meant = PARAMETER_ALIASES.get(where)
            if meant in fields and meant in raw:
                return f"{where}: the same as {meant}, which the call also gives; give only {meant}"
            required = [n for n, f in fields.items() if f.is_required()]
            optional = [n for n in fields if n not in required]
            takes = ", ".join(required) or "none"
            if optional:
                takes += f" (optional: {', '.join(optional)})"
            return f"{where}: not a parameter of {self.name}; its parameters are {takes}"
        if err["type"] == "missing":
            return f"{where}: required parameter missing"
        return f"{where}: {err['msg']}"

    def title(self, raw: dict[str, Any]) -> str:
        """A one-line description of a call for people (tool-call events, approvals)."""
        raw = _with_aliases(raw, self.input_model.model_fields)
        for key in ("path", "pattern", "command"):
            if isinstance(raw.get(key), str):
                return f"{self.name} {raw[key]}"
        return self.name

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


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
