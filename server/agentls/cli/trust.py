"""`agentls trust [DIR]`, `agentls trust --revoke [DIR]`, `agentls trust --list`, and the question
`agentls run` asks at a terminal about a workspace config the user has not confirmed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentls.trust import TrustStore, TrustStoreError, enabled_by, mcp_json, workspace_config

if TYPE_CHECKING:
    from agentls.config import Settings
    from agentls.trust_pending import ConfigKind, PendingConfig

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


# What a workspace's trust lets count besides its config: its skills, agents, commands, hooks.
CUSTOMIZATION_DIRS = (".claude", ".agents", ".opencode", ".agentls")


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"agentls: {message}", file=sys.stderr)
    return code


def trust_command(args: argparse.Namespace) -> int:
    from agentls.cli.hooks import trust_hook_files
    from agentls.hooks.config import claude_workspace_files

    store = TrustStore()
    try:
        if args.list:
            return _list(store)
        raw = args.dir or os.getcwd()
        root = Path(raw)
        if not root.exists():
            return _fail(f"{raw}: no such directory")
        if not root.is_dir():
            return _fail(f"{raw}: not a directory")
        file = workspace_config(root)
        servers = mcp_json(root)
        if args.revoke:
            claude = claude_workspace_files(root)  # their hooks (agentls.hooks)
            revoked = [f for f in (file, servers, *claude) if store.revoke(f)]
            for each in revoked:
                print(f"No longer trusted: {each}")
            if revoked:
                return EXIT_OK
            return _fail(f"{file} was not trusted (`agentls trust --list` lists what is)")
        if servers.is_file():
            code = _trust_mcp_json(store, servers)
            if code != EXIT_OK or not file.exists():
                return code
        code = _trust(store, file)
        if code == EXIT_OK:
            trust_hook_files(store, root)  # the workspace's .claude/settings*.json (hooks)
        return code
    except TrustStoreError as exc:
        return _fail(str(exc), EXIT_FAILED)


def _trust(store: TrustStore, file: Path) -> int:
    from agentls.config import Settings, parse_json_object, read_workspace_bytes

    try:
        data = read_workspace_bytes(file)
        if data is None and file.exists():
            return _fail(f"{file} is not a regular file that can be read")
        root = file.parent.parent
        if data is None and not any((root / d).is_dir() for d in CUSTOMIZATION_DIRS):
            return _fail(
                f"nothing to trust in {root}: no .agentls/config.json, and no skills, agents, "
                "commands or hooks (.claude/, .agents/, .opencode/)"
            )
        if data is None:
            # Nothing configured, but trust is what lets the workspace's own skills, agents,
            # commands and hooks count: an empty config holds it.
            file.parent.mkdir(exist_ok=True)
            data = b"{}\n"
            file.write_bytes(data)
            print(f"Created {file} (empty) to hold this workspace's trust.")
        layer = parse_json_object(file, data)
    except ValueError as exc:
        return _fail(f"cannot trust it: {exc}")
    # Trusting a file that says something invalid would only trade one error for another.
    from pydantic import ValidationError

    try:
        Settings.model_validate(layer)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        return _fail(f"cannot trust {file}: {where}: {error['msg']}")
    except ValueError as exc:
        return _fail(f"cannot trust {file}: {exc}")
    previous = store.state(file, data)
    _show_change(store, file, "config", data)
    store.trust(file, data)
    lines = enabled_by(layer)
    again = " again (it changed since it was trusted)" if previous == "changed" else ""
    print(f"Trusted{again}: {file} (this exact content; an edit needs trusting again)")
    if lines:
        print("It enables:")
        for line in lines:
            print(f"  {line}")
    else:
        print("It enables nothing an untrusted workspace could not already do.")
    _say_workspace_customizations(file.parent.parent)
    return EXIT_OK


def _say_workspace_customizations(root: Path) -> None:
    """What trusting the workspace lets count besides its config: its own skills."""
    from agentls.session.skills import load_skills

    nowhere = root / ".agentls" / "no-such-folder"  # only the workspace's own are wanted
    skills, problems = load_skills(root, nowhere, nowhere, True, nowhere)
    own = [s for s in skills.values() if s.source == "workspace"]
    if own:
        print(f"Its skills now count: {', '.join(s.name for s in own)}")
    for problem in problems:
        print(f"  (not used: {problem})")


def _trust_mcp_json(store: TrustStore, file: Path) -> int:
    """Trust the workspace's .mcp.json (its MCP servers then start in this workspace)."""
    from agentls.config import parse_json_object, read_workspace_bytes

    try:
        data = read_workspace_bytes(file)
        if data is None:
            return _fail(f"no {file} to trust")
        servers = parse_json_object(file, data).get("mcpServers") or {}
    except ValueError as exc:
        return _fail(f"cannot trust it: {exc}")
    if not isinstance(servers, dict):
        return _fail(f"cannot trust {file}: mcpServers: must be an object")
    _show_change(store, file, "mcp", data)
    store.trust(file, data)
    print(f"Trusted: {file} (this exact content; an edit needs trusting again)")
    for name, entry in servers.items():
        shown = "?"
        if isinstance(entry, dict):
            words = [str(entry.get("command", "?")), *map(str, entry.get("args") or [])]
            shown = str(entry.get("url") or " ".join(words))
        print(f"  MCP server {name}: {shown}")
    return EXIT_OK


def _show_change(store: TrustStore, file: Path, kind: ConfigKind, data: bytes) -> None:
    """What is being confirmed: the diff from the content confirmed before (or the whole file)."""
    from agentls.cli.terminal import visible
    from agentls.trust_pending import pending_config

    pending = pending_config(store, file, kind, data)
    if pending is not None:
        print(visible(pending.diff()), end="")


def _list(store: TrustStore) -> int:
    from agentls.config import read_workspace_bytes

    records = store.records()
    if not records:
        print("No trusted workspace files.")
        return EXIT_OK
    print(f"Trusted workspace files ({store.path}):")
    for record in sorted(records.values(), key=lambda r: r.path):
        try:
            data = read_workspace_bytes(Path(record.path))
        except ValueError:
            data = None
        if data is None:
            note = "  (gone)"
        elif store.state(Path(record.path), data) != "trusted":
            note = "  (changed since: not trusted now)"
        else:
            note = ""
        print(f"  {record.path}  since {record.trusted_at}{note}")
    return EXIT_OK


# ---- `agentls run`: the question at a terminal ---------------------------------------------


async def confirm_at_terminal(
    root: Path,
    settings: Settings,
    overrides: dict[str, Any],
    *,
    interactive: bool,
    out: TextIO | None = None,
) -> Settings:
    """Before `agentls run` starts: for each workspace config file new or changed since the user
    confirmed it (and not one they chose to keep ignoring), show the change and ask at the
    terminal, one key: `y` confirms exactly what was shown, and the settings are loaded again;
    `n` (or the end of input) keeps ignoring it. What was typed before the question is
    discarded and Enter answers nothing (cli.printing.read_terminal_key). Without a terminal
    (or with --yes, which never confirms a config) nothing is asked: the notice says how."""
    from agentls.cli.printing import read_terminal_key
    from agentls.cli.terminal import visible
    from agentls.config import load_settings
    from agentls.trust_pending import confirm, keep_ignoring

    asked = [p for p in settings.pending_configs if not p.declined]
    if not asked or not interactive:
        return settings
    stream = out or sys.stderr
    changed = False
    try:
        for pending in asked:

            def show(pending: PendingConfig = pending) -> None:
                # The file is the repository's: its control characters are shown, never sent.
                stream.write("\n" + visible(pending.message()) + "\n")
                stream.write("Apply it? [y]es / [n]o, keep ignoring it: ")
                stream.flush()

            key = await read_terminal_key("yn", show)
            stream.write((key or "") + "\n")
            if key == "y":
                if confirm(pending):
                    stream.write(f"Applied: {pending.file} (this exact content).\n")
                    changed = True
                else:
                    stream.write(f"{pending.file} changed again meanwhile: not applied.\n")
            else:
                keep_ignoring(pending)
                stream.write(f"Kept ignoring it (`agentls trust {root}` confirms it later).\n")
            stream.flush()
    except TrustStoreError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
    if not changed:
        return settings
    try:
        return load_settings(root, overrides)
    except ValueError as exc:
        print(f"agentls: bad configuration: {exc}", file=sys.stderr)
        return settings


async def resolve_settings(args: argparse.Namespace) -> tuple[Path, Settings] | None:
    """The workspace root and its settings with run's options over them (None: a usage error,
    already said); a workspace config new or changed since the user confirmed it is asked about
    at a terminal before anything runs (never with --yes), otherwise it stays ignored and the
    settings' notice says so."""
    from agentls.cli.workspace import workspace_settings

    review = getattr(args, "review", None)
    overrides: dict[str, Any] = {"review": review} if review else {}
    if args.model:
        overrides["model"] = args.model
    if getattr(args, "max_steps", None):
        overrides["maxSteps"] = args.max_steps
    found = workspace_settings(args.cwd, overrides)
    if found is None:
        return None
    root, settings = found
    interactive = sys.stdin.isatty() and not getattr(args, "yes", False)
    settings = await confirm_at_terminal(root, settings, overrides, interactive=interactive)
    return root, settings
