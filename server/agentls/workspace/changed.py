"""A change is made from the text the tool read; an approval may keep it waiting. If the file is
no longer that text when the change is applied, applying it would erase what changed meanwhile
(the user's typing, a formatter): the change is refused, and the model told to read it again."""

from __future__ import annotations


def changed_while_waiting(
    old_text: str | None, current: str | None, waited: str = "for approval"
) -> str | None:
    """None when the file is still old_text (None: it did not exist); else why the change is not
    applied, for EditOutcome.reason. `waited` says what the change waited for."""
    if current == old_text:
        return None
    if old_text is None:
        what = "was created"
    elif current is None:
        what = "was deleted"
    else:
        what = "changed"
    return f"the file {what} while the change waited {waited}; read it again and redo the change"
