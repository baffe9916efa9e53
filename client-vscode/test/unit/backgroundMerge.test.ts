// A background session's conflict resolved in VS Code (backgroundMerge.ts): the merge editor's
// arguments (base: the file at the session's base, inputs: the user's text and the branch's
// clashing change, output: the user's own file), its result reset to the automatic merge once it
// is the active tab; where there is no merge editor, the conflict marked in the buffer with one
// small edit (not saved); and nothing at all on a file the user changed since.
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { calls, stub } from '../stubs/vscode';
import { BackgroundConflicts, RESET_RESULT_COMMAND } from '../../src/backgroundMerge';
import { MERGE_EDITOR_COMMAND, ReviewViews, VERSION_SCHEME } from '../../src/reviewAfter';

type Input = { uri: vscode.Uri; title: string };
const YOURS = 'a\nmine\nc\n';
const MERGE = {
  uri: 'file:///work/demo/app.txt',
  base: 'a\nb\nc\n',
  yours: YOURS,
  theirs: 'a\ntheirs\nc\n',
  marked: 'a\n<<<<<<< yours\nmine\n=======\ntheirs\n>>>>>>> agentls/x\nc\n',
};

/** The user's file as an open document whose text a test changes (as the merge editor's reset does). */
function document(text: string): { text: string } {
  const state = { text };
  const uri = vscode.Uri.parse(MERGE.uri);
  const positionAt = (offset: number): vscode.Position => {
    const before = state.text.slice(0, offset).split('\n');
    return new vscode.Position(before.length - 1, before[before.length - 1].length);
  };
  stub.textDocuments.push({ uri, getText: () => state.text, version: 1, isDirty: false, lineCount: state.text.split('\n').length, positionAt });
  return state;
}

let views: ReviewViews;
beforeEach(() => {
  stub.reset();
  views = new ReviewViews();
});

describe('a background conflict', () => {
  it('opens the merge editor on the user file with the three texts, then resets its result', async () => {
    const doc = document(YOURS);
    const original = vscode.commands.executeCommand;
    (vscode.commands as { executeCommand: unknown }).executeCommand = async (command: string, ...args: unknown[]) => {
      calls.push({ command, args });
      if (command === MERGE_EDITOR_COMMAND) {
        const a = args[0] as { output: vscode.Uri; input1: Input };
        stub.activeTab = { input: { result: a.output, input1: a.input1.uri } }; // the merge editor's tab
      }
      if (command === RESET_RESULT_COMMAND) doc.text = 'a\nb\nc\n'; // the conflict left at its base
      return undefined;
    };
    try {
      const done = await new BackgroundConflicts(views, async () => undefined).resolve(MERGE, 'agentls/x', 'merge-editor');
      expect(calls.map((c) => c.command)).toEqual([MERGE_EDITOR_COMMAND, RESET_RESULT_COMMAND]);
      const args = calls[0].args[0] as { base: vscode.Uri; input1: Input; input2: Input; output: vscode.Uri };
      expect(args.output.toString()).toBe(MERGE.uri);
      for (const uri of [args.base, args.input1.uri, args.input2.uri]) {
        expect(uri.scheme).toBe(VERSION_SCHEME);
        expect(uri.path).toBe('/work/demo/app.txt');
      }
      expect(views.provideTextDocumentContent(args.base)).toBe(MERGE.base);
      expect(views.provideTextDocumentContent(args.input1.uri)).toBe(YOURS);
      expect(views.provideTextDocumentContent(args.input2.uri)).toBe(MERGE.theirs);
      expect([args.input1.title, args.input2.title]).toEqual(['Yours', 'agentls/x']);
      expect(done.how).toBe('merge-editor');
      expect(done.note).toContain("pick each conflict's side (or edit the result), then save it");
      expect(stub.appliedEdits).toEqual([]); // nothing written by agentls itself
    } finally {
      (vscode.commands as { executeCommand: unknown }).executeCommand = original;
    }
  });

  it('does not reset a merge editor that is not the active tab (another one, or not open yet)', async () => {
    document(YOURS);
    stub.activeTab = { input: { result: vscode.Uri.parse('file:///work/demo/other.txt'), input1: 'x' } };
    const waits: number[] = [];
    const done = await new BackgroundConflicts(views, async (ms) => void waits.push(ms)).resolve(MERGE, 'agentls/x', 'merge-editor');
    expect(calls.map((c) => c.command)).toEqual([MERGE_EDITOR_COMMAND]);
    expect(waits.length).toBeGreaterThan(1); // it waited for its tab, then gave up
    expect(done.how).toBe('merge-editor');
    expect(done.note).toContain('its result your text');
  });

  it('without a merge editor, marks the conflict in the buffer with one small edit, not saved', async () => {
    document(YOURS);
    const conflicts = new BackgroundConflicts(views);
    expect(await conflicts.mergeEditor()).toBe(false);
    stub.commandIds = [MERGE_EDITOR_COMMAND];
    expect(await conflicts.mergeEditor()).toBe(true);
    const done = await conflicts.resolve(MERGE, 'agentls/x', 'markers');
    const [edit] = stub.appliedEdits as unknown as { replacements: { range: vscode.Range; text: string }[] }[];
    const [{ range, text }] = edit.replacements;
    // Only the clashing line is replaced: the user's other lines (and cursor) stay.
    expect([range.start.line, range.start.character, range.end.line, range.end.character]).toEqual([1, 0, 1, 4]);
    expect(YOURS.slice(0, 2) + text + YOURS.slice(6)).toBe(MERGE.marked);
    expect(calls.map((c) => c.command)).toEqual(['showTextDocument']);
    expect(done).toEqual({ how: 'markers', note: expect.stringContaining('(not saved)') });
  });

  it('does nothing to a file the user changed since the changes were brought in', async () => {
    document('a\nmine, and more typing\nc\n');
    for (const how of ['merge-editor', 'markers'] as const) {
      const done = await new BackgroundConflicts(views).resolve(MERGE, 'agentls/x', how);
      expect(done.how).toBe('changed');
      expect(done.note).toContain('bring them in again');
    }
    expect(calls).toEqual([]);
    expect(stub.appliedEdits).toEqual([]);
  });

  it('says so when the buffer refused the edit', async () => {
    document(YOURS);
    stub.applyEditAnswer = false;
    const done = await new BackgroundConflicts(views).resolve(MERGE, 'agentls/x', 'markers');
    expect(done).toEqual({ how: 'failed', note: 'app.txt could not be edited: nothing was changed.' });
    expect(calls).toEqual([]);
  });
});
