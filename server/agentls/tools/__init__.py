"""The agent's tools: read, write, edit, glob, grep, list, bash (see registry.default_tools)."""
