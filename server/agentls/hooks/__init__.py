"""Hooks in Claude Code's settings format: the user's programs run at points of a session
(before and after a tool call, at a prompt, when the agent would stop, ...), fed the event as
JSON on stdin, answering by exit code and JSON on stdout, as Claude Code's hooks reference
documents. config.py finds and parses them, names.py maps agentls's tools to Claude Code's names
and keys, runner.py runs one command and reads its answer. session/hooks.py fires them in a
session."""
