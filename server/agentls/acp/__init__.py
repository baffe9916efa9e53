"""`agentls acp`: the Agent Client Protocol front end (Zed, JetBrains, Neovim's CodeCompanion and
avante.nvim, Emacs' agent-shell), over the same Agent as the CLI and the language server.

The modules, one concern each:
- server.py: the connection's methods (initialize, session/new, load, list, prompt, cancel), one
  Agent per workspace root;
- updates.py: core events to session/update notifications, in order; a stored history replayed;
- tools.py: a tool call in ACP's words (kind, locations, diff and output content);
- permissions.py: questions as session/request_permission, answered through Agent.approve;
- prompt.py: a prompt's content blocks to the Agent's text and context;
- workspace.py: the editor's buffers through fs/read_text_file and fs/write_text_file.
- transport.py: newline-delimited JSON on stdin/stdout; a broken frame gets an error.
"""
