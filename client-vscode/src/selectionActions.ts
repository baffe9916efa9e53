// The agent's code actions on a selection, as VS Code offers them (issue 29 items 1-3): "Agent: edit
// here… (inline chat)" opens the inline chat at the selection (agentls.inlineChat); "Ask agent
// about this" puts the selection into the panel's prompt box as a chip (agentls.askAboutSelection,
// nothing sent); "Agent: fix the problems here" is a Quick Fix only where the editor reports
// problems, and its prompt names them; "Agent: fix all problems in this file" is a source action
// with the file's problems. The server's own versions of the first two are dropped from its answer
// (server.ts middleware); its other actions (refactor, plan, pending edits) stay.
import * as vscode from 'vscode';
import { fixInstruction, type Problem } from './problemText';

export const FIX_ALL_KIND = vscode.CodeActionKind.Source.append('agentls').append('fixAll');

const SEVERITY: Record<vscode.DiagnosticSeverity, Problem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

function problemOf(d: vscode.Diagnostic): Problem {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return { line: d.range.start.line, message: d.message, source: d.source, code, severity: SEVERITY[d.severity] };
}

/** Problems the agent is asked to fix: not agentls' own notes. */
function fixable(diagnostics: readonly vscode.Diagnostic[]): vscode.Diagnostic[] {
  return diagnostics.filter((d) => d.source !== 'agentls');
}

const wire = (r: vscode.Range): { start: { line: number; character: number }; end: { line: number; character: number } } => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

export class SelectionActions implements vscode.CodeActionProvider {
  static readonly metadata: vscode.CodeActionProviderMetadata = {
    providedCodeActionKinds: [vscode.CodeActionKind.Empty, vscode.CodeActionKind.QuickFix, FIX_ALL_KIND],
  };

  provideCodeActions(document: vscode.TextDocument, range: vscode.Range | vscode.Selection, context: vscode.CodeActionContext): vscode.CodeAction[] {
    if (document.uri.scheme !== 'file') return [];
    const path = vscode.workspace.asRelativePath(document.uri, false);
    const actions: vscode.CodeAction[] = [];
    // Inline chat at the selection (inlineChatWidget.ts): a prompt in the editor, the edit in place.
    const edit = new vscode.CodeAction('Agent: edit here… (inline chat)', vscode.CodeActionKind.Empty);
    edit.command = { title: edit.title, command: 'agentls.inlineChat', arguments: [document.uri, range] };
    actions.push(edit);
    const ask = new vscode.CodeAction('Ask agent about this', vscode.CodeActionKind.Empty);
    ask.command = { title: ask.title, command: 'agentls.askAboutSelection', arguments: [document.uri, range] };
    actions.push(ask);
    const here = fixable(context.diagnostics);
    if (here.length) {
      const fix = new vscode.CodeAction('Agent: fix the problems here', vscode.CodeActionKind.QuickFix);
      fix.diagnostics = here;
      const span = here.reduce<vscode.Range>((all, d) => all.union(d.range), range);
      const whole = new vscode.Range(span.start.line, 0, span.end.line, document.lineAt(span.end.line).range.end.character);
      fix.command = {
        title: fix.title,
        command: 'agent.runOnSelection',
        arguments: [{ uri: document.uri.toString(), range: wire(whole), instruction: fixInstruction(here.map(problemOf), false, path) }],
      };
      actions.push(fix);
    }
    const all = fixable(vscode.languages.getDiagnostics(document.uri));
    if (all.length) {
      const fixAll = new vscode.CodeAction(`Agent: fix all problems in this file (${all.length})`, FIX_ALL_KIND);
      fixAll.diagnostics = all;
      const last = Math.max(document.lineCount - 1, 0);
      fixAll.command = {
        title: fixAll.title,
        command: 'agent.runOnSelection',
        arguments: [
          {
            uri: document.uri.toString(),
            range: wire(new vscode.Range(0, 0, last, document.lineAt(last).range.end.character)),
            instruction: fixInstruction(all.map(problemOf), true, path),
          },
        ],
      };
      actions.push(fixAll);
    }
    return actions;
  }
}
