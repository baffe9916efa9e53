// The host side of Restore, Redo and review "after" (checkpoints.ts, through AgentHost): what it
// asks the server, what it tells the panel, and the conflicts it opens.
import { beforeEach, describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import type { ReviewUi } from '../../src/hostTypes';
import type { HostMessage } from '../../src/model/messages';
import { isPanelMessage } from '../../src/model/messages';
import type { AgentRequests, ReviewFile, RevertConflict } from '../../src/protocol/generated';

type Method = keyof AgentRequests;

class Server implements AgentConnection {
  calls: { method: Method; params: unknown }[] = [];
  answers: Partial<Record<Method, unknown>> = {};
  failures: Partial<Record<Method, Error>> = {};
  request<M extends Method>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const failure = this.failures[method];
    if (failure) return Promise.reject(failure);
    const fallback: Partial<Record<Method, unknown>> = {
      'agent/listSessions': { sessions: [{ sessionId: 's', title: 'Parser', createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage: {} }] },
      'agent/getMessages': { messages: [] },
    };
    return Promise.resolve((this.answers[method] ?? fallback[method] ?? {}) as AgentRequests[M]['result']);
  }
  asked(method: Method): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.params);
  }
}

class Ui implements HostUi {
  posted: HostMessage[] = [];
  errors: string[] = [];
  conflicts: RevertConflict[] = [];
  diffs: ReviewFile[] = [];
  review: ReviewUi = {
    openConflict: async (c) => {
      this.conflicts.push(c);
    },
    openReviewDiff: async (f) => {
      this.diffs.push(f);
    },
  };
  post(m: HostMessage): void {
    this.posted.push(m);
  }
  showError(m: string): void {
    this.errors.push(m);
  }
  openDiff(): void {}
  openFile(): void {}
  types(): string[] {
    return this.posted.map((m) => m.type);
  }
}

const memory = { values: new Map<string, unknown>(), get: <T>(k: string) => memory.values.get(k) as T, update: async () => undefined };
const CONFLICT: RevertConflict = { path: '/w/notes.md', before: 'a\n', agent: 'b\n', current: 'c\n' };
const FILE: ReviewFile = {
  path: '/w/calc.py',
  base: 'a\n',
  agent: 'A\n',
  hunks: [{ index: 0, oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, diff: '@@ -1 +1 @@\n-a\n+A\n' }],
};

let server: Server;
let ui: Ui;
let host: AgentHost;

beforeEach(async () => {
  server = new Server();
  ui = new Ui();
  host = new AgentHost(ui, memory);
  await host.connected(server);
  expect(host.activeSessionId).toBe('s');
  server.calls = [];
  ui.posted = [];
});

describe('restore', () => {
  it('previews with dryRun and tells the panel what it would touch, or why not', async () => {
    const preview = { files: ['/w/calc.py'], conflicts: [CONFLICT], bashNotUndone: true, bashCommands: ['make'] };
    server.answers['agent/revert'] = preview;
    await host.handlePanelMessage({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'code' });
    expect(server.asked('agent/revert')).toEqual([{ sessionId: 's', messageId: 'u1', scope: 'code', dryRun: true }]);
    expect(ui.posted).toEqual([{ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'code', preview }]);
    expect(ui.conflicts).toEqual([]); // a preview opens nothing
    server.failures['agent/revert'] = new Error('the session is busy');
    await host.handlePanelMessage({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'both' });
    expect(ui.posted.at(-1)).toEqual({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'both', error: 'the session is busy' });
  });

  it('reverts, reloads the transcript, fills the prompt box and opens the conflicts', async () => {
    const result = { files: ['/w/calc.py'], conflicts: [CONFLICT], prompt: 'add a parser' };
    server.answers['agent/revert'] = result;
    await host.handlePanelMessage({ type: 'revert', sessionId: 's', messageId: 'u1', scope: 'both' });
    expect(server.asked('agent/revert')).toEqual([{ sessionId: 's', messageId: 'u1', scope: 'both' }]);
    expect(server.asked('agent/getMessages')).toEqual([{ sessionId: 's' }]);
    expect(ui.types()).toEqual(['state', 'reverted', 'focus-prompt']);
    expect(ui.posted[1]).toEqual({ type: 'reverted', sessionId: 's', messageId: 'u1', scope: 'both', result });
    expect(ui.posted[2]).toEqual({ type: 'focus-prompt', text: 'add a parser' });
    expect(ui.conflicts).toEqual([CONFLICT]);
  });

  it('keeps the prompt box for a code-only restore', async () => {
    server.answers['agent/revert'] = { files: ['/w/calc.py'], prompt: 'add a parser' };
    await host.handlePanelMessage({ type: 'revert', sessionId: 's', messageId: 'u1', scope: 'code' });
    expect(ui.types()).toEqual(['state', 'reverted']);
  });

  it('says why a revert failed, in VS Code and in the form', async () => {
    server.failures['agent/revert'] = new Error('unknown messageId');
    await host.handlePanelMessage({ type: 'revert', sessionId: 's', messageId: 'u9', scope: 'both' });
    expect(ui.errors).toEqual(['agentls: could not restore: unknown messageId']);
    expect(ui.posted).toEqual([{ type: 'revert-preview', sessionId: 's', messageId: 'u9', scope: 'both', error: 'unknown messageId' }]);
    expect(server.asked('agent/getMessages')).toEqual([]);
  });

  it('redoes, reloads and opens the conflicts; a refused redo says why', async () => {
    const result = { files: ['/w/calc.py'], conflicts: [CONFLICT], messageIds: ['u1', 'a1'] };
    server.answers['agent/unrevert'] = result;
    await host.handlePanelMessage({ type: 'unrevert', sessionId: 's' });
    expect(server.asked('agent/unrevert')).toEqual([{ sessionId: 's' }]);
    expect(ui.types()).toEqual(['state', 'unreverted']);
    expect(ui.posted[1]).toEqual({ type: 'unreverted', sessionId: 's', result });
    expect(ui.conflicts).toEqual([CONFLICT]);
    server.failures['agent/unrevert'] = new Error('nothing to redo');
    await host.handlePanelMessage({ type: 'unrevert', sessionId: 's' });
    expect(ui.posted.at(-1)).toEqual({ type: 'unreverted', sessionId: 's', error: 'nothing to redo' });
    expect(ui.errors).toEqual(['agentls: could not redo: nothing to redo']);
  });

  it('reads the summarized messages with history "all" for the panel, or says why not', async () => {
    const old = { id: 'u1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'add a parser' }], summarized: true };
    const summary = { id: 'sum', role: 'user', createdAt: 2, parts: [{ type: 'summary', text: 'a parser was added' }] };
    server.answers['agent/getMessages'] = { messages: [old, summary] };
    await host.handlePanelMessage({ type: 'earlier-messages', sessionId: 's' });
    expect(server.asked('agent/getMessages')).toEqual([{ sessionId: 's', history: 'all' }]);
    expect(ui.posted).toEqual([{ type: 'earlier-messages', sessionId: 's', messages: [old] }]);
    server.failures['agent/getMessages'] = new Error('unknown session');
    await host.handlePanelMessage({ type: 'earlier-messages', sessionId: 's' });
    expect(ui.posted.at(-1)).toEqual({ type: 'earlier-messages', sessionId: 's', messages: [], error: 'unknown session' });
  });
});

describe('review after', () => {
  it('lists, answers, opens the conflict of an undo and the diff of a file', async () => {
    server.answers['agent/listReview'] = { files: [FILE] };
    await host.handlePanelMessage({ type: 'list-review', sessionId: 's' });
    expect(ui.posted).toEqual([{ type: 'review-files', sessionId: 's', files: [FILE] }]);
    await host.handlePanelMessage({ type: 'open-review-diff', sessionId: 's', path: '/w/calc.py' });
    expect(ui.diffs).toEqual([FILE]);
    await host.handlePanelMessage({ type: 'open-review-diff', sessionId: 's', path: '/w/unknown.py' });
    expect(ui.diffs).toHaveLength(1);
    server.answers['agent/review'] = { files: [], conflict: CONFLICT };
    await host.handlePanelMessage({ type: 'review-action', sessionId: 's', path: '/w/calc.py', action: 'undo', hunks: [0] });
    expect(server.asked('agent/review')).toEqual([{ sessionId: 's', path: '/w/calc.py', action: 'undo', hunks: [0] }]);
    expect(ui.posted.at(-1)).toEqual({ type: 'review-files', sessionId: 's', files: [] });
    expect(ui.conflicts).toEqual([CONFLICT]);
  });

  it('knows a file from the review event, and gives the panel its list back after a failed answer', async () => {
    host.handleEvent({ type: 'review', sessionId: 's', files: [FILE] });
    await host.handlePanelMessage({ type: 'open-review-diff', sessionId: 's', path: '/w/calc.py' });
    expect(ui.diffs).toEqual([FILE]);
    server.failures['agent/review'] = new Error('hunks: /w/calc.py has no hunk 3 (it has 1)');
    await host.handlePanelMessage({ type: 'review-action', sessionId: 's', path: '/w/calc.py', action: 'keep', hunks: [3] });
    expect(ui.errors).toEqual(['agentls: could not keep /w/calc.py: hunks: /w/calc.py has no hunk 3 (it has 1)']);
    expect(ui.posted.at(-1)).toEqual({ type: 'review-files', sessionId: 's', files: [FILE] });
  });

  it('shows nothing pending when the server has no review for the session', async () => {
    server.failures['agent/listReview'] = new Error('Method not found');
    await host.handlePanelMessage({ type: 'list-review', sessionId: 's' });
    expect(ui.posted).toEqual([]);
    expect(ui.errors).toEqual([]);
  });
});

describe('the panel messages', () => {
  it('takes well-formed ones and refuses the rest', () => {
    expect(isPanelMessage({ type: 'revert', sessionId: 's', messageId: 'u1', scope: 'both' })).toBe(true);
    expect(isPanelMessage({ type: 'revert', sessionId: 's', messageId: 'u1', scope: 'all' })).toBe(false);
    expect(isPanelMessage({ type: 'revert-preview', sessionId: 's', messageId: '', scope: 'code' })).toBe(false);
    expect(isPanelMessage({ type: 'unrevert', sessionId: 's' })).toBe(true);
    expect(isPanelMessage({ type: 'earlier-messages', sessionId: 's' })).toBe(true);
    expect(isPanelMessage({ type: 'earlier-messages', sessionId: '' })).toBe(false);
    expect(isPanelMessage({ type: 'review-action', sessionId: 's', path: 'a.py', action: 'keep', hunks: [0, 2] })).toBe(true);
    expect(isPanelMessage({ type: 'review-action', sessionId: 's', path: 'a.py', action: 'keep', hunks: [-1] })).toBe(false);
    expect(isPanelMessage({ type: 'review-action', sessionId: 's', path: 'a.py', action: 'delete' })).toBe(false);
    expect(isPanelMessage({ type: 'open-review-diff', sessionId: 's' })).toBe(false);
  });
});
