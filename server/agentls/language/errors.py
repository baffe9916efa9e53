"""What a language request raises when nothing can answer (re-exported by workspace.protocol,
where the Languages seam is: language/ sits below workspace/ and imports nothing of it)."""

from __future__ import annotations


class LanguageUnavailable(Exception):
    """No language server can answer: none for this file type or method, it failed to start, or
    it timed out. The message says which, in words for the model."""
