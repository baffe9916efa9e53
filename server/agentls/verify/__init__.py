"""Verification of edits: what an edit broke (or fixed), told to the model in its tool result.

- checks.py: agentls' own checks (Python compiles, JSON parses), needing no editor;
- commands.py: the trusted `verifyCommands`, run after an edit;
- diagnostics.py: before/after: the new problems an edit introduced, in words;
- board.py: diagnostics an editor pushes (agent/diagnostics), and waiting for the push that
  answers an edit (settled, never a stale version; short for file types never pushed for);
- workspace.py: VerifiedWorkspace, the one edit pipeline under every front end (conflict check,
  problems before, reach, write, problems after, all-or-none with put-back); DiskWorkspace;
- before_after.py: the edited file's problems before and after (editor pushes, or own checks
  and a language server's pulled diagnostics);
- edit.py: the Verifier (own checks before and after, the verifyCommands);
- served.py: a configured language server's diagnostics of the edited file;
- reach.py: an edit's reach: the definitions it changes, the other files that use them (the
  language servers' documentSymbol and references) and their new errors;
- pycalls.py: agentls' own check of a Python definition's uses (the name still there, the calls
  still fitting its signature), for files no language server reports on.
- turn_edits.py: what a session's turn changed (each file's first baseline, the files its edits'
  reach compared), taken again for the finish gate (session/finish_gate.py).

Plain code: no pygls, no front end. Agent.open builds every session's workspace on
VerifiedWorkspace; the front ends only give it their FileAccess.
"""
