"""`agentls serve`: the agent over LSP, as a transport and features (the model: jedi-language-server).

- server.py: builds the server and wires the features to it; `serve()` runs it on stdio;
- transport.py: JSON-RPC hardened (every request answered, params validated naming the field,
  broken frames), and the stdio loop;
- agent_server.py: AgentServer, what the features share (root, settings, capabilities, the Agent);
- capabilities.py: what the client can do, read at initialize;
- settings.py: initialize, initialized, configuration changes, workspace trust, shutdown;
- sessions.py: agent/newSession, listSessions, getMessages, prompt, cancel, revert;
- approvals.py: agent/approve and how a permission question is shown in the editor;
- editor.py: documents, code actions, agent.runOnSelection, agent/diagnostics, prompt context;
- relay.py: the Agent's events as agent/event notifications, and work-done progress;
- workspace.py: LspWorkspace, raw access to the editor's buffers (verified by agentls.verify);
- textedit.py: text changes as LSP edits, in the client's position units;
- client.py: AgentClient, a client of this protocol (the demo's, the benchmarks' and the tests').

Front-end rules: features delegate to the Agent (agentls.session), never to store/ or permission/.
"""
