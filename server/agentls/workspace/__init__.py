"""Where the agent's files live: the seams the tools and the front ends meet at, the raw access to
the disk, and the rule that a change never lands on a file that changed while it waited. Nothing
here verifies a change (agentls.verify.workspace does, one pipeline for every front end).

- protocol.py: Workspace (what the tools read and write through), FileAccess (what a front end
  implements: raw read, write, delete, all-or-none where it can, its editor's diagnostics) and
  EditOutcome;
- changed.py: the "file changed while the change waited for approval" check;
- disk.py: DiskFiles, the plain filesystem's FileAccess (the CLI's);
- hunks.py: a change's hunks (review, partial accept).

The editors' FileAccess: agentls.lsp.workspace.LspWorkspace, agentls.acp.workspace.AcpWorkspace.
"""
