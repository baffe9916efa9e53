"""The agent protocol over LSP: every params, result and event as a pydantic model."""
