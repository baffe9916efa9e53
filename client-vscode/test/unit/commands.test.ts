// /commands in the extension: what the prompt box completes (commands.ts), the panel's
// list-commands message answered from agent/listCommands, and a built-in's answer (no turn): a
// notice where the prompt waited, /clear's new session made the active one.
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import type { AgentRequests, CommandInfo } from '../../src/protocol/generated';
import { commandDetail, commandQuery, matchCommands } from '../../src/webview/commands';

const COMMANDS: CommandInfo[] = [
  { name: 'clear', description: 'Start a new session', source: 'builtin' },
  { name: 'compact', description: 'Compact the session now', source: 'builtin' },
  { name: 'model', description: 'Show or set the model', source: 'builtin' },
  { name: 'review', description: 'Review a file', source: 'user' },
  { name: 'pre-commit', description: 'Check before committing', source: 'workspace' },
];

describe('completion', () => {
  it('offers commands only while a leading /name is typed', () => {
    expect(commandQuery('/', 1)).toBe('');
    expect(commandQuery('/rev', 4)).toBe('rev');
    expect(commandQuery('/review the parser', 18)).toBeUndefined(); // past the name
    expect(commandQuery('/review the parser', 3)).toBe('re');
    expect(commandQuery('see /review', 11)).toBeUndefined();
    expect(commandQuery('/usr/bin', 8)).toBeUndefined();
    expect(commandQuery('/frontend:comp', 14)).toBe('frontend:comp'); // .claude/commands/frontend/
  });

  it('matches names that start with the query first, then those that contain it', () => {
    expect(matchCommands(COMMANDS, 'c').map((c) => c.name)).toEqual(['clear', 'compact', 'pre-commit']);
    expect(matchCommands(COMMANDS, '').length).toBe(COMMANDS.length);
    expect(matchCommands(COMMANDS, 'zzz')).toEqual([]);
  });

  it('says the agent type a command runs as after its description', () => {
    const audit: CommandInfo = { name: 'audit', description: 'Audit the code', source: 'user', agent: 'auditor' };
    expect(commandDetail(audit)).toBe('Audit the code (as auditor)');
    expect(commandDetail(COMMANDS[3])).toBe('Review a file');
    expect(commandDetail({ ...audit, agent: null })).toBe('Audit the code');
  });
});

class Server implements AgentConnection {
  calls: { method: string; params: unknown }[] = [];
  sessions = ['ses_1'];
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const answer = (value: unknown): Promise<AgentRequests[M]['result']> => Promise.resolve(value as AgentRequests[M]['result']);
    const session = (sessionId: string) => ({ sessionId, title: sessionId, createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage: {}, mode: 'build' });
    switch (method) {
      case 'agent/listSessions':
        return answer({ sessions: this.sessions.map(session) });
      case 'agent/getMessages':
        return answer({ messages: [], todos: [], mode: 'build' });
      case 'agent/listCommands':
        return answer({ commands: COMMANDS });
      case 'agent/prompt': {
        const text = (params as { text: string }).text;
        if (text === '/clear') {
          this.sessions.unshift('ses_2');
          return answer({ sessionId: 'ses_2', finishReason: 'end_turn', text: 'Started a new session (ses_2).', usage: {} });
        }
        return answer({ sessionId: 'ses_1', finishReason: 'end_turn', text: 'The model is now fast.', usage: {} });
      }
      default:
        return answer({});
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
  it('answers list-commands from agent/listCommands', async () => {
    expect(isPanelMessage({ type: 'list-commands' })).toBe(true);
    const server = new Server();
    const ui = new Ui();
    const host = new AgentHost(ui, new Memory());
    await host.connected(server);
    await host.handlePanelMessage({ type: 'list-commands' });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/listCommands', params: {} });
    expect(ui.posted.at(-1)).toEqual({ type: 'commands', commands: COMMANDS });
  });

  it('shows a built-in command’s answer as a notice, and /clear opens the new session', async () => {
    const server = new Server();
    const ui = new Ui();
    const host = new AgentHost(ui, new Memory());
    await host.connected(server);
    await host.handlePanelMessage({ type: 'prompt', text: '/model fast' });
    const view = host.views.get('ses_1')!;
    expect(view.queued).toEqual([]);
    expect(view.items.at(-1)).toMatchObject({ kind: 'notice', level: 'info', text: 'The model is now fast.' });
    await host.handlePanelMessage({ type: 'prompt', text: '/clear' });
    expect(host.activeSessionId).toBe('ses_2');
    expect(host.views.get('ses_1')!.items.at(-1)).toMatchObject({ kind: 'notice', text: 'Started a new session (ses_2).' });
    expect(ui.errors).toEqual([]);
  });
});
