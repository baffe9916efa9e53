"""The policy in force: the settings, the permission rules they make, and the project's grants.

One Policy per Agent, shared with its turns and tool calls and updated in place: a settings
change (Agent.update_settings) or a grant counts from the next tool call on, mid-turn too.
"""

from __future__ import annotations

from pathlib import Path

from agentls.config import Settings
from agentls.permission.rules import PermissionRules, Rule, secret_globs
from agentls.store import Store
from agentls.trust import restricted


def rules_of(settings: Settings) -> PermissionRules:
    """The configured rules, with the secret globs (built-in and `secretPatterns`) asking."""
    rules = PermissionRules.from_config(
        settings.permissions, secret_patterns=secret_globs(settings.secret_patterns)
    )
    # An untrusted workspace config's deny and ask rules: a floor that only ever tightens.
    return restricted(rules, settings.workspace_restrictions)


def stored_rule(tool: str, pattern: str | None, action: str, exact: bool) -> Rule:
    """A grant read from the store as a rule (exact: a literal pattern; False for the grants
    of databases from before the flag, which keep their glob meaning)."""
    return Rule(tool=tool, pattern=pattern, action=action, exact=exact)  # type: ignore[arg-type]


class Policy:
    """The settings and rules of one workspace root."""

    def __init__(self, settings: Settings, root: str) -> None:
        self.root = root
        self.settings = settings
        self.rules = rules_of(settings)
        # The grants given "always, in this project" for this root (Store.list_project_grants),
        # read again at each turn: after the configured rules and before each session's own
        # grants (see CallContext.rules).
        self.project_grants: list[Rule] = []
        # The rules of the paths in each other workspace folder, made from that folder's own
        # config (session/folder_access.py); a folder not here follows `rules`.
        self.folder_rules: dict[Path, PermissionRules] = {}
        # Each other folder, in the workspace's order, and whether it is trusted: its agent and
        # command files count only then (session/agent_files.py, commands.py).
        self.other_folders: list[tuple[Path, bool]] = []

    def update(self, settings: Settings) -> None:
        self.settings = settings
        self.rules = rules_of(settings)

    def update_folders(self, settings: dict[Path, Settings]) -> None:
        """The settings of each workspace folder but the first (its config file's): their path
        rules count for the paths in it from the next tool call on."""
        self.folder_rules = {root: rules_of(s) for root, s in settings.items()}
        self.other_folders = [(root, s.workspace_trusted) for root, s in settings.items()]

    def rules_with(self, session_grants: list[Rule]) -> PermissionRules:
        """The configured rules, then the project's grants, then the session's."""
        return self.rules.extended([*self.project_grants, *session_grants])

    async def load_project_grants(self, store: Store) -> None:
        """Read this root's project grants (given here, or by another agentls process since)."""
        self.project_grants = [
            stored_rule(g.tool, g.pattern, g.action, g.exact)
            for g in await store.list_project_grants(self.root)
        ]
