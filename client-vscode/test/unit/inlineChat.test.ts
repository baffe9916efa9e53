// Inline chat on a selection (issue 29 item 1): a question asked in the editor runs as a turn in a
// session of its own with the selection as context, the panel's active session untouched; the
// thread shows the question, the agent's progress and answer; a follow-up while a proposal waits
// rejects it with the follow-up as feedback; closing stops a running turn unless a proposal waits.
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { editHunks, firstEditLine, firstEditUri, InlineChat, progressLine, type InlineComment, type InlineThread } from '../../src/inlineChat';
import type { HostMessage } from '../../src/model/messages';
import type { AgentEvent, AgentRequests } from '../../src/protocol/generated';

const SELECTION = { uri: 'file:///work/calc.py', range: { start: { line: 4, character: 0 }, end: { line: 9, character: 0 } } };

/** Two hunks of calc.py, as a permission-request's WorkspaceEdit carries them. */
const TWO_HUNKS = {
  documentChanges: [
    {
      textDocument: { uri: SELECTION.uri, version: 1 },
      edits: [
        { range: { start: { line: 4, character: 0 }, end: { line: 5, character: 0 } }, newText: '    """Mean."""\n' },
        { range: { start: { line: 9, character: 0 }, end: { line: 10, character: 0 } }, newText: '    """Median."""\n' },
      ],
    },
  ],
};

class Server implements AgentConnection {
  calls: { method: string; params: unknown }[] = [];
  private next = 1;
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const answer = (value: unknown): Promise<AgentRequests[M]['result']> => Promise.resolve(value as AgentRequests[M]['result']);
    const session = (sessionId: string) => ({ sessionId, title: sessionId, createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage: {}, mode: 'build' });
    switch (method) {
      case 'agent/newSession':
        return answer({ sessionId: `ses_inline${this.next++}` });
      case 'agent/listSessions':
        return answer({ sessions: [session('ses_panel')] });
      case 'agent/getMessages':
        return answer({ messages: [], todos: [], mode: 'build' });
      case 'agent/prompt':
        return answer({ sessionId: (params as { sessionId: string }).sessionId, messageId: 'msg_1', finishReason: 'end_turn', usage: {} });
      default:
        return answer({});
    }
  }
  method(name: string): unknown[] {
    return this.calls.filter((c) => c.method === name).map((c) => c.params);
  }
}

class Ui implements HostUi {
  posted: HostMessage[] = [];
  errors: string[] = [];
  post(message: HostMessage): void {
    this.posted.push(message);
  }
  showError(message: string): void {
    this.errors.push(message);
  }
  openDiff(): void {}
  openFile(): void {}
}

class Memory {
  values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}

class Thread implements InlineThread {
  shown: InlineComment[] = [];
  running = false;
  revealed: [number, string | undefined][] = [];
  disposed = false;
  show(comments: InlineComment[]): void {
    this.shown = comments;
  }
  setRunning(running: boolean): void {
    this.running = running;
  }
  reveal(line: number, uri?: string): void {
    this.revealed.push([line, uri]);
  }
  dispose(): void {
    this.disposed = true;
  }
  /** The agent's last comment. */
  get answer(): string {
    return this.shown.filter((c) => c.author === 'agentls').at(-1)?.body ?? '';
  }
}

async function setUp(): Promise<{ server: Server; ui: Ui; host: AgentHost; thread: Thread; chat: InlineChat }> {
  const server = new Server();
  const ui = new Ui();
  const host = new AgentHost(ui, new Memory());
  await host.connected(server);
  const thread = new Thread();
  const chat = new InlineChat(host, thread, SELECTION, 0);
  return { server, ui, host, thread, chat };
}

const ev = (event: Record<string, unknown>): AgentEvent => event as unknown as AgentEvent;

describe('inline chat', () => {
  it('runs the question in a session of its own with the selection as context, the panel left as it was', async () => {
    const { server, ui, host, thread, chat } = await setUp();
    expect(host.activeSessionId).toBe('ses_panel');
    ui.posted = [];
    await chat.submit('  Shorten these docstrings.  ');
    expect(chat.sessionId).toBe('ses_inline1');
    expect(server.method('agent/newSession')).toHaveLength(1);
    expect(server.method('agent/prompt')).toEqual([
      { sessionId: 'ses_inline1', text: 'Shorten these docstrings.', context: [{ uri: SELECTION.uri, range: SELECTION.range }] },
    ]);
    // The panel still shows its own session; the inline one is only in its history.
    expect(host.activeSessionId).toBe('ses_panel');
    expect(ui.posted.some((m) => m.type === 'prompt-sent')).toBe(false);
    expect(ui.posted.some((m) => m.type === 'state' && m.state.activeSessionId !== 'ses_panel')).toBe(false);
    expect(thread.shown[0]).toEqual({ author: 'you', body: 'Shorten these docstrings.' });
    expect(thread.running).toBe(true);
    expect(thread.answer).toBe('_Working…_');
  });

  it("shows the turn's progress and the model's answer, and ends idle", async () => {
    const { host, thread, chat } = await setUp();
    await chat.submit('What does this do?');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'What does this do?' }));
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_inline1', delta: 'Let me read ' }));
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_inline1', delta: 'it first.' }));
    host.handleEvent(ev({ type: 'tool-call', sessionId: 'ses_inline1', callId: 'c1', tool: 'read', title: 'read calc.py', input: {} }));
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_inline1', delta: 'It computes the mean.' }));
    // Another session's events, and a sub-agent's, are not this chat's.
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_panel', delta: 'elsewhere' }));
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_inline1', parentSessionId: 'ses_inline1', delta: 'sub-agent' }));
    host.handleEvent(ev({ type: 'turn-end', sessionId: 'ses_inline1', finishReason: 'end_turn' }));
    expect(thread.answer).toBe('Let me read it first.\n\n_Reading calc.py…_\n\nIt computes the mean.');
    expect(thread.running).toBe(false);
    expect(chat.running).toBe(false);
  });

  it('says a proposal of two hunks is decided in the editor and brings its first hunk into view', async () => {
    const { host, thread, chat } = await setUp();
    await chat.submit('Shorten these docstrings.');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'x' }));
    host.handleEvent(ev({ type: 'tool-call', sessionId: 'ses_inline1', callId: 'c1', tool: 'edit', title: 'Edit calc.py', input: { path: 'calc.py' } }));
    host.handleEvent(
      ev({ type: 'permission-request', sessionId: 'ses_inline1', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'Edit calc.py', input: { path: 'calc.py' }, edit: TWO_HUNKS }),
    );
    expect(chat.waiting).toBe('r1');
    expect(thread.answer).toContain('**Proposed:** Edit calc.py (2 hunks). Accept or Reject each hunk, or all, in the editor');
    expect(thread.revealed).toEqual([[4, undefined]]); // the selection's file: its editor is open
    host.handleEvent(ev({ type: 'permission-resolved', sessionId: 'ses_inline1', requestId: 'r1', decision: 'once' }));
    expect(chat.waiting).toBeUndefined();
    expect(thread.answer).toMatch(/Accepted\.$/);
  });

  it('says how many hunks were kept when the proposal was answered hunk by hunk', async () => {
    const { host, thread, chat } = await setUp();
    await chat.submit('Shorten these docstrings.');
    host.handleEvent(
      ev({ type: 'permission-request', sessionId: 'ses_inline1', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'Edit calc.py', input: {}, edit: TWO_HUNKS }),
    );
    chat.kept('r0', 2, 2); // another proposal's: not this one
    chat.kept('r1', 1, 2);
    host.handleEvent(ev({ type: 'permission-resolved', sessionId: 'ses_inline1', requestId: 'r1', decision: 'once' }));
    expect(thread.answer).toMatch(/Kept 1 of 2 hunks\.$/);
  });

  it("opens the proposal's file when it is not the selection's", async () => {
    const { host, thread, chat } = await setUp();
    await chat.submit('Move this to utils.py.');
    const other = { changes: { 'file:///work/utils.py': [{ range: { start: { line: 12, character: 0 }, end: { line: 12, character: 0 } }, newText: 'x\n' }] } };
    host.handleEvent(
      ev({ type: 'permission-request', sessionId: 'ses_inline1', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'Edit utils.py', input: {}, edit: other }),
    );
    expect(thread.revealed).toEqual([[12, 'file:///work/utils.py']]);
    expect(thread.answer).toContain('**Proposed:** Edit utils.py. Accept or Reject it in the editor');
  });

  it('refines a waiting proposal: a follow-up rejects it with the follow-up as feedback, no new prompt', async () => {
    const { server, host, thread, chat } = await setUp();
    await chat.submit('Shorten these docstrings.');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'x' }));
    host.handleEvent(
      ev({ type: 'permission-request', sessionId: 'ses_inline1', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'Edit calc.py', input: {}, edit: TWO_HUNKS }),
    );
    await chat.submit('Keep the word "arithmetic".');
    expect(server.method('agent/approve')).toEqual([{ sessionId: 'ses_inline1', requestId: 'r1', decision: 'reject', feedback: 'Keep the word "arithmetic".' }]);
    expect(server.method('agent/prompt')).toHaveLength(1);
    expect(server.method('agent/newSession')).toHaveLength(1);
    expect(thread.shown.filter((c) => c.author === 'you').map((c) => c.body)).toEqual(['Shorten these docstrings.', 'Keep the word "arithmetic".']);
    expect(thread.answer).toBe('Asked for another proposal.');
  });

  it('sends a follow-up after the turn as the same session’s next prompt, and during a turn as a steer', async () => {
    const { server, host, chat } = await setUp();
    await chat.submit('Shorten these docstrings.');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'x' }));
    await chat.submit('Also the module docstring.');
    host.handleEvent(ev({ type: 'turn-end', sessionId: 'ses_inline1', finishReason: 'end_turn' }));
    await chat.submit('Now add a test.');
    const prompts = server.method('agent/prompt') as { sessionId: string; text: string; context?: unknown; mode?: string }[];
    expect(prompts.map((p) => [p.sessionId, p.text, p.mode ?? 'queue', !!p.context])).toEqual([
      ['ses_inline1', 'Shorten these docstrings.', 'queue', true],
      ['ses_inline1', 'Also the module docstring.', 'steer', false],
      ['ses_inline1', 'Now add a test.', 'queue', false],
    ]);
  });

  it('stops a running turn when closed, and shows nothing after', async () => {
    const { server, host, thread, chat } = await setUp();
    await chat.submit('Explain the whole module.');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'x' }));
    await chat.close();
    expect(server.method('agent/cancel')).toEqual([{ sessionId: 'ses_inline1' }]);
    expect(thread.disposed).toBe(true);
    const shown = thread.shown;
    host.handleEvent(ev({ type: 'text-delta', sessionId: 'ses_inline1', delta: 'late' }));
    expect(thread.shown).toBe(shown);
    await chat.submit('ignored');
    expect(server.method('agent/prompt')).toHaveLength(1);
  });

  it('leaves a waiting proposal decidable when closed (the turn is not stopped)', async () => {
    const { server, host, thread, chat } = await setUp();
    await chat.submit('Shorten these docstrings.');
    host.handleEvent(ev({ type: 'turn-start', sessionId: 'ses_inline1', messageId: 'm1', prompt: 'x' }));
    host.handleEvent(
      ev({ type: 'permission-request', sessionId: 'ses_inline1', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'Edit calc.py', input: {}, edit: TWO_HUNKS }),
    );
    await chat.close();
    expect(thread.disposed).toBe(true);
    expect(server.method('agent/cancel')).toEqual([]);
    // Still listed as waiting for review (the panel's list; the editor's lenses come from it too).
    expect(host.proposals().map((p) => p.requestId)).toEqual(['r1']);
  });

  it('closed after its turn ended, stops nothing', async () => {
    const { server, host, chat } = await setUp();
    await chat.submit('What does this do?');
    host.handleEvent(ev({ type: 'turn-end', sessionId: 'ses_inline1', finishReason: 'end_turn' }));
    await chat.close();
    expect(server.method('agent/cancel')).toEqual([]);
  });

  it('says a stopped turn and a failed one in the thread', async () => {
    const { host, thread, chat } = await setUp();
    await chat.submit('Explain.');
    host.handleEvent(ev({ type: 'error', sessionId: 'ses_inline1', message: 'The API is down.', nextStep: 'Retry in the panel.' }));
    host.handleEvent(ev({ type: 'turn-end', sessionId: 'ses_inline1', finishReason: 'cancelled' }));
    expect(thread.answer).toBe('**The API is down.** Retry in the panel.\n\nStopped.');
  });
});

describe('inline chat helpers', () => {
  it('word a tool call as progress', () => {
    expect(progressLine('read', 'read calc.py')).toBe('Reading calc.py');
    expect(progressLine('grep', 'grep def mean')).toBe('Searching for def mean');
    expect(progressLine('bash', 'pytest -q')).toBe('pytest -q');
    expect(progressLine('outline', 'outline')).toBe('outline');
    expect(progressLine('bash', '')).toBe('bash');
  });

  it("count a proposal's hunks and find its first line", () => {
    expect(editHunks(TWO_HUNKS)).toBe(2);
    expect(firstEditLine(TWO_HUNKS)).toBe(4);
    expect(editHunks({ changes: { [SELECTION.uri]: [{ range: { start: { line: 7 } } }] } })).toBe(1);
    expect(firstEditLine({ changes: { [SELECTION.uri]: [{ range: { start: { line: 7 } } }] } })).toBe(7);
    expect(editHunks(undefined)).toBe(1);
    expect(firstEditLine(undefined)).toBeUndefined();
    expect(firstEditUri(TWO_HUNKS)).toBe(SELECTION.uri);
    expect(firstEditUri({ changes: { 'file:///work/b.py': [{ range: { start: { line: 1 } } }] } })).toBe('file:///work/b.py');
    expect(firstEditUri(undefined)).toBeUndefined();
  });
});
