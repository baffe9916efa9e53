"""The words of the permission rules, shared by every part of permission/: a Rule, the actions
it may give (Action) and the answers a decision gives (Decision)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

Action = Literal["allow", "ask", "deny", "sandboxed"]
Decision = Literal["allow", "ask", "deny"]
# How strict each action is ("sandboxed" allows, inside the sandbox): the stricter answer wins.
SEVERITY: dict[str, int] = {"allow": 0, "sandboxed": 0, "ask": 1, "deny": 2}


class Rule(BaseModel):
    """`pattern`: a path glob for file tools, a command prefix for bash; None matches everything
    (inside the workspace). `exact`: the pattern is the one literal subject it matches (a path
    compared as a string, no glob, no `~`, no tree below it; for bash the whole normalised line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    pattern: str | None = None
    action: Action
    exact: bool = False

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if self.action == "sandboxed" and self.tool != "bash":
            raise ValueError(
                f'"sandboxed" applies only to bash (got it for {self.tool!r}); use allow, ask or deny'
            )
        if self.exact and self.pattern is None:
            raise ValueError("an exact rule needs a pattern")
        return self
