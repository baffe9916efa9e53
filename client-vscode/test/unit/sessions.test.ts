// The panel's session management through AgentHost (sessions.ts): rename asks for the title,
// delete asks to confirm (and nothing happens without it), the active session deleted moves to
// the next one, fork selects the fork, export saves the server's Markdown, search posts matches;
// isPanelMessage accepts only well-formed session actions.
import { beforeEach, describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import type { AgentRequests, SessionInfo } from '../../src/protocol/generated';
import { exportName, type SessionDialogs } from '../../src/sessions';

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
const info = (sessionId: string, title: string, parentId?: string): SessionInfo =>
  ({ sessionId, title, createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage, ...(parentId ? { parentId } : {}) }) as SessionInfo;

class Server implements AgentConnection {
  sessions = [info('ses_a', 'Parser work'), info('ses_b', 'Docs'), info('ses_c', 'child', 'ses_a')];
  calls: { method: string; params: Record<string, unknown> }[] = [];
  request<M extends keyof AgentRequests>(method: M, raw: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    const params = raw as Record<string, unknown>;
    this.calls.push({ method, params });
    const answer = (value: unknown) => Promise.resolve(value as AgentRequests[M]['result']);
    switch (method) {
      case 'agent/listSessions': {
        const q = typeof params.query === 'string' ? params.query.toLowerCase() : '';
        return answer({ sessions: this.sessions.filter((s) => s.title.toLowerCase().includes(q)) });
      }
      case 'agent/renameSession':
        this.sessions = this.sessions.map((s) => (s.sessionId === params.sessionId ? { ...s, title: String(params.title) } : s));
        return answer({ title: params.title });
      case 'agent/deleteSession':
        this.sessions = this.sessions.filter((s) => s.sessionId !== params.sessionId && s.parentId !== params.sessionId);
        return answer({ deleted: [params.sessionId] });
      case 'agent/forkSession':
        this.sessions = [info('ses_fork', 'Fork of Parser work'), ...this.sessions];
        return answer({ sessionId: 'ses_fork', title: 'Fork of Parser work' });
      case 'agent/exportSession':
        return answer({ markdown: '# Parser work\n' });
      case 'agent/getMessages':
        return answer({ messages: [] });
      default:
        return answer({});
    }
  }
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

class Dialogs implements SessionDialogs {
  title: string | undefined = 'Lexer work';
  confirm = false;
  asked: string[] = [];
  saved: [string, string][] = [];
  async askTitle(current: string) {
    this.asked.push(`title:${current}`);
    return this.title;
  }
  async confirmDelete(title: string) {
    this.asked.push(`delete:${title}`);
    return this.confirm;
  }
  async saveMarkdown(name: string, markdown: string) {
    this.saved.push([name, markdown]);
    return `/tmp/${name}`;
  }
}

class Ui implements HostUi {
  posted: HostMessage[] = [];
  errors: string[] = [];
  constructor(readonly sessions: Dialogs) {}
  post(message: HostMessage) {
    this.posted.push(message);
  }
  showError(message: string) {
    this.errors.push(message);
  }
  openDiff() {}
  openFile() {}
}

const memory = () => {
  const values = new Map<string, unknown>();
  return { get: <T>(k: string) => values.get(k) as T | undefined, update: (k: string, v: unknown) => Promise.resolve(void values.set(k, v)) };
};

let server: Server;
let dialogs: Dialogs;
let ui: Ui;
let host: AgentHost;

beforeEach(async () => {
  server = new Server();
  dialogs = new Dialogs();
  ui = new Ui(dialogs);
  host = new AgentHost(ui, memory());
  await host.connected(server);
  await host.select('ses_a');
});

describe('session management', () => {
  it('renames with the title asked for, and not when cancelled', async () => {
    await host.handlePanelMessage({ type: 'rename-session', sessionId: 'ses_a' });
    expect(dialogs.asked).toEqual(['title:Parser work']);
    expect(server.calls.at(-2)).toEqual({ method: 'agent/renameSession', params: { sessionId: 'ses_a', title: 'Lexer work' } });
    expect(host.sessions.map((s) => s.title)).toContain('Lexer work');
    const listed = ui.posted.filter((m) => m.type === 'sessions').at(-1);
    expect(listed && 'sessions' in listed && listed.sessions.map((s) => s.title)).toContain('Lexer work');
    dialogs.title = undefined;
    const before = server.calls.length;
    await host.handlePanelMessage({ type: 'rename-session', sessionId: 'ses_a' });
    expect(server.calls.length).toBe(before);
  });

  it('deletes only when confirmed, and moves off a deleted active session', async () => {
    await host.handlePanelMessage({ type: 'delete-session', sessionId: 'ses_a' });
    expect(dialogs.asked).toEqual(['delete:Parser work']);
    expect(server.methods()).not.toContain('agent/deleteSession');
    dialogs.confirm = true;
    await host.handlePanelMessage({ type: 'delete-session', sessionId: 'ses_a' });
    expect(server.methods()).toContain('agent/deleteSession');
    expect(host.sessions.map((s) => s.sessionId)).toEqual(['ses_b']);
    expect(host.activeSessionId).toBe('ses_b');
  });

  it('forks at a message and makes the fork the active session', async () => {
    await host.handlePanelMessage({ type: 'fork-session', sessionId: 'ses_a', messageId: 'msg_2' });
    expect(server.calls.find((c) => c.method === 'agent/forkSession')?.params).toEqual({ sessionId: 'ses_a', messageId: 'msg_2' });
    expect(host.activeSessionId).toBe('ses_fork');
    expect(server.calls.at(-1)).toEqual({ method: 'agent/getMessages', params: { sessionId: 'ses_fork' } });
  });

  it('exports the Markdown to the file the save dialog names', async () => {
    await host.handlePanelMessage({ type: 'export-session', sessionId: 'ses_a' });
    expect(dialogs.saved).toEqual([['parser-work.md', '# Parser work\n']]);
    expect(exportName('  ?? ')).toBe('session.md');
  });

  it('searches and posts the matches, leaving sub-agents out', async () => {
    await host.handlePanelMessage({ type: 'search-sessions', query: 'child' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/listSessions', params: { query: 'child' } });
    const result = ui.posted.at(-1);
    expect(result).toEqual({ type: 'session-search', query: 'child', sessions: [] });
    await host.handlePanelMessage({ type: 'search-sessions', query: 'docs' });
    expect(ui.posted.at(-1)).toMatchObject({ type: 'session-search', query: 'docs', sessions: [{ sessionId: 'ses_b' }] });
  });

  it('a server error is shown, not thrown', async () => {
    server.request = () => Promise.reject(new Error('Invalid params: sessionId: busy'));
    await host.handlePanelMessage({ type: 'export-session', sessionId: 'ses_a' });
    expect(ui.errors).toEqual(['agentls: Invalid params: sessionId: busy']);
  });

  it('only well-formed session actions pass isPanelMessage', () => {
    expect(isPanelMessage({ type: 'fork-session', sessionId: 's', messageId: 'm' })).toBe(true);
    expect(isPanelMessage({ type: 'fork-session', sessionId: 's' })).toBe(false);
    expect(isPanelMessage({ type: 'delete-session', sessionId: '' })).toBe(false);
    expect(isPanelMessage({ type: 'search-sessions', query: 'x' })).toBe(true);
    expect(isPanelMessage({ type: 'search-sessions', query: 1 })).toBe(false);
  });
});
