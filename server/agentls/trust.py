"""Workspace trust: what a workspace's own config file may change, and the user's record of the
workspace files they trusted.

A repository is not the user, and neither is an agent session that wrote a file. A workspace's
`.agentls/config.json` is read either way, but until the user confirms that file's exact content
(`agentls trust DIR`, the editor's question, `agentls run`'s question at a terminal, ACP's
session/request_permission; see agentls.trust_pending) it may only tighten: its deny and ask rules
apply, and only on top of everything else (they can make a call stricter, never looser);
`secretPatterns` add to the user's; every other key (allow and sandboxed rules, `verifyCommands`,
`sandbox`, `model`, limits...) is ignored, and the user is told once which file and which keys.
The editor's trust in the workspace does not confirm content: it only lets the editor ask.

The record lives in config_home()/trusted-workspaces.json (0600, written atomically):
{"version": 1, "files": {"/abs/dir/.agentls/config.json": {"sha256": ..., "trustedAt": ...}},
 "declined": {"/abs/dir/.mcp.json": "<sha256 the user chose to keep ignoring>"}},
and each confirmed content under config_home()/trusted-content/<sha256> (0600), so a file that
changed since is untrusted again while its last confirmed content still applies (and the question
shows the change as a diff).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shlex
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentls.atomic_file import replace_file
from agentls.config_home import config_home
from agentls.permission.rules import WEBFETCH, PathFilter, PermissionRules, Rule, parse_rules
from agentls.permission.types import SEVERITY

if TYPE_CHECKING:
    from agentls.permission.bash_decision import BashDecision
    from agentls.permission.rules import Decision

WORKSPACE_CONFIG = Path(".agentls") / "config.json"
# Claude Code's project file of MCP servers: read only when the workspace is trusted (the editor
# says so, or `agentls trust` recorded its exact content), since each server is a program to run.
MCP_JSON = Path(".mcp.json")
STORE_NAME = "trusted-workspaces.json"
CONTENT_DIR = "trusted-content"
# The keys an untrusted workspace config may set (either spelling). `permissions` is cut down to
# its deny and ask rules; `secretPatterns` only adds globs that ask. Nothing else is plainly
# harmless: a model costs money, a limit raised lets a hostile prompt run longer, a command runs.
UNTRUSTED_KEYS = frozenset({"permissions", "secretPatterns", "secret_patterns"})
TIGHTENING_ACTIONS = frozenset({"deny", "ask"})

TrustState = Literal["trusted", "changed", "untrusted"]


class TrustStoreError(ValueError):
    """The trust store cannot be read or written; the message names the file and what to do."""


def store_path() -> Path:
    return config_home() / STORE_NAME


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class TrustRecord:
    path: str
    sha256: str
    trusted_at: str


class TrustStore:
    """The user's trusted workspace files, by absolute path and sha256 of their content."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or store_path()

    def records(self) -> dict[str, TrustRecord]:
        return self._load()[0]

    def declined(self) -> dict[str, str]:
        """The contents the user chose to keep ignoring (path -> sha256): not asked about again."""
        try:
            return self._load()[1]
        except TrustStoreError:
            return {}

    def _load(self) -> tuple[dict[str, TrustRecord], dict[str, str]]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}, {}
        except OSError as exc:
            raise TrustStoreError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            data = json.loads(raw)
            files = data["files"]
            declined = data.get("declined") or {}
            if not isinstance(files, dict) or not isinstance(declined, dict):
                raise TypeError("files or declined is not an object")
            records = {
                str(path): TrustRecord(str(path), str(entry["sha256"]), str(entry["trustedAt"]))
                for path, entry in files.items()
            }
            return records, {str(path): str(sha) for path, sha in declined.items()}
        except (ValueError, KeyError, TypeError) as exc:
            raise TrustStoreError(
                f"{self.path} is not a valid trust store ({exc}); delete it and trust again"
            ) from exc

    def confirmed(self, file: Path) -> bytes | None:
        """The content of `file` the user last confirmed, None when none (or it was recorded
        before contents were kept): what applies while the file says something else."""
        try:
            record = self.records().get(str(file))
        except TrustStoreError:
            return None
        if record is None:
            return None
        try:
            data = (self.path.parent / CONTENT_DIR / record.sha256).read_bytes()
        except OSError:
            return None
        return data if digest(data) == record.sha256 else None

    def state(self, file: Path, data: bytes) -> TrustState:
        """Whether this content of `file` is trusted. A store that cannot be read trusts nothing."""
        try:
            record = self.records().get(str(file))
        except TrustStoreError:
            return "untrusted"
        if record is None:
            return "untrusted"
        return "trusted" if record.sha256 == digest(data) else "changed"

    def trust(self, file: Path, data: bytes) -> TrustRecord:
        record = TrustRecord(
            str(file), digest(data), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        )
        with self._locked():
            self._keep_content(record.sha256, data)
            records, declined = self._load()
            records[record.path] = record
            declined.pop(record.path, None)
            self._write(records, declined)
        return record

    def decline(self, file: Path, sha256: str) -> None:
        """The user chose to keep ignoring this content of `file`: not asked about it again."""
        with self._locked():
            records, declined = self._load()
            declined[str(file)] = sha256
            self._write(records, declined)

    def revoke(self, file: Path) -> bool:
        with self._locked():
            records, declined = self._load()
            if records.pop(str(file), None) is None:
                return False
            self._write(records, declined)
        return True

    def _keep_content(self, sha256: str, data: bytes) -> None:
        folder = self.path.parent / CONTENT_DIR
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            replace_file(folder / sha256, data, 0o600)
        except OSError as exc:
            raise TrustStoreError(f"cannot write in {folder}: {exc.strerror or exc}") from exc

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time (two `agentls trust` at once must not lose one of the two)."""
        import fcntl

        self._make_dir()
        try:
            fd = os.open(self.path.with_name(STORE_NAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise TrustStoreError(f"cannot write in {self.path.parent}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _make_dir(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise TrustStoreError(
                f"cannot create {self.path.parent}: {exc.strerror or exc}"
            ) from exc

    def _write(self, records: dict[str, TrustRecord], declined: dict[str, str]) -> None:
        body: dict[str, Any] = {
            "version": 1,
            "files": {
                r.path: {"sha256": r.sha256, "trustedAt": r.trusted_at}
                for r in sorted(records.values(), key=lambda r: r.path)
            },
        }
        if declined:
            body["declined"] = dict(sorted(declined.items()))
        text = json.dumps(body, indent=2) + "\n"
        try:
            replace_file(self.path, text.encode("utf-8"), 0o600)
        except OSError as exc:
            raise TrustStoreError(f"cannot write {self.path}: {exc.strerror or exc}") from exc


def workspace_config(root: Path) -> Path:
    """The workspace's config file, under the real path of the root."""
    return Path(os.path.realpath(root)) / WORKSPACE_CONFIG


def mcp_json(root: Path) -> Path:
    """The workspace's .mcp.json, under the real path of the root."""
    return Path(os.path.realpath(root)) / MCP_JSON


@dataclass
class UntrustedConfig:
    """What an untrusted workspace config keeps and what it loses."""

    file: Path
    state: TrustState
    kept: dict[str, Any] = field(default_factory=dict)
    # Its deny and ask rules, each only ever making a call stricter (see RestrictedRules).
    restrictions: list[Rule] = field(default_factory=list)
    # What was ignored, in words: "allow rules", "verifyCommands", "model".
    ignored: list[str] = field(default_factory=list)

    def notice(self, editor: bool = False) -> str | None:
        """The one line that tells the user; None when nothing was ignored."""
        if not self.ignored:
            return None
        what = _words(self.ignored)
        return f"agentls: ignored {what} in {self.file}: {why_untrusted(self.file, self.state, editor)}"


def why_untrusted(file: Path, state: TrustState, editor: bool) -> str:
    """Why a workspace file is not applied, and how to confirm it (the end of a notice)."""
    root = shlex.quote(str(file.parent.parent if file.name == "config.json" else file.parent))
    how = "confirm it in the editor (trust the workspace there) or run" if editor else "run"
    if state == "changed":
        return f"it changed since you confirmed it ({how} `agentls trust {root}` to confirm it)"
    return f"you have not confirmed this file ({how} `agentls trust {root}` to confirm it)"


def _words(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def restrict(file: Path, layer: dict[str, Any], state: TrustState) -> UntrustedConfig:
    """Cut an untrusted workspace config down to what may only tighten."""
    out = UntrustedConfig(file=file, state=state)
    dropped_actions: list[str] = []
    for key, value in layer.items():
        if key == "permissions":
            try:
                rules = parse_rules(value)
            except ValueError as exc:
                raise ValueError(f"{file}: permissions: {exc}") from exc
            for rule in rules:
                if rule.action in TIGHTENING_ACTIONS:
                    out.restrictions.append(rule)
                elif rule.action not in dropped_actions:
                    dropped_actions.append(rule.action)
        elif key in UNTRUSTED_KEYS:
            out.kept["secretPatterns"] = value
        else:
            out.ignored.append(key)
    out.ignored[:0] = [f"{action} rules" for action in dropped_actions]
    return out


def enabled_by(layer: dict[str, Any]) -> list[str]:
    """What trusting this config would enable beyond an untrusted one, one line each (for the
    `agentls trust` output)."""
    lines: list[str] = []
    try:
        rules = parse_rules(layer.get("permissions"))
    except ValueError:
        rules = []
    for rule in rules:
        if rule.action not in TIGHTENING_ACTIONS:
            subject = f"{rule.tool} {rule.pattern}" if rule.pattern else rule.tool
            lines.append(f"{rule.action}: {subject}")
    commands = layer.get("verifyCommands", layer.get("verify_commands"))
    if isinstance(commands, dict):
        for pattern, command in commands.items():
            lines.append(f"verifyCommands: {pattern} -> {command}")
    for key, value in layer.items():
        if key in UNTRUSTED_KEYS or key in ("verifyCommands", "verify_commands"):
            continue
        lines.append(f"{key}: {json.dumps(value)}")
    return lines


# The floor's own base: no opinion (allow) on anything, inside the workspace or out.
_NO_OPINION = (Rule(tool="*", action="allow"), Rule(tool="*", pattern="**", action="allow"))


def restricted(rules: PermissionRules, restrictions: Sequence[Rule]) -> PermissionRules:
    """`rules` with an untrusted workspace's deny and ask rules as a floor; `rules` itself when
    there are none."""
    if not restrictions:
        return rules
    return RestrictedRules(rules.rules, restrictions)


class RestrictedRules(PermissionRules):
    """Rules with a floor: every answer is the stricter of the rules' own and the floor's, the
    floor being an untrusted workspace's deny and ask rules (a subject they do not match: no
    opinion). So they tighten whatever comes before them (defaults, the user's rules) and never
    loosen it: an ask never turns a user's deny into a question.

    The user's grants ("always" answers, added by extended()) are also put in the floor after the
    workspace's asks and before its denies: "always" lifts a question the workspace asked for,
    never its deny. Within the workspace's own rules the strictest matching one counts (a deny
    then an ask on the same command is a deny)."""

    def __init__(
        self,
        rules: Iterable[Rule],
        restrictions: Sequence[Rule],
        grants: Sequence[Rule] = (),
    ) -> None:
        super().__init__(rules)
        self.restrictions = list(restrictions)
        self._grants = list(grants)
        asks = [r for r in self.restrictions if r.action != "deny"]
        denies = [r for r in self.restrictions if r.action == "deny"]
        self.floor = PermissionRules([*_NO_OPINION, *asks, *self._grants, *denies])

    def extended(self, more: Iterable[Rule]) -> PermissionRules:
        more = list(more)
        return RestrictedRules([*self.rules, *more], self.restrictions, [*self._grants, *more])

    def evaluate(self, tool: str, subject: str, **kwargs: Any) -> Decision:
        own = super().evaluate(tool, subject, **kwargs)
        if tool == WEBFETCH:
            # The floor has no opinion on a private host: only the user's own rules name one.
            kwargs = {**kwargs, "outside_workspace": False}
        floor = self.floor.evaluate(tool, subject, **kwargs)
        return floor if SEVERITY[floor] > SEVERITY[own] else own

    def decide_bash(self, command: str, **kwargs: Any) -> BashDecision:
        own = super().decide_bash(command, **kwargs)
        floor = self.floor.decide_bash(command, **kwargs)
        if SEVERITY[floor.action] <= SEVERITY[own.action]:
            return own
        # The stricter answer, with the workspace's reasons; the call still runs as the user's
        # rules would have run it (in the sandbox if they said so) once approved.
        reasons = [f"the workspace's .agentls/config.json: {reason}" for reason in floor.reasons]
        return dataclasses.replace(own, action=floor.action, reasons=reasons or own.reasons)

    def path_filter(
        self, tool: str, *, prefix: str = "", outside_workspace: bool = False
    ) -> PathFilter:
        own = super().path_filter(tool, prefix=prefix, outside_workspace=outside_workspace)
        floor = self.floor.path_filter(tool, prefix=prefix, outside_workspace=outside_workspace)
        return _BothFilter(own, floor)


class _BothFilter(PathFilter):
    """What two PathFilters both show."""

    def __init__(self, first: PathFilter, second: PathFilter) -> None:
        self._first = first
        self._second = second
        self.prefix = first.prefix
        self.default = first.default and second.default

    def __call__(self, name: str) -> bool:
        return self._first(name) and self._second(name)

    def split(self, names: Sequence[str]) -> tuple[list[str], int]:
        shown, _ = self._first.split(names)
        if shown:
            shown, _ = self._second.split(shown)
        return shown, len(names) - len(shown)

    def shows_all(self, listing: str) -> bool:
        return self._first.shows_all(listing) and self._second.shows_all(listing)
