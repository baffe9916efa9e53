// The agent's code actions as VS Code offers them (issue 29 items 1-3): "Agent: edit here…" (the
// inline chat at the selection) and "Ask agent about this" everywhere (a chip in the panel, nothing sent), "Agent: fix the problems here" only where the
// editor reports problems and naming them, "Agent: fix all problems in this file" as a source
// action with the file's problems.
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { FIX_ALL_KIND, SelectionActions } from '../../src/selectionActions';
import { stub } from '../stubs/vscode';

const uri = vscode.Uri.parse('file:///work/demo/calc.py');
const lines = ['def mean(values):', '    return sum(values) / len(valus)', '', 'x: int = "one"'];
const document = {
  uri,
  lineCount: lines.length,
  lineAt: (line: number) => ({ range: new vscode.Range(line, 0, line, lines[line].length) }),
} as unknown as vscode.TextDocument;
const problem = (line: number, message: string, source: string, code: string): vscode.Diagnostic =>
  ({ range: new vscode.Range(line, 4, line, 10), message, source, code, severity: vscode.DiagnosticSeverity.Error }) as vscode.Diagnostic;
const undefinedName = problem(1, '"valus" is not defined', 'Pylance', 'reportUndefinedVariable');
const badType = problem(3, 'Type "str" is not assignable to "int"', 'Pylance', 'reportAssignmentType');
const context = (diagnostics: vscode.Diagnostic[]): vscode.CodeActionContext => ({ diagnostics }) as unknown as vscode.CodeActionContext;
const provider = new SelectionActions();

beforeEach(() => stub.reset());

describe("the agent's code actions", () => {
  it('offer only the inline chat and "Ask agent about this" where there is no problem', () => {
    const range = new vscode.Range(0, 0, 0, 5);
    const actions = provider.provideCodeActions(document, range, context([]));
    expect(actions.map((a) => a.title)).toEqual(['Agent: edit here… (inline chat)', 'Ask agent about this']);
    expect(actions[0].command).toEqual({ title: 'Agent: edit here… (inline chat)', command: 'agentls.inlineChat', arguments: [uri, range] });
    expect(actions[1].command).toEqual({ title: 'Ask agent about this', command: 'agentls.askAboutSelection', arguments: [uri, range] });
  });

  it('offer "Agent: fix the problems here" as a Quick Fix on a problem, its prompt naming each problem', () => {
    const actions = provider.provideCodeActions(document, new vscode.Range(1, 0, 1, 0), context([undefinedName]));
    const fix = actions.find((a) => a.title === 'Agent: fix the problems here');
    expect(fix?.kind).toBe(vscode.CodeActionKind.QuickFix);
    expect(fix?.diagnostics).toEqual([undefinedName]);
    const [params] = fix?.command?.arguments as [{ uri: string; range: unknown; instruction: string }];
    expect(fix?.command?.command).toBe('agent.runOnSelection');
    expect(params.uri).toBe(uri.toString());
    // The whole lines of the selection and the problems.
    expect(params.range).toEqual({ start: { line: 1, character: 0 }, end: { line: 1, character: lines[1].length } });
    expect(params.instruction).toBe(
      'Fix the problems the editor reports in the selected code of calc.py:\n- line 2 (Pylance reportUndefinedVariable, error): "valus" is not defined',
    );
  });

  it("leave agentls' own notes out of what there is to fix", () => {
    const own = { ...undefinedName, source: 'agentls' } as vscode.Diagnostic;
    const actions = provider.provideCodeActions(document, new vscode.Range(1, 0, 1, 0), context([own]));
    expect(actions.map((a) => a.title)).toEqual(['Agent: edit here… (inline chat)', 'Ask agent about this']);
  });

  it('offer "fix all problems in this file" as a source action with every problem of the file', () => {
    stub.diagnostics.set(uri.toString(), [undefinedName, badType]);
    const actions = provider.provideCodeActions(document, new vscode.Range(0, 0, 0, 0), context([]));
    const all = actions.find((a) => a.kind === FIX_ALL_KIND);
    expect(all?.title).toBe('Agent: fix all problems in this file (2)');
    expect(FIX_ALL_KIND.value).toBe('source.agentls.fixAll');
    const [params] = all?.command?.arguments as [{ range: unknown; instruction: string }];
    expect(params.range).toEqual({ start: { line: 0, character: 0 }, end: { line: 3, character: lines[3].length } });
    expect(params.instruction.split('\n')).toEqual([
      'Fix the problems the editor reports in calc.py:',
      '- line 2 (Pylance reportUndefinedVariable, error): "valus" is not defined',
      '- line 4 (Pylance reportAssignmentType, error): Type "str" is not assignable to "int"',
    ]);
  });

  it('offer nothing on a document that is not a file', () => {
    const other = { ...document, uri: uri.with({ scheme: 'agentls-proposed' }) } as vscode.TextDocument;
    expect(provider.provideCodeActions(other, new vscode.Range(0, 0, 0, 0), context([undefinedName]))).toEqual([]);
  });
});
