"""agentls: a coding agent hosted in a language server."""

__version__ = "0.1.0"
