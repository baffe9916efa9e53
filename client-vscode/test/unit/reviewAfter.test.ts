// VS Code's side of conflicts and review "after" (reviewAfter.ts): the merge editor's arguments
// (base: before the agent, inputs: the agent's and the user's, output: the real file), the
// virtual documents' texts, the diff when there is no merge editor or no file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { calls, stub } from '../stubs/vscode';
import { MERGE_EDITOR_COMMAND, ReviewViews, VERSION_SCHEME } from '../../src/reviewAfter';

type Input = { uri: vscode.Uri; title: string };
const original = vscode.commands.executeCommand;
let views: ReviewViews;

beforeEach(() => {
  stub.reset();
  views = new ReviewViews();
});
afterEach(() => {
  (vscode.commands as { executeCommand: unknown }).executeCommand = original;
  views.dispose();
});

describe('conflicts', () => {
  it('opens the merge editor on the real file with the three versions', async () => {
    await views.openConflict({ path: 'src/notes.md', before: 'before\n', agent: 'agent\n', current: 'mine\n' });
    expect(calls.map((c) => c.command)).toEqual([MERGE_EDITOR_COMMAND]);
    const args = calls[0].args[0] as { base: vscode.Uri; input1: Input; input2: Input; output: vscode.Uri };
    expect(args.output.toString()).toBe('file:///work/demo/src/notes.md');
    for (const uri of [args.base, args.input1.uri, args.input2.uri]) {
      expect(uri.scheme).toBe(VERSION_SCHEME);
      expect(uri.path).toBe('/work/demo/src/notes.md'); // the file's name: its language
    }
    expect(views.provideTextDocumentContent(args.base)).toBe('before\n');
    expect(views.provideTextDocumentContent(args.input1.uri)).toBe('agent\n');
    expect(views.provideTextDocumentContent(args.input2.uri)).toBe('mine\n');
    expect(args.input1.title).toBe("agentls's version");
    expect(args.input2.title).toBe('Your version');
    expect(stub.infoMessages[0]).toContain('notes.md after the agent');
  });

  it('opens nothing on a path that is no longer a file of its own (a link now)', async () => {
    await views.openConflict({ path: '/abs/a.txt', before: 'one\n', agent: 'two\n', current: '\0(not a file of its own now: a link, a directory or a device)' });
    // Only the virtual versions: no merge editor with the real path as its result, no editor on it.
    expect(calls.map((c) => c.command)).toEqual(['vscode.diff']);
    const [before, agent] = calls[0].args as [vscode.Uri, vscode.Uri];
    expect([before.scheme, agent.scheme]).toEqual([VERSION_SCHEME, VERSION_SCHEME]);
    expect(views.provideTextDocumentContent(before)).toBe('one\n');
    expect(views.provideTextDocumentContent(agent)).toBe('two\n');
    expect(stub.infoMessages[0]).toContain('no longer a file of its own');
  });

  it('takes the file uri agent/revert names a conflict by', async () => {
    await views.openConflict({ path: 'file:///work/demo/calc%20two.py', before: 'a\n', agent: 'b\n', current: 'c\n' });
    const args = calls[0].args[0] as { base: vscode.Uri; output: vscode.Uri };
    expect(args.output.toString()).toBe('file:///work/demo/calc%20two.py');
    expect(args.base.scheme).toBe(VERSION_SCHEME);
    expect(args.base.path).toBe('/work/demo/calc two.py');
    expect(stub.infoMessages[0]).toContain('you changed calc two.py after');
  });

  it('falls back to a diff of the agent against the file when the merge editor fails', async () => {
    (vscode.commands as { executeCommand: unknown }).executeCommand = async (command: string, ...args: unknown[]) => {
      calls.push({ command, args });
      if (command === MERGE_EDITOR_COMMAND) throw new Error("command '_open.mergeEditor' not found");
      return undefined;
    };
    await views.openConflict({ path: '/abs/calc.py', before: null, agent: 'agent\n', current: 'mine\n' });
    expect(calls.map((c) => c.command)).toEqual([MERGE_EDITOR_COMMAND, 'vscode.diff']);
    const [agent, current, title] = calls[1].args as [vscode.Uri, vscode.Uri, string];
    expect(views.provideTextDocumentContent(agent)).toBe('agent\n');
    expect(current.toString()).toBe('file:///abs/calc.py');
    expect(title).toContain('calc.py');
    expect(stub.infoMessages[0]).toContain('not overwritten');
  });

  it('shows a diff when the user deleted the file (no output for a merge)', async () => {
    await views.openConflict({ path: 'gone.py', before: 'a\n', agent: 'b\n', current: null });
    expect(calls.map((c) => c.command)).toEqual(['vscode.diff']);
    const [agent, current] = calls[0].args as [vscode.Uri, vscode.Uri];
    expect(views.provideTextDocumentContent(agent)).toBe('b\n');
    expect(current.scheme).toBe(VERSION_SCHEME);
    expect(views.provideTextDocumentContent(current)).toBe('');
  });
});

describe('review after', () => {
  it('opens a file as its base against the file now', async () => {
    await views.openReviewDiff({ path: 'calc.py', base: 'a\n', agent: 'A\n', hunks: [] });
    const [base, file] = calls[0].args as [vscode.Uri, vscode.Uri];
    expect(calls[0].command).toBe('vscode.diff');
    expect(views.provideTextDocumentContent(base)).toBe('a\n');
    expect(file.toString()).toBe('file:///work/demo/calc.py');
  });
});
