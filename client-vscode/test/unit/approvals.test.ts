import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { ApprovalController, PROPOSED_SCHEME } from '../../src/approvals';
import { AgentHost, type AgentConnection } from '../../src/host';
import type { AgentEvent, PermissionRequestEvent } from '../../src/protocol/generated';
import { calls, stub } from '../stubs/vscode';
import { loadFixture } from '../support/fixture';

const fixture = loadFixture();
const editRequest = fixture.events.find(
  (e): e is PermissionRequestEvent => e.type === 'permission-request' && e.tool === 'edit',
)!;
const calcUri = (fileChangesUri(editRequest));
const CALC = readSample();

function fileChangesUri(event: PermissionRequestEvent): string {
  const change = (event.edit as { documentChanges: { textDocument: { uri: string } }[] }).documentChanges[0];
  return change.textDocument.uri;
}

function readSample(): string {
  // The demo project's calc.py as it was before the fix (what the recorded edit applies to).
  const read = fixture.events.find((e) => e.type === 'tool-result' && e.tool === 'read');
  if (read?.type !== 'tool-result') throw new Error('no read in the fixture');
  const lines = read.output.split('\n').filter((l) => /^\s+\d+\t/.test(l));
  return lines.map((l) => l.replace(/^\s+\d+\t/, '')).join('\n') + '\n';
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

let approvals: { method: string; params: unknown }[];
let host: AgentHost;
let controller: ApprovalController;

beforeEach(async () => {
  stub.reset();
  stub.config.set('approvals.openDiff', true); // most tests here look at the diff editor's documents
  approvals = [];
  const server: AgentConnection = {
    request: (method, params) => {
      // Only the answers: a host's session refresh (150 ms after a turn event) may land in a later test.
      if (method === 'agent/approve') approvals.push({ method, params });
      if (method === 'agent/listSessions') return Promise.resolve({ sessions: [] } as never);
      return Promise.resolve({} as never);
    },
  };
  host = new AgentHost(
    { post: () => undefined, showError: () => undefined, openDiff: () => undefined, openFile: () => undefined },
    { get: () => undefined, update: () => Promise.resolve() },
  );
  await host.connected(server);
  approvals = [];
  controller = new ApprovalController(host, (u) => vscode.Uri.parse(u), () => undefined);
  stub.files.set(calcUri, CALC);
});

async function request(): Promise<void> {
  const upTo = fixture.events.indexOf(editRequest);
  for (const event of fixture.events.slice(0, upTo + 1)) host.handleEvent(event as AgentEvent);
  await flush();
}

describe('a proposed edit', () => {
  it('opens the diff editor: the file as it is vs. the proposed result', async () => {
    await request();
    const diff = calls.find((c) => c.command === 'vscode.diff');
    expect(diff).toBeDefined();
    const [left, right, title] = diff!.args as [vscode.Uri, vscode.Uri, string];
    expect(left.toString()).toBe(calcUri);
    expect(right.scheme).toBe(PROPOSED_SCHEME);
    expect(right.query).toBe(`request=${editRequest.requestId}`);
    expect(title).toBe('calc.py ↔ proposed by agentls');
    const proposed = controller.provideTextDocumentContent(right);
    expect(proposed).toBe(CALC.replace('ordered[middle] + ordered[middle + 1]', 'ordered[middle - 1] + ordered[middle]'));
  });

  it('puts Accept / Always / Reject lenses at the top of the file, and Accept / Reject right above the change', async () => {
    await request();
    const doc = { uri: vscode.Uri.parse(calcUri), lineCount: 16 } as unknown as vscode.TextDocument;
    const lenses = controller.provideCodeLenses(doc);
    expect(lenses.map((l) => [l.range.start.line, l.command?.command])).toEqual([
      [0, 'agentls.showEditDiff'],
      [0, 'agentls.acceptEdit'],
      [0, 'agentls.acceptEditAlways'],
      [0, 'agentls.acceptEditAlwaysProject'],
      [0, 'agentls.rejectEdit'],
      [14, 'agentls.acceptEdit'],
      [14, 'agentls.rejectEdit'],
    ]);
    // The recorded server's own words for what "always" allows.
    expect(lenses[2].command?.title).toBe('$(check-all) Always allow edits of calc.py');
    expect(lenses[1].command?.arguments).toEqual([editRequest.requestId]);
    const other = { uri: vscode.Uri.parse('file:///elsewhere.py'), lineCount: 3 } as unknown as vscode.TextDocument;
    expect(controller.provideCodeLenses(other)).toEqual([]);
  });

  it('accepts from the diff editor title (the proposed uri names the request)', async () => {
    await request();
    const right = calls.find((c) => c.command === 'vscode.diff')!.args[1] as vscode.Uri;
    expect(controller.requestFor(right)).toBe(editRequest.requestId);
    await controller.decide(right, 'once');
    expect(approvals).toEqual([
      {
        method: 'agent/approve',
        params: { sessionId: editRequest.sessionId, requestId: editRequest.requestId, decision: 'once' },
      },
    ]);
  });

  it('asks for feedback on reject; Escape keeps it waiting', async () => {
    await request();
    stub.inputBoxAnswers = [undefined, '  keep the old formula, fix the test  '];
    await controller.decide(editRequest.requestId, 'reject');
    expect(approvals).toEqual([]);
    await controller.decide(editRequest.requestId, 'reject');
    expect(approvals).toEqual([
      {
        method: 'agent/approve',
        params: {
          sessionId: editRequest.sessionId,
          requestId: editRequest.requestId,
          decision: 'reject',
          feedback: 'keep the old formula, fix the test',
        },
      },
    ]);
  });

  it('is redrawn on the text the user typed, and drops its hunks when the same lines changed', async () => {
    await request();
    const doc = { uri: vscode.Uri.parse(calcUri), lineCount: 17 } as unknown as vscode.TextDocument;
    const hunkLines = (): number[] =>
      controller.provideCodeLenses(doc).filter((l) => l.range.start.line > 0).map((l) => l.range.start.line);
    expect(hunkLines()).toEqual([14, 14]);
    // The user adds a line at the top; the server sends the proposal's edit on that text.
    const typed = '# mine\n' + CALC;
    stub.files.set(calcUri, typed);
    const moved = JSON.parse(JSON.stringify(editRequest.edit)) as {
      documentChanges: { edits: { range: { start: { line: number }; end: { line: number } } }[] }[];
    };
    for (const e of moved.documentChanges[0].edits) {
      e.range.start.line += 1;
      e.range.end.line += 1;
    }
    host.handleEvent({ type: 'proposal-rebased', sessionId: editRequest.sessionId, requestId: editRequest.requestId, path: 'calc.py', edit: moved });
    await flush();
    expect(hunkLines()).toEqual([15, 15]);
    const right = calls.find((c) => c.command === 'vscode.diff')!.args[1] as vscode.Uri;
    expect(controller.provideTextDocumentContent(right)).toBe(
      typed.replace('ordered[middle] + ordered[middle + 1]', 'ordered[middle - 1] + ordered[middle]'),
    );
    // Then the user changes the proposal's own line: a conflict, said once, no hunk to accept.
    for (let i = 0; i < 2; i++) {
      host.handleEvent({ type: 'proposal-rebased', sessionId: editRequest.sessionId, requestId: editRequest.requestId, path: 'calc.py', conflict: true, lines: 'line 15' });
    }
    await flush();
    expect(hunkLines()).toEqual([]);
    expect(controller.provideCodeLenses(doc).map((l) => [l.range.start.line, l.command?.command])).toEqual([
      [0, 'agentls.showEditDiff'],
      [0, 'agentls.rejectEdit'],
    ]);
    expect(stub.infoMessages.filter((m) => m.includes('you changed line 15 of calc.py'))).toHaveLength(1);
  });

  it('closes the diff and drops the lenses once the request is resolved', async () => {
    await request();
    const [left, right] = calls.find((c) => c.command === 'vscode.diff')!.args as vscode.Uri[];
    const tab = { input: new vscode.TabInputTextDiff(left, right) };
    stub.tabs = [tab, { input: new vscode.TabInputTextDiff(left, vscode.Uri.parse('file:///x')) }];
    host.handleEvent({ type: 'permission-resolved', sessionId: editRequest.sessionId, requestId: editRequest.requestId, decision: 'once' });
    expect(stub.closedTabs).toEqual([tab]);
    expect(controller.pendingCount).toBe(0);
    expect(controller.provideTextDocumentContent(right)).toBe('');
    await controller.decide(editRequest.requestId, 'once');
    expect(stub.infoMessages.at(-1)).toContain('no proposed edit');
  });

  it('shows a new file against an empty document', async () => {
    const create: PermissionRequestEvent = {
      type: 'permission-request',
      sessionId: 's',
      requestId: 'perm_new',
      callId: 'c',
      tool: 'write',
      title: 'Write pkg/new.py',
      input: { path: 'pkg/new.py', content: 'X = 1\n' },
      edit: {
        documentChanges: [
          { kind: 'create', uri: 'file:///work/demo/pkg/new.py', options: { overwrite: false, ignoreIfExists: true } },
          {
            textDocument: { uri: 'file:///work/demo/pkg/new.py', version: null },
            edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'X = 1\n' }],
          },
        ],
      },
    };
    host.handleEvent({ type: 'tool-call', sessionId: 's', callId: 'c', tool: 'write', input: create.input, title: 'write pkg/new.py' });
    host.handleEvent(create);
    await flush();
    const [left, right] = calls.find((c) => c.command === 'vscode.diff')!.args as vscode.Uri[];
    expect(left.scheme).toBe(PROPOSED_SCHEME);
    expect(controller.provideTextDocumentContent(left)).toBe('');
    expect(controller.provideTextDocumentContent(right)).toBe('X = 1\n');
  });

  it('shows every file of a change to several files (a rename), each in its own diff', async () => {
    stub.files.set('file:///work/demo/util.ts', 'export function add(a: number) {\n  return a + 1;\n}\n');
    stub.files.set('file:///work/demo/main.ts', "import { add } from './util';\n\nconsole.log(add(1));\n");
    const rename: PermissionRequestEvent = {
      type: 'permission-request',
      sessionId: 's',
      requestId: 'perm_rename',
      callId: 'c',
      tool: 'rename',
      title: 'Rename add to sum (2 files)',
      input: { path: 'util.ts', symbol: 'add', new_name: 'sum' },
      diff: '(the combined diff)',
      changes: [
        {
          path: '/work/demo/util.ts',
          oldText: 'export function add(a: number) {\n  return a + 1;\n}\n',
          newText: 'export function sum(a: number) {\n  return a + 1;\n}\n',
        },
        {
          path: '/work/demo/main.ts',
          oldText: "import { add } from './util';\n\nconsole.log(add(1));\n",
          newText: "import { sum } from './util';\n\nconsole.log(sum(1));\n",
        },
      ],
    };
    host.handleEvent({ type: 'tool-call', sessionId: 's', callId: 'c', tool: 'rename', input: rename.input, title: 'rename add' });
    host.handleEvent(rename);
    await flush();
    const diffs = calls.filter((c) => c.command === 'vscode.diff').map((c) => c.args as [vscode.Uri, vscode.Uri, string, { preview: boolean }]);
    // The first file last, so it is the tab showing; not previews (one would replace the other).
    expect(diffs.map(([left, , title, options]) => [left.toString(), title, options.preview])).toEqual([
      ['file:///work/demo/main.ts', 'main.ts ↔ proposed by agentls', false],
      ['file:///work/demo/util.ts', 'util.ts ↔ proposed by agentls', false],
    ]);
    expect(controller.provideTextDocumentContent(diffs[0][1])).toContain('console.log(sum(1));');
    expect(controller.provideTextDocumentContent(diffs[1][1])).toContain('export function sum(');
    expect(controller.requestFor(diffs[0][1])).toBe('perm_rename');
    const main = { uri: vscode.Uri.parse('file:///work/demo/main.ts'), lineCount: 3 } as unknown as vscode.TextDocument;
    expect(controller.provideCodeLenses(main).every((l) => l.range.start.line === 0)).toBe(true);
  });

  it('does not open the diff editor by default (the hunks are drawn in the file\'s own editor)', async () => {
    stub.config.delete('approvals.openDiff');
    await request();
    expect(calls.some((c) => c.command === 'vscode.diff')).toBe(false);
    expect(controller.pendingCount).toBe(1);
  });

  it("stays in the file's own editor for an inline chat's session, even with openDiff on", async () => {
    controller.drawnInPlace = (sessionId) => sessionId === editRequest.sessionId;
    await request();
    expect(calls.some((c) => c.command === 'vscode.diff')).toBe(false);
    expect(controller.pendingCount).toBe(1);
  });

  it("opens no diff editor over the user's work for a background session's edit, even with openDiff on", async () => {
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
    const background = { state: 'waiting' as const, branch: 'agentls/fix', worktree: '/w/.git/agentls-worktrees/fix', base: 'abc' };
    host.sessions = [{ sessionId: editRequest.sessionId, title: 'fix', model: 'm', busy: true, createdAt: 0, updatedAt: 0, usage, background }];
    await request();
    expect(calls.some((c) => c.command === 'vscode.diff')).toBe(false);
    expect(controller.pendingCount).toBe(1); // still listed, and answered in the panel's card
    // The card asks it: the panel's "Waiting for review" does not list it twice, until it is shown
    expect(host.proposals()).toEqual([]);
    host.activeSessionId = editRequest.sessionId;
    expect(host.proposals().map((p) => p.requestId)).toEqual([editRequest.requestId]);
  });
});

describe('what "always" allows', () => {
  const write = (always?: string): PermissionRequestEvent => ({
    type: 'permission-request',
    sessionId: 's',
    requestId: always ? 'perm_always' : 'perm_no_always',
    callId: always ? 'c1' : 'c2',
    tool: 'write',
    title: 'Write notes/**',
    input: { path: 'notes/**', content: 'x\n' },
    ...(always ? { always } : {}),
    edit: {
      documentChanges: [
        { kind: 'create', uri: 'file:///work/demo/notes/%2A%2A', options: { overwrite: false, ignoreIfExists: true } },
        {
          textDocument: { uri: 'file:///work/demo/notes/%2A%2A', version: null },
          edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'x\n' }],
        },
      ],
    },
  });
  const open = async (event: PermissionRequestEvent): Promise<vscode.TextDocument> => {
    host.handleEvent({ type: 'tool-call', sessionId: 's', callId: event.callId, tool: 'write', input: event.input, title: 'write notes/**' });
    host.handleEvent(event);
    await flush();
    return { uri: vscode.Uri.parse('file:///work/demo/notes/%2A%2A'), lineCount: 1 } as unknown as vscode.TextDocument;
  };

  it('names it on the lenses, for this session or this project', async () => {
    const label = 'Always allow writes of notes/** (literal name)';
    const doc = await open(write(label));
    const lenses = controller.provideCodeLenses(doc);
    expect(lenses.map((l) => [l.command?.command, l.command?.title])).toEqual([
      ['agentls.showEditDiff', 'agentls: Write notes/**'],
      ['agentls.acceptEdit', '$(check) Accept'],
      ['agentls.acceptEditAlways', `$(check-all) ${label}`],
      ['agentls.acceptEditAlwaysProject', '$(check-all) … in this project'],
      ['agentls.rejectEdit', '$(close) Reject'],
    ]);
    expect(lenses[3].command?.tooltip).toBe(`${label}, in every session of this project`);
    await controller.decide('perm_always', 'always', 'project');
    await controller.decide('perm_always', 'always');
    expect(approvals).toEqual([
      { method: 'agent/approve', params: { sessionId: 's', requestId: 'perm_always', decision: 'always', scope: 'project' } },
      { method: 'agent/approve', params: { sessionId: 's', requestId: 'perm_always', decision: 'always' } },
    ]);
  });

  it('offers no "always" when the server does not', async () => {
    const doc = await open(write());
    const lenses = controller.provideCodeLenses(doc);
    expect(lenses.map((l) => l.command?.command)).toEqual(['agentls.showEditDiff', 'agentls.acceptEdit', 'agentls.rejectEdit']);
    await controller.decide('perm_no_always', 'always');
    expect(approvals).toEqual([]);
    expect(stub.infoMessages.at(-1)).toContain('not offered');
  });
});
