// The todo list, plan mode and steering in the extension: the reducer (todo, mode and steer
// events), the panel's messages, and what the host asks the server (agent/setMode, agent/prompt
// with mode "steer" only while a turn runs, the todo list and mode of a loaded session).
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import { applyEvent, emptyView, promptSent, type UserItem } from '../../src/model/transcript';
import type { AgentRequests } from '../../src/protocol/generated';
import { todoSummary } from '../../src/webview/todo';

const TODOS = [
  { content: 'read the module', status: 'completed' as const },
  { content: 'write the fix', status: 'in_progress' as const, priority: 'high' as const },
  { content: 'run the tests', status: 'pending' as const },
];

describe('the reducer', () => {
  it('keeps the latest todo list and the mode', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'todo', sessionId: 's', todos: TODOS });
    expect(view.todos).toEqual(TODOS);
    applyEvent(view, { type: 'todo', sessionId: 's', todos: [] });
    expect(view.todos).toEqual([]);
    applyEvent(view, { type: 'mode', sessionId: 's', mode: 'plan' });
    expect(view.mode).toBe('plan');
  });

  it('shows a steer where it joined the turn, and no longer as waiting', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'go' });
    promptSent(view, 'in French', [], true);
    promptSent(view, 'after that', []);
    expect(view.steering).toEqual(['in French']);
    applyEvent(view, { type: 'steer', sessionId: 's', messageId: 'm2', prompt: 'in French' });
    expect(view.queued).toEqual(['after that']); // the queued one still waits
    expect(view.steering).toEqual([]);
    const last = view.items.at(-1) as UserItem;
    expect(last).toMatchObject({ kind: 'user', text: 'in French', steered: true });
  });

  it('a steer the turn did not take starts a turn of its own', () => {
    const view = emptyView('s');
    promptSent(view, 'late', [], true);
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'late' });
    expect(view.queued).toEqual([]);
    expect(view.steering).toEqual([]);
  });

  it('sums the list up: done, of all, and what is in progress', () => {
    expect(todoSummary(TODOS)).toBe('Todo · 1 of 3 done · write the fix');
    expect(todoSummary([{ content: 'a', status: 'completed' }])).toBe('Todo · 1 of 1 done');
  });
});

describe('panel messages', () => {
  it('takes a prompt mode and a session mode, and nothing else', () => {
    expect(isPanelMessage({ type: 'prompt', text: 'x', mode: 'steer' })).toBe(true);
    expect(isPanelMessage({ type: 'prompt', text: 'x', mode: 'now' })).toBe(false);
    expect(isPanelMessage({ type: 'set-mode', mode: 'plan' })).toBe(true);
    expect(isPanelMessage({ type: 'set-mode', mode: 'yolo' })).toBe(false);
  });
});

class Server implements AgentConnection {
  calls: { method: string; params: unknown }[] = [];
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const answer = (value: unknown): Promise<AgentRequests[M]['result']> => Promise.resolve(value as AgentRequests[M]['result']);
    switch (method) {
      case 'agent/listSessions':
        return answer({ sessions: [{ sessionId: 'ses_1', title: 't', createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage: {}, mode: 'plan' }] });
      case 'agent/getMessages':
        return answer({ messages: [], todos: TODOS, mode: 'plan' });
      case 'agent/newSession':
        return answer({ sessionId: 'ses_2' });
      case 'agent/prompt':
        return answer({ sessionId: 'ses_1', messageId: null, finishReason: 'end_turn', text: '', usage: {} });
      default:
        return answer({ mode: 'plan' });
    }
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

describe('the host', () => {
  it('loads a session with its todo list and mode, sets the mode, and steers only a busy session', async () => {
    const server = new Server();
    const ui = new Ui();
    const host = new AgentHost(ui, new Memory());
    await host.connected(server);
    const view = host.views.get('ses_1')!;
    expect(view.todos).toEqual(TODOS);
    expect(view.mode).toBe('plan');

    await host.handlePanelMessage({ type: 'set-mode', mode: 'build' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/setMode', params: { sessionId: 'ses_1', mode: 'build' } });

    await host.handlePanelMessage({ type: 'prompt', text: 'idle', mode: 'steer' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/prompt', params: { sessionId: 'ses_1', text: 'idle' } });

    host.handleEvent({ type: 'turn-start', sessionId: 'ses_1', messageId: 'm', prompt: 'work' });
    await host.handlePanelMessage({ type: 'prompt', text: 'faster', mode: 'steer' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/prompt', params: { sessionId: 'ses_1', text: 'faster', mode: 'steer' } });
    expect(ui.posted).toContainEqual({ type: 'prompt-sent', sessionId: 'ses_1', text: 'faster', steer: true });
    expect(ui.errors).toEqual([]);
  });
});
