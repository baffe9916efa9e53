// Per-hunk review of a proposal (issue 20): the hunks of a proposal's edit, the edit sent back for a
// subset of them or for the user's own version, and the controller's lenses and answers.
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { ApprovalController, type HunkRef } from '../../src/approvals';
import { applyTextEdits, fileChanges, proposedText } from '../../src/edits';
import { AgentHost, type AgentConnection } from '../../src/host';
import type { HostMessage } from '../../src/model/messages';
import { ProposedFiles } from '../../src/reviewFs';
import { cardHunks, endOf, hunkAtLine, hunkMarks, keptLabel, outcome, proposalHunks, replacementEdit, SHOWN_ADDED_CHARS, subsetEdit } from '../../src/reviewHunks';
import type { PermissionRequestEvent } from '../../src/protocol/generated';
import { stub, StubEditor } from '../stubs/vscode';

const URI = 'file:///work/demo/calc.py';
const BEFORE = 'import math\n\ndef mean(values):\n    return sum(values) / len(values)\n\n\ndef half(x):\n    return x / 2\n';
const line = (n: number, character = 0): { line: number; character: number } => ({ line: n, character });
/** Two hunks, as the server builds them: whole lines replaced, in order. */
const EDITS = [
  // line 2: one line becomes three
  { range: { start: line(2), end: line(3) }, newText: 'def mean(values):\n    if not values:\n        raise ValueError("empty")\n' },
  // line 6: one line replaced
  { range: { start: line(6), end: line(7) }, newText: 'def half(x: float) -> float:\n' },
];
const EDIT = { documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: EDITS }] };
const PROPOSED = applyTextEdits(BEFORE, EDITS);
const FIRST_ONLY = applyTextEdits(BEFORE, [EDITS[0]]);
const SECOND_ONLY = applyTextEdits(BEFORE, [EDITS[1]]);

describe('the hunks of a proposal', () => {
  it('are its TextEdits, placed in the file as it is and in the proposed text', () => {
    const hunks = proposalHunks(fileChanges(EDIT)[0]);
    expect(hunks.map((h) => [h.index, h.oldStart, h.newStart, h.newLines])).toEqual([
      [0, 2, 2, 3],
      [1, 6, 8, 1], // two lines further down in the proposal: the first hunk added two
    ]);
    expect(PROPOSED.split('\n')[8]).toBe('def half(x: float) -> float:');
    expect(hunkAtLine(hunks, 4, 'new')?.index).toBe(0);
    expect(hunkAtLine(hunks, 4, 'old')).toBeUndefined();
    expect(hunkAtLine(hunks, 6, 'old')?.index).toBe(1);
  });

  it('a subset keeps the chosen TextEdits of the same document and version', () => {
    const second = subsetEdit(EDIT, (uri, index) => uri === URI && index === 1);
    expect(second).toEqual({ documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [EDITS[1]] }] });
    expect(proposedText(BEFORE, fileChanges(second)[0])).toBe(SECOND_ONLY);
    expect(subsetEdit(EDIT, () => false)).toBeUndefined();
    const changes = subsetEdit({ changes: { [URI]: EDITS } }, (_uri, index) => index === 0);
    expect(changes).toEqual({ changes: { [URI]: [EDITS[0]] } });
  });

  it('a new file keeps its CreateFile only with some of its text', () => {
    const create = {
      documentChanges: [
        { kind: 'create', uri: 'file:///work/demo/new.py', options: { overwrite: false, ignoreIfExists: true } },
        { textDocument: { uri: 'file:///work/demo/new.py', version: null }, edits: [{ range: { start: line(0), end: line(0) }, newText: 'X = 1\n' }] },
      ],
    };
    expect(subsetEdit(create, () => true)).toEqual(create);
    expect(subsetEdit(create, () => false)).toBeUndefined();
    const mine = replacementEdit(create, 'file:///work/demo/new.py', '', 'X = 2\n');
    expect(mine?.documentChanges).toEqual([
      create.documentChanges[0],
      { textDocument: { uri: 'file:///work/demo/new.py', version: null }, edits: [{ range: { start: line(0), end: line(0) }, newText: 'X = 2\n' }] },
    ]);
  });

  it("the user's version replaces the whole document, turning the current text into it", () => {
    const mine = 'import math\n# mine\n';
    const edit = replacementEdit(EDIT, URI, BEFORE, mine);
    expect(edit).toEqual({
      documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [{ range: { start: line(0), end: endOf(BEFORE) }, newText: mine }] }],
    });
    expect(proposedText(BEFORE, fileChanges(edit)[0])).toBe(mine);
    expect(endOf('a\r\nbc')).toEqual({ line: 1, character: 2 });
    expect(replacementEdit(EDIT, 'file:///other.py', BEFORE, mine)).toBeUndefined();
  });

  it('are answered once all are decided', () => {
    expect(outcome(['accepted', 'pending'])).toBeUndefined();
    expect(outcome(['accepted', 'accepted'])).toBe('all');
    expect(outcome(['rejected', 'rejected'])).toBe('none');
    expect(outcome(['rejected', 'accepted'])).toBe('some');
  });
});

describe('the proposed documents', () => {
  it('take the user\'s saves on the proposed side; the original side is read-only', () => {
    const files = new ProposedFiles();
    const proposed = vscode.Uri.parse('agentls-proposed:/work/demo/calc.py?request=r1');
    const original = vscode.Uri.parse('agentls-proposed:/work/demo/calc.py?request=r1&side=original');
    files.set(proposed, PROPOSED);
    files.set(original, '', true);
    const written: string[] = [];
    files.onDidWrite((uri) => written.push(uri.toString()));
    files.writeFile(proposed, new TextEncoder().encode('mine\n'));
    expect(new TextDecoder().decode(files.readFile(proposed))).toBe('mine\n');
    expect(written).toEqual([proposed.toString()]);
    expect(() => files.writeFile(original, new TextEncoder().encode('x'))).toThrow(/NoPermissions/);
    expect(() => files.writeFile(vscode.Uri.parse('agentls-proposed:/elsewhere.py'), new Uint8Array())).toThrow(/FileNotFound/);
    expect(files.stat(original).permissions).toBe(vscode.FilePermission.Readonly);
  });
});

// ---- the controller ----------------------------------------------------------------------

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

let approvals: unknown[];
let posted: HostMessage[];
let host: AgentHost;
let controller: ApprovalController;

const event: PermissionRequestEvent = {
  type: 'permission-request',
  sessionId: 's1',
  requestId: 'perm_two',
  callId: 'c1',
  tool: 'edit',
  title: 'Edit calc.py',
  input: { path: 'calc.py' },
  edit: EDIT,
  always: 'Always allow edits of calc.py',
};

beforeEach(async () => {
  stub.reset();
  approvals = [];
  posted = [];
  const server: AgentConnection = {
    request: (method, params) => {
      if (method === 'agent/approve') approvals.push(params);
      if (method === 'agent/listSessions') return Promise.resolve({ sessions: [] } as never);
      return Promise.resolve({} as never);
    },
  };
  host = new AgentHost(
    {
      post: (m) => posted.push(m),
      showError: () => undefined,
      openDiff: () => undefined,
      openFile: () => undefined,
      editedProposal: (requestId) => controller.editedProposal(requestId),
      decideHunk: (ref, state) => void controller.decideHunk(ref, state),
      panelReady: () => controller.repost(),
    },
    { get: () => undefined, update: () => Promise.resolve() },
  );
  await host.connected(server);
  controller = new ApprovalController(host, (u) => vscode.Uri.parse(u), () => undefined, (m) => posted.push(m));
  stub.files.set(URI, BEFORE);
  host.handleEvent({ type: 'tool-call', sessionId: 's1', callId: 'c1', tool: 'edit', input: event.input, title: 'edit calc.py' });
  host.handleEvent(event);
  await flush();
});

const fileDoc = { uri: vscode.Uri.parse(URI), lineCount: 9 } as unknown as vscode.TextDocument;
const proposedUri = (): vscode.Uri => vscode.Uri.parse(URI).with({ scheme: 'agentls-proposed', query: 'request=perm_two' });
const ref = (hunk: number): HunkRef => ({ requestId: 'perm_two', file: 0, hunk });

describe('a proposal of two hunks', () => {
  it('has Accept / Reject lenses above each hunk in the file and in the proposal, and Accept all / Reject all at the top of the file', () => {
    const lenses = controller.provideCodeLenses(fileDoc);
    const titles = lenses.map((l) => [l.range.start.line, l.command?.title]);
    expect(titles).toEqual([
      [0, 'agentls: Edit calc.py'],
      [0, '$(check) Accept all'],
      [0, '$(check-all) Always allow edits of calc.py'],
      [0, '$(check-all) … in this project'],
      [0, '$(close) Reject all'],
      [2, '$(check) Accept hunk 1/2'],
      [2, '$(close) Reject hunk 1/2'],
      [6, '$(check) Accept hunk 2/2'],
      [6, '$(close) Reject hunk 2/2'],
    ]);
    expect(lenses[7].command?.command).toBe('agentls.acceptHunk');
    expect(lenses[7].command?.arguments).toEqual([ref(1)]);
    const onProposal = controller.provideCodeLenses({ uri: proposedUri(), lineCount: 11 } as unknown as vscode.TextDocument);
    expect(onProposal.filter((l) => l.command?.command === 'agentls.rejectHunk').map((l) => l.range.start.line)).toEqual([2, 8]);
  });

  it('accepting one hunk waits for the other; a decided hunk says so and can be undecided', async () => {
    await controller.decideHunk(ref(0), 'accepted');
    expect(approvals).toEqual([]);
    const decided = controller.provideCodeLenses(fileDoc).filter((l) => l.command?.command === 'agentls.resetHunk');
    expect(decided.map((l) => l.command?.title)).toEqual(['$(pass-filled) hunk 1/2 accepted']);
    await controller.decideHunk(ref(0), 'pending');
    expect(controller.provideCodeLenses(fileDoc).filter((l) => l.command?.command === 'agentls.acceptHunk')).toHaveLength(2);
  });

  it('one accepted, one rejected: the accepted hunk goes back as the edit, with the optional note', async () => {
    stub.inputBoxAnswers = [undefined, ' keep half untyped '];
    await controller.decideHunk(ref(0), 'accepted');
    await controller.decideHunk(ref(1), 'rejected');
    expect(approvals).toEqual([]); // Escape on the note: still waiting
    await controller.decideHunk(ref(1), 'rejected');
    expect(approvals).toEqual([
      {
        sessionId: 's1',
        requestId: 'perm_two',
        decision: 'once',
        feedback: 'keep half untyped',
        edit: { documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [EDITS[0]] }] },
      },
    ]);
    const sent = (approvals[0] as { edit: unknown }).edit;
    expect(proposedText(BEFORE, fileChanges(sent)[0])).toBe(FIRST_ONLY);
  });

  it('all accepted is a plain accept', async () => {
    await controller.decideHunk(ref(1), 'accepted');
    await controller.decideHunk(ref(0), 'accepted');
    expect(approvals).toEqual([{ sessionId: 's1', requestId: 'perm_two', decision: 'once' }]);
  });

  it('all rejected is a reject, with the feedback asked for it', async () => {
    stub.inputBoxAnswers = ['not now'];
    await controller.decideHunk(ref(0), 'rejected');
    await controller.decideHunk(ref(1), 'rejected');
    expect(approvals).toEqual([{ sessionId: 's1', requestId: 'perm_two', decision: 'reject', feedback: 'not now' }]);
  });

  it("an edited proposal turns into Accept my version, which sends the user's whole text", async () => {
    const mine = PROPOSED.replace('raise ValueError("empty")', 'return 0.0');
    stub.textDocuments.push({ uri: proposedUri(), getText: () => mine, version: 2, isDirty: false, lineCount: 11 });
    const lenses = controller.provideCodeLenses(fileDoc);
    expect(lenses.map((l) => l.command?.title)).toEqual(['agentls: Edit calc.py', '$(check) Accept my version', '$(close) Reject']);
    await controller.decide('perm_two', 'always');
    expect(approvals).toEqual([]); // the server takes a changed proposal with "once" only
    expect(stub.infoMessages.at(-1)).toContain('accept your version once');
    await controller.decide('perm_two', 'once');
    expect(approvals).toEqual([
      {
        sessionId: 's1',
        requestId: 'perm_two',
        decision: 'once',
        edit: { documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [{ range: { start: line(0), end: endOf(BEFORE) }, newText: mine }] }] },
      },
    ]);
  });

  it('the keys act on the hunk at the cursor, then move to the next undecided one', async () => {
    const editor = { document: { uri: vscode.Uri.parse(URI) }, selection: { active: new vscode.Position(6, 4) } };
    stub.activeEditor = editor;
    await controller.decideHunk(undefined, 'rejected'); // the cursor is in the second hunk (line 6)
    expect(editor.selection.active.line).toBe(2); // on to the first, still undecided
    await controller.nextHunk();
    expect(editor.selection.active.line).toBe(6);
    await controller.nextHunk(); // from the last: the first
    expect(editor.selection.active.line).toBe(2);
    stub.inputBoxAnswers = [''];
    await controller.decideHunk(undefined, 'accepted');
    expect(approvals).toEqual([
      { sessionId: 's1', requestId: 'perm_two', decision: 'once', edit: { documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [EDITS[0]] }] } },
    ]);
  });

  it('in the proposed document, the cursor is placed by the proposal\'s lines', async () => {
    const editor = { document: { uri: proposedUri() }, selection: { active: new vscode.Position(0, 0) } };
    stub.activeEditor = editor;
    await controller.nextHunk();
    expect(editor.selection.active.line).toBe(2);
    await controller.nextHunk();
    expect(editor.selection.active.line).toBe(8); // the second hunk, two lines down in the proposal
    await controller.decideHunk(undefined, 'accepted');
    expect(controller.provideCodeLenses(fileDoc).find((l) => l.command?.command === 'agentls.resetHunk')?.command?.title).toBe(
      '$(pass-filled) hunk 2/2 accepted',
    );
  });

  it("Accept in the panel takes the user's version of an edited proposal too", async () => {
    await host.handlePanelMessage({ type: 'approve', sessionId: 's1', requestId: 'perm_two', decision: 'once' });
    expect(approvals).toEqual([{ sessionId: 's1', requestId: 'perm_two', decision: 'once' }]); // not edited: as proposed
    approvals.length = 0;
    const mine = 'import math\n';
    stub.textDocuments.push({ uri: proposedUri(), getText: () => mine, version: 2, isDirty: false, lineCount: 2 });
    await host.handlePanelMessage({ type: 'approve', sessionId: 's1', requestId: 'perm_two', decision: 'once' });
    expect(approvals).toEqual([
      {
        sessionId: 's1',
        requestId: 'perm_two',
        decision: 'once',
        edit: { documentChanges: [{ textDocument: { uri: URI, version: 3 }, edits: [{ range: { start: line(0), end: endOf(BEFORE) }, newText: mine }] }] },
      },
    ]);
  });

  it("Always in the panel is refused for an edited proposal, never sending the agent's version in its place", async () => {
    stub.textDocuments.push({ uri: proposedUri(), getText: () => 'import math\n', version: 2, isDirty: false, lineCount: 2 });
    await host.handlePanelMessage({ type: 'approve', sessionId: 's1', requestId: 'perm_two', decision: 'always', scope: 'session' });
    expect(approvals).toEqual([]); // still waiting: accept the user's version once, or undo the changes
  });

  it('tells the extension each answer it gives (the focus then returns to the prompt box)', async () => {
    const answered: string[] = [];
    controller.onDidAnswer((id) => answered.push(id));
    expect(controller.waitingBesides('perm_two')).toBe(false);
    expect(controller.waitingBesides('perm_other')).toBe(true);
    await controller.decideHunk(ref(0), 'accepted');
    expect(answered).toEqual([]); // one hunk still undecided: no answer yet
    await controller.decideHunk(ref(1), 'accepted');
    expect(answered).toEqual(['perm_two']);
    expect(approvals).toEqual([{ sessionId: 's1', requestId: 'perm_two', decision: 'once' }]);
  });

  it('a hunk command with no hunk to act on says so', async () => {
    await controller.decideHunk({ requestId: 'perm_two', file: 0, hunk: 5 }, 'accepted');
    await controller.decideHunk(undefined, 'accepted'); // no editor open
    expect(approvals).toEqual([]);
    expect(stub.infoMessages).toEqual(['agentls: no hunk of a proposed edit here.', 'agentls: no hunk of a proposed edit here.']);
  });

  it('is listed as waiting for review, in every session, until it is answered', () => {
    expect(host.proposals()).toEqual([
      { sessionId: 's1', sessionTitle: undefined, requestId: 'perm_two', title: 'Edit calc.py', path: 'calc.py' },
    ]);
    const last = posted.filter((m) => m.type === 'proposals').at(-1);
    expect(last).toEqual({ type: 'proposals', proposals: host.proposals() });
    host.handleEvent({ type: 'permission-resolved', sessionId: 's1', requestId: 'perm_two', decision: 'once' });
    expect(posted.at(-1)).toEqual({ type: 'proposals', proposals: [] });
    expect(controller.pendingCount).toBe(0);
  });
});

describe("a hunk drawn in the file's own editor", () => {
  const hunk = (start: number, end: number, newText: string) =>
    proposalHunks({ uri: URI, edits: [{ range: { start: line(start), end: line(end) }, newText }] } as never)[0];

  it('marks the removed lines and pairs the added ones with them, the last removed line taking the rest', () => {
    expect(hunkMarks(hunk(2, 3, 'def mean(values):\n    if not values:\n        raise ValueError("empty")\n'))).toEqual({
      removed: [2],
      added: [{ line: 2, text: 'def mean(values):  ⏎      if not values:  ⏎          raise ValueError("empty")' }],
    });
    expect(hunkMarks(hunk(4, 6, 'a\nb\n'))).toEqual({ removed: [4, 5], added: [{ line: 4, text: 'a' }, { line: 5, text: 'b' }] });
    // Only removed: no added text.
    expect(hunkMarks(hunk(4, 6, ''))).toEqual({ removed: [4, 5], added: [] });
  });

  it('shows a hunk that only adds after the line above it, or before the first line at the top', () => {
    expect(hunkMarks(hunk(3, 3, 'x = 1\n'))).toEqual({ removed: [], added: [{ line: 2, text: 'x = 1' }] });
    expect(hunkMarks(hunk(0, 0, '"""Doc."""\n'))).toEqual({ removed: [], added: [{ line: 0, text: '"""Doc."""', before: true }] });
  });

  it('cuts a long added text', () => {
    const [mark] = hunkMarks(hunk(1, 2, `${'y'.repeat(400)}\n`)).added;
    expect(mark.text).toHaveLength(SHOWN_ADDED_CHARS);
    expect(mark.text.endsWith('…')).toBe(true);
  });

  it("draws both hunks in the file's visible editor, drops a rejected one, and clears all once answered", async () => {
    const editor = new StubEditor(vscode.Uri.parse(URI), BEFORE);
    stub.visibleEditors = [editor];
    const drawn = (): { removed: number[]; added: [number, string | undefined][] } => {
      const [removed, added] = [...editor.decorations.values()];
      return {
        removed: removed.map((d) => d.range.start.line),
        added: added.map((d) => [d.range.start.line, d.renderOptions?.after?.contentText]),
      };
    };
    await controller.decideHunk(ref(0), 'pending'); // any change redraws
    expect(drawn()).toEqual({
      removed: [2, 6],
      added: [
        [2, '→ def mean(values):  ⏎      if not values:  ⏎          raise ValueError("empty")'],
        [6, '→ def half(x: float) -> float:'],
      ],
    });
    await controller.decideHunk(ref(1), 'rejected');
    expect(drawn().removed).toEqual([2]);
    stub.inputBoxAnswers = [''];
    await controller.decideHunk(ref(0), 'accepted');
    host.handleEvent({ type: 'permission-resolved', sessionId: 's1', requestId: 'perm_two', decision: 'once' } as never);
    await flush();
    expect(drawn()).toEqual({ removed: [], added: [] });
  });

  it('draws nothing in an editor that is a side of a diff editor', async () => {
    const editor = new StubEditor(vscode.Uri.parse(URI), BEFORE, true);
    stub.visibleEditors = [editor];
    await controller.decideHunk(ref(0), 'pending');
    expect([...editor.decorations.values()].map((d) => d.length)).toEqual([0, 0]);
  });
});

describe("a proposal's hunks in the panel's card", () => {
  it('lists each hunk with the lines it removes and adds, where it is, and its state', () => {
    const [change] = fileChanges(EDIT);
    const listed = cardHunks([{ path: 'calc.py', base: BEFORE, hunks: proposalHunks(change), states: ['accepted', 'pending'] }]);
    expect(listed).toEqual([
      {
        file: 0, hunk: 0, path: 'calc.py', where: 'line 3', state: 'accepted',
        removed: ['def mean(values):'],
        added: ['def mean(values):', '    if not values:', '        raise ValueError("empty")'],
      },
      { file: 0, hunk: 1, path: 'calc.py', where: 'line 7', state: 'pending', removed: ['def half(x):'], added: ['def half(x: float) -> float:'] },
    ]);
  });

  it('says how many hunks were kept', () => {
    expect(keptLabel(1, 2)).toBe('1 of 2 hunks kept');
    expect(keptLabel(2, 2)).toBe('All 2 hunks kept');
    expect(keptLabel(0, 2)).toBe('Rejected');
  });

  it('gets the hunks and their states as they are decided, a decision from the card, and the count kept', async () => {
    const hunkStates = (): string[][] =>
      posted.flatMap((m) => (m.type === 'proposal-hunks' && m.requestId === 'perm_two' ? [m.hunks.map((h) => h.state)] : []));
    posted.length = 0;
    await host.handlePanelMessage({ type: 'decide-hunk', requestId: 'perm_two', file: 0, hunk: 0, state: 'accepted' });
    await flush();
    expect(hunkStates().at(-1)).toEqual(['accepted', 'pending']);
    expect(approvals).toEqual([]);
    stub.inputBoxAnswers = [''];
    await controller.decideHunk(ref(1), 'rejected');
    expect(posted).toContainEqual({ type: 'proposal-kept', requestId: 'perm_two', kept: 1, total: 2 });
    expect(approvals).toHaveLength(1);
    // The panel reloaded: it gets the card's hunks and what was kept again.
    posted.length = 0;
    await host.handlePanelMessage({ type: 'ready' });
    expect(posted).toContainEqual({ type: 'proposal-kept', requestId: 'perm_two', kept: 1, total: 2 });
    expect(hunkStates().at(-1)).toEqual(['accepted', 'rejected']);
  });

  it('says nothing was kept of a reject only once it is answered (Escape on its note keeps it waiting)', async () => {
    posted.length = 0;
    stub.inputBoxAnswers = [undefined];
    await controller.decideHunk(ref(0), 'rejected');
    await controller.decideHunk(ref(1), 'rejected');
    expect(approvals).toEqual([]);
    expect(posted.filter((m) => m.type === 'proposal-kept')).toEqual([]);
    stub.inputBoxAnswers = ['not now'];
    await controller.decideHunk(ref(1), 'rejected');
    expect(approvals).toHaveLength(1);
    expect(posted).toContainEqual({ type: 'proposal-kept', requestId: 'perm_two', kept: 0, total: 2 });
  });
});
