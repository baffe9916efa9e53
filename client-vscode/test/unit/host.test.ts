import { beforeEach, describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import type { HostMessage } from '../../src/model/messages';
import type { AgentEvent, AgentRequests } from '../../src/protocol/generated';
import { loadFixture } from '../support/fixture';

const fixture = loadFixture();
const recorded = fixture.sessions[0].sessionId;

type Call = { method: keyof AgentRequests; params: unknown };

/** A fake server: answers from the recording, remembers every request. */
class FakeServer implements AgentConnection {
  calls: Call[] = [];
  fail: Partial<Record<keyof AgentRequests, Error>> = {};
  promptResolvers: (() => void)[] = [];
  newSessionCount = 0;

  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const failure = this.fail[method];
    if (failure) return Promise.reject(failure);
    const answer = (value: unknown): Promise<AgentRequests[M]['result']> => Promise.resolve(value as AgentRequests[M]['result']);
    switch (method) {
      case 'agent/listSessions':
        return answer({ sessions: fixture.sessions });
      case 'agent/getMessages':
        return answer({ messages: (params as { sessionId: string }).sessionId === recorded ? fixture.messages : [] });
      case 'agent/newSession':
        this.newSessionCount += 1;
        return answer({ sessionId: `ses_new${this.newSessionCount}` });
      case 'agent/prompt':
        return new Promise((resolve) => this.promptResolvers.push(() => resolve(fixture.result as never)));
      default:
        return answer({});
    }
  }

  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

class FakeUi implements HostUi {
  posted: HostMessage[] = [];
  errors: string[] = [];
  diffs: string[] = [];
  post(message: HostMessage): void {
    this.posted.push(message);
  }
  showError(message: string): void {
    this.errors.push(message);
  }
  openDiff(requestId: string): void {
    this.diffs.push(requestId);
  }
  openFile(): void {}
  last<T extends HostMessage['type']>(type: T): Extract<HostMessage, { type: T }> | undefined {
    return this.posted.filter((m): m is Extract<HostMessage, { type: T }> => m.type === type).at(-1);
  }
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

const flush = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

let server: FakeServer;
let ui: FakeUi;
let memory: Memory;
let host: AgentHost;

beforeEach(() => {
  server = new FakeServer();
  ui = new FakeUi();
  memory = new Memory();
  host = new AgentHost(ui, memory);
});

describe('after the server starts', () => {
  it('opens the newest session and loads its history with agent/getMessages', async () => {
    await host.connected(server);
    expect(server.methods()).toEqual(['agent/listSessions', 'agent/getMessages']);
    expect(host.activeSessionId).toBe(recorded);
    expect(memory.get('agentls.activeSessionId')).toBe(recorded);
    const state = ui.last('state')?.state;
    expect(state?.connection).toBe('running');
    expect(state?.sessions).toEqual(fixture.sessions);
    expect(state?.view?.items.filter((i) => i.kind === 'tool')).toHaveLength(4);
  });

  it('reopens the session that was active before VS Code reloaded', async () => {
    memory.values.set('agentls.activeSessionId', recorded);
    host = new AgentHost(ui, memory);
    expect(host.activeSessionId).toBe(recorded);
    await host.connected(server);
    expect(server.calls[1]).toEqual({ method: 'agent/getMessages', params: { sessionId: recorded } });
  });

  it('answers a panel that (re)loads with the whole state', async () => {
    await host.connected(server);
    ui.posted = [];
    await host.handlePanelMessage({ type: 'ready' });
    expect(ui.posted).toHaveLength(1);
    expect(ui.posted[0].type).toBe('state');
  });
});

describe('events', () => {
  it('forwards the active session’s events to the panel and keeps the status', async () => {
    await host.connected(server);
    await host.newSession();
    const sid = host.activeSessionId!;
    const events = fixture.events.map((e) => ({ ...e, sessionId: sid }) as AgentEvent);
    const firstRequest = events.findIndex((e) => e.type === 'permission-request');
    ui.posted = [];
    for (const event of events.slice(0, firstRequest + 1)) host.handleEvent(event);
    expect(ui.posted.filter((m) => m.type === 'event')).toHaveLength(firstRequest + 1);
    expect(host.status()).toMatchObject({ busy: true, activeBusy: true, waitingForApproval: 1, runningTool: 'python3 -m unittest -v 2>&1' });
    for (const event of events.slice(firstRequest + 1)) host.handleEvent(event);
    expect(host.status()).toMatchObject({ busy: false, waitingForApproval: 0, costUsd: 0 });
  });

  it('keeps other sessions’ events out of the panel but in their own views', async () => {
    await host.connected(server);
    ui.posted = [];
    host.handleEvent({ type: 'turn-start', sessionId: 'ses_other', messageId: 'm', prompt: 'elsewhere' });
    expect(ui.posted).toEqual([]);
    expect(host.views.get('ses_other')?.busy).toBe(true);
    expect(host.status().busy).toBe(true);
    // Stop acts on the session shown: another session's turn (a background one) does not offer it
    expect(host.status().activeBusy).toBe(false);
  });

  it('notifies listeners of changes, but not of every text delta', async () => {
    await host.connected(server);
    let changes = 0;
    host.onDidChange(() => changes++);
    host.handleEvent({ type: 'text-delta', sessionId: recorded, delta: 'a' });
    host.handleEvent({ type: 'text-delta', sessionId: recorded, delta: 'b' });
    expect(changes).toBe(0);
    host.handleEvent({ type: 'tool-call', sessionId: recorded, callId: 'c', tool: 'read', input: {}, title: 'read x' });
    expect(changes).toBe(1);
  });

  it('drops events of a session while its history loads (the history has them)', async () => {
    await host.connected(server);
    let release!: () => void;
    const slow: AgentConnection = {
      request: (method, params) =>
        method === 'agent/getMessages'
          ? new Promise((resolve) => {
              release = () => resolve({ messages: [] } as never);
            })
          : server.request(method, params),
    };
    await host.connected(server);
    await host.disconnected('restarting', 'x');
    const loading = host.connected(slow);
    await flush();
    host.handleEvent({ type: 'text-delta', sessionId: recorded, delta: 'lost in the load' });
    release();
    await loading;
    expect(host.activeView?.items).toEqual([]);
  });
});

describe('panel messages', () => {
  beforeEach(async () => {
    await host.connected(server);
  });

  it('sends a prompt, shown as sent until its turn starts', async () => {
    const done = host.handlePanelMessage({ type: 'prompt', text: '  fix it  ' });
    await flush();
    expect(server.calls.at(-1)).toEqual({ method: 'agent/prompt', params: { sessionId: recorded, text: 'fix it' } });
    expect(ui.last('prompt-sent')).toEqual({ type: 'prompt-sent', sessionId: recorded, text: 'fix it' });
    expect(host.activeView?.queued).toEqual(['fix it']);
    host.handleEvent({ type: 'turn-start', sessionId: recorded, messageId: 'm', prompt: 'fix it' });
    expect(host.activeView?.queued).toEqual([]);
    server.promptResolvers.shift()?.();
    await done;
  });

  it('runs a prompt in the background: agent/prompt background, a notice saying where', async () => {
    const done = host.handlePanelMessage({ type: 'prompt-background', text: ' add pagination ' });
    await flush();
    expect(server.calls.at(-1)).toEqual({
      method: 'agent/prompt',
      params: { sessionId: recorded, text: 'add pagination', background: true },
    });
    expect(host.activeView?.queued).toEqual([]); // not a prompt of this session
    const posted = ui.posted.length;
    server.promptResolvers.shift()?.();
    await done;
    const notices = host.activeView?.items.filter((i) => i.kind === 'notice') ?? [];
    expect(notices.at(-1)).toMatchObject({ level: 'info', text: fixture.result.text });
    // And the panel is sent the view with it at once (not with the session's next event).
    expect(ui.posted.slice(posted).map((m) => m.type)).toContain('state');
  });

  it('says why a background prompt was refused', async () => {
    server.fail['agent/prompt'] = new Error('background: 3 background sessions are running already');
    const posted = ui.posted.length;
    await host.handlePanelMessage({ type: 'prompt-background', text: 'one more' });
    const notices = host.activeView?.items.filter((i) => i.kind === 'notice') ?? [];
    expect(notices.at(-1)).toMatchObject({ level: 'error', text: 'Could not start it in the background: background: 3 background sessions are running already' });
    expect(ui.posted.slice(posted).map((m) => m.type)).toContain('state');
  });

  it('sends the selection along with an "Ask about selection" prompt', async () => {
    const range = { start: { line: 9, character: 0 }, end: { line: 14, character: 52 } };
    void host.prompt('why is median wrong?', [{ uri: 'file:///w/calc.py', range }]);
    await flush();
    expect(server.calls.at(-1)).toEqual({
      method: 'agent/prompt',
      params: { sessionId: recorded, text: 'why is median wrong?', context: [{ uri: 'file:///w/calc.py', range }] },
    });
    expect(ui.last('prompt-sent')).toEqual({
      type: 'prompt-sent', sessionId: recorded, text: 'why is median wrong?', context: ['calc.py:10-15'],
    });
  });

  it('sends a prompt of images only, and nothing for a blank prompt without images', async () => {
    await host.handlePanelMessage({ type: 'prompt', text: '   ' });
    expect(server.methods()).not.toContain('agent/prompt');
    void host.handlePanelMessage({ type: 'prompt', text: ' ', images: [{ mimeType: 'image/png', data: 'AAAA' }] });
    await flush();
    expect(server.calls.at(-1)).toEqual({
      method: 'agent/prompt',
      params: { sessionId: recorded, text: '', context: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
    });
    expect(ui.last('prompt-sent')).toEqual({ type: 'prompt-sent', sessionId: recorded, text: '', images: ['data:image/png;base64,AAAA'] });
  });

  it('creates a session for the first prompt when there is none', async () => {
    host = new AgentHost(ui, new Memory());
    server = new FakeServer();
    server.request = ((orig) =>
      function (this: FakeServer, method: keyof AgentRequests, params: never) {
        if (method === 'agent/listSessions') {
          this.calls.push({ method, params });
          return Promise.resolve({ sessions: [] });
        }
        return orig.call(this, method, params);
      })(server.request) as FakeServer['request'];
    await host.connected(server);
    expect(host.activeSessionId).toBeUndefined();
    void host.handlePanelMessage({ type: 'prompt', text: 'hello' });
    await flush();
    await flush();
    expect(server.methods()).toContain('agent/newSession');
    expect(server.calls.at(-1)).toMatchObject({ method: 'agent/prompt', params: { sessionId: 'ses_new1', text: 'hello' } });
  });

  it('reports a failed prompt in the panel', async () => {
    server.fail['agent/prompt'] = new Error('Invalid params: text: too long');
    await host.handlePanelMessage({ type: 'prompt', text: 'x' });
    expect(ui.last('prompt-failed')).toMatchObject({ text: 'x', message: 'The prompt failed: Invalid params: text: too long' });
    expect(host.activeView?.queued).toEqual([]);
  });

  it('passes approvals through, with feedback only when there is some', async () => {
    await host.handlePanelMessage({ type: 'approve', sessionId: recorded, requestId: 'perm_1', decision: 'once' });
    await host.handlePanelMessage({
      type: 'approve', sessionId: recorded, requestId: 'perm_2', decision: 'reject', feedback: 'not that file',
    });
    expect(server.calls.slice(-2)).toEqual([
      { method: 'agent/approve', params: { sessionId: recorded, requestId: 'perm_1', decision: 'once' } },
      {
        method: 'agent/approve',
        params: { sessionId: recorded, requestId: 'perm_2', decision: 'reject', feedback: 'not that file' },
      },
    ]);
  });

  it('sends the scope of a project-wide "always" (the session scope is the default)', async () => {
    await host.handlePanelMessage({ type: 'approve', sessionId: recorded, requestId: 'perm_3', decision: 'always', scope: 'project' });
    await host.handlePanelMessage({ type: 'approve', sessionId: recorded, requestId: 'perm_4', decision: 'always', scope: 'session' });
    await host.handlePanelMessage({ type: 'approve', sessionId: recorded, requestId: 'perm_5', decision: 'once', scope: 'project' });
    expect(server.calls.slice(-3)).toEqual([
      { method: 'agent/approve', params: { sessionId: recorded, requestId: 'perm_3', decision: 'always', scope: 'project' } },
      { method: 'agent/approve', params: { sessionId: recorded, requestId: 'perm_4', decision: 'always' } },
      { method: 'agent/approve', params: { sessionId: recorded, requestId: 'perm_5', decision: 'once' } },
    ]);
  });

  it('shows an error when an approval is refused (answered elsewhere)', async () => {
    server.fail['agent/approve'] = new Error('Invalid params: requestId: unknown requestId');
    const ok = await host.approve(recorded, 'perm_x', 'always');
    expect(ok).toBe(false);
    expect(ui.errors[0]).toContain('unknown requestId');
  });

  it('stops the active session', async () => {
    await host.handlePanelMessage({ type: 'cancel' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/cancel', params: { sessionId: recorded } });
  });

  it('retries the active session\'s failed turn, and says why when the server refuses', async () => {
    await host.handlePanelMessage({ type: 'retry' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/retry', params: { sessionId: recorded } });
    server.fail['agent/retry'] = new Error('Invalid params: sessionId: there is nothing to retry');
    await host.handlePanelMessage({ type: 'retry' });
    expect(ui.errors.at(-1)).toBe('agentls: could not retry: Invalid params: sessionId: there is nothing to retry');
  });

  it('starts a new session and shows it empty', async () => {
    await host.handlePanelMessage({ type: 'new-session' });
    expect(host.activeSessionId).toBe('ses_new1');
    expect(ui.last('state')?.state.view).toMatchObject({ sessionId: 'ses_new1', items: [] });
    expect(memory.get('agentls.activeSessionId')).toBe('ses_new1');
  });

  it('shows a background session\'s question in the open session, and keeps it when that session is opened', async () => {
    await host.connected(server);
    const bg = { ...fixture.sessions[0], sessionId: 'ses_bg', title: 'rename it', background: { state: 'running' as const, branch: 'agentls/rename-it', worktree: '/wt', base: 'abc' } };
    host.sessions.push(bg);
    const input = { path: 'a.py', old_string: '1', new_string: '2' };
    host.handleEvent({ type: 'turn-start', sessionId: 'ses_bg', messageId: 'm', prompt: 'rename it' });
    host.handleEvent({ type: 'tool-call', sessionId: 'ses_bg', callId: 'c1', tool: 'edit', title: 'edit a.py', input });
    host.handleEvent({ type: 'permission-request', sessionId: 'ses_bg', requestId: 'r1', callId: 'c1', tool: 'edit', title: 'edit a.py', input });
    expect(ui.last('background-questions')?.questions).toEqual([
      expect.objectContaining({ sessionId: 'ses_bg', sessionTitle: 'rename it', branch: 'agentls/rename-it', requestId: 'r1' }),
    ]);
    await host.handlePanelMessage({ type: 'select-session', sessionId: 'ses_bg' });
    const card = host.activeView?.items.find((i) => i.kind === 'tool' && i.callId === 'c1');
    expect(card).toMatchObject({ permission: { requestId: 'r1', state: 'pending' } }); // not lost with the reload
    expect(ui.last('state')?.state.backgroundQuestions).toEqual([]); // it is in the transcript now
  });

  it("shows the question of a background session the session list did not have yet, once the list has it", async () => {
    await host.connected(server);
    const bg = { ...fixture.sessions[0], sessionId: 'ses_bg_new', title: 'tidy it', background: { state: 'waiting' as const, branch: 'agentls/tidy-it', worktree: '/wt2', base: 'abc' } };
    const list = server.request.bind(server);
    server.request = ((method: string, params: never) =>
      method === 'agent/listSessions' ? Promise.resolve({ sessions: [bg] }) : list(method as never, params)) as typeof server.request;
    const input = { path: 'b.py', old_string: '1', new_string: '2' };
    host.handleEvent({ type: 'tool-call', sessionId: 'ses_bg_new', callId: 'c9', tool: 'edit', title: 'edit b.py', input });
    host.handleEvent({ type: 'permission-request', sessionId: 'ses_bg_new', requestId: 'r9', callId: 'c9', tool: 'edit', title: 'edit b.py', input });
    expect(ui.last('background-questions')?.questions).toEqual([]); // not known as a background session yet
    await expect.poll(() => ui.last('background-questions')?.questions, { timeout: 5000 }).toEqual([
      expect.objectContaining({ sessionId: 'ses_bg_new', sessionTitle: 'tidy it', branch: 'agentls/tidy-it', requestId: 'r9' }),
    ]);
    expect(ui.last('sessions')?.sessions.find((s) => s.sessionId === 'ses_bg_new')?.background?.state).toBe('waiting');
  });

  it("turns a detached run's question from the session list into a card, and its answer into agent/approve", async () => {
    const waiting = { requestId: 'q7', tool: 'ask_user', title: 'ask the user', input: { question: 'Which database?' } };
    let questions = [waiting];
    const bg = () => ({ ...fixture.sessions[0], sessionId: 'ses_cli', title: 'pick a db', background: { state: 'waiting' as const, branch: 'agentls/pick-a-db', worktree: '/wt3', base: 'abc', questions } });
    const list = server.request.bind(server);
    server.request = ((method: string, params: never) => {
      if (method !== 'agent/listSessions') return list(method as never, params);
      server.calls.push({ method: 'agent/listSessions', params });
      return Promise.resolve({ sessions: [bg()] });
    }) as typeof server.request;
    await host.connected(server);
    expect(ui.last('state')?.state.backgroundQuestions).toEqual([
      { sessionId: 'ses_cli', sessionTitle: 'pick a db', branch: 'agentls/pick-a-db', requestId: 'q7', tool: 'ask_user', title: 'ask the user', input: { question: 'Which database?' }, diff: undefined },
    ]);
    questions = [];
    server.calls = [];
    await host.handlePanelMessage({ type: 'approve', sessionId: 'ses_cli', requestId: 'q7', decision: 'once', feedback: 'SQLite' });
    expect(server.calls[0]).toEqual({ method: 'agent/approve', params: { sessionId: 'ses_cli', requestId: 'q7', decision: 'once', feedback: 'SQLite' } });
    await expect.poll(() => ui.last('background-questions')?.questions, { timeout: 5000 }).toEqual([]);
    expect(server.methods()).toContain('agent/listSessions'); // answered: the list asked again
    host.dispose();
  });

  it('switches sessions, loading history it has not seen', async () => {
    await host.handlePanelMessage({ type: 'new-session' });
    server.calls = [];
    await host.handlePanelMessage({ type: 'select-session', sessionId: recorded });
    expect(server.methods()).toEqual([]); // seen already
    host.handleEvent({ type: 'turn-start', sessionId: 'ses_started_by_code_action', messageId: 'm', prompt: 'p' });
    await host.handlePanelMessage({ type: 'select-session', sessionId: 'ses_started_by_code_action' });
    expect(server.methods()).toEqual(['agent/getMessages']); // only its events so far: load the history
  });

  it('asks VS Code to show the diff of an edit', async () => {
    await host.handlePanelMessage({ type: 'open-diff', requestId: 'perm_9' });
    expect(ui.diffs).toEqual(['perm_9']);
  });
});

describe('when the server goes away', () => {
  it('ends the running turn, refuses requests, and reloads after the restart', async () => {
    await host.connected(server);
    host.handleEvent({ type: 'turn-start', sessionId: recorded, messageId: 'm', prompt: 'p' });
    host.handleEvent({ type: 'tool-call', sessionId: recorded, callId: 'c', tool: 'bash', input: {}, title: 'sleep 100' });
    host.disconnected('restarting', 'The agentls server stopped unexpectedly; restarting it.');
    expect(host.status()).toMatchObject({ connection: 'restarting', busy: false });
    expect(ui.last('state')?.state).toMatchObject({ connection: 'restarting' });
    expect(host.activeView?.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error' });
    await host.handlePanelMessage({ type: 'prompt', text: 'hello?' });
    expect(ui.errors.at(-1)).toContain('starting');
    server.calls = [];
    await host.connected(server);
    expect(server.methods()).toEqual(['agent/listSessions', 'agent/getMessages']);
    expect(host.status().connection).toBe('running');
  });
});

describe("a background session's review card", () => {
  it('each of its messages reaches the review, resolving a conflict included', async () => {
    await host.connected(server);
    await host.handlePanelMessage({ type: 'background-diff', sessionId: 'ses_bg' });
    expect(server.methods().at(-1)).toBe('agent/backgroundDiff');
    // No conflict of this review was brought in: the card is told, nothing is opened.
    await host.handlePanelMessage({ type: 'background-resolve', sessionId: 'ses_bg', path: 'app.txt', how: 'merge-editor' });
    expect(ui.last('background-resolved')).toMatchObject({ sessionId: 'ses_bg', path: 'app.txt', how: 'failed' });
  });
});
