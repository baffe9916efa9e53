"""A prompt's context file (the editor's @file): a link is attached only when it stays what the
user picked. A link in the workspace to a file outside it, or to one the `read` rules do not allow
without asking (a secret such as .env), is refused: the user chose a name, not that file."""

from __future__ import annotations

import os
from pathlib import Path

from agentls.session.policy import Policy


def refused_link(path: Path, root: Path, policy: Policy) -> str | None:
    """Why the context file at `path` is not attached, or None to attach it. Only a path in the
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
    if policy.rules_with([]).evaluate("read", rel, root=root) != "allow":
        return (
            f"{named.name} is a link to {rel}, which is not read without asking (a secret, or a "
            "rule that asks or denies); it is not attached"
        )
    return None
