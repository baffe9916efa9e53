"""Where the agent's files live: the Workspace protocol the tools write through, its disk
implementation, and the rule that a change never lands on a file that changed while it waited.

- protocol.py: Workspace (read_text, write_text, delete) and EditOutcome;
- changed.py: the "file changed while the change waited for approval" check;
- disk.py: DiskWorkspace, the plain filesystem (the CLI's), verifying each write (agentls.verify).

The language server's workspace (editor buffers) is agentls.lsp.workspace.LspWorkspace.
"""
