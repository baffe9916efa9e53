import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/protocol/generated';
import {
  applyEvent,
  connectionLost,
  contextLabel,
  emptyView,
  formatCost,
  formatTokens,
  pendingPermissions,
  promptFailed,
  promptSent,
  totalTokens,
  viewFromMessages,
  type Item,
  type SessionView,
  type ToolItem,
} from '../../src/model/transcript';
import { fixtureProblems, loadFixture } from '../support/fixture';

const fixture = loadFixture();
const sessionId = fixture.events[0].sessionId;

function replay(events: AgentEvent[], view = emptyView(sessionId)): SessionView {
  for (const event of events) applyEvent(view, event);
  return view;
}

/** What a reader sees of an item, without ids and revisions. */
function shape(item: Item): string {
  switch (item.kind) {
    case 'user':
      return `user: ${item.text}`;
    case 'text':
      return `text: ${item.text}`;
    case 'thinking':
      return `thinking: ${item.text}`;
    case 'tool':
      return `tool ${item.tool} [${item.status}] ${item.title}: ${item.output ?? ''}`;
    case 'notice':
      return `notice ${item.level}: ${item.text}`;
  }
}

describe('the recorded fixture', () => {
  it('matches the schemas in ../schemas', () => {
    expect(fixtureProblems(fixture)).toEqual([]);
  });
});

describe('applyEvent on the recorded demo turn', () => {
  const view = replay(fixture.events);

  it('builds the conversation: prompt, streamed text between tool cards', () => {
    expect(view.items.map((i) => i.kind)).toEqual([
      'user', 'text', 'tool', 'text', 'tool', 'text', 'tool', 'text', 'tool', 'text',
    ]);
    expect(view.items[0]).toMatchObject({ kind: 'user', text: fixture.prompt });
    const streamed = fixture.events
      .filter((e) => e.type === 'text-delta')
      .map((e) => (e.type === 'text-delta' ? e.delta : ''))
      .join('');
    const texts = view.items.filter((i) => i.kind === 'text').map((i) => (i.kind === 'text' ? i.text : ''));
    expect(texts.join('')).toBe(streamed);
    expect(texts[texts.length - 1]).toBe(fixture.result.text);
  });

  it('records each tool call with its result and its approval', () => {
    const tools = view.items.filter((i): i is ToolItem => i.kind === 'tool');
    expect(tools.map((t) => [t.tool, t.status, t.permission?.state])).toEqual([
      ['bash', 'completed', 'once'],
      ['read', 'completed', undefined],
      ['edit', 'completed', 'once'],
      ['bash', 'completed', 'once'],
    ]);
    expect(tools[0].output).toContain('FAILED (failures=1)');
    expect(tools[3].output).toContain('OK');
    expect(tools[2].permission).toMatchObject({ hasEdit: true });
    expect(tools[2].permission?.diff).toContain('+    return (ordered[middle - 1] + ordered[middle]) / 2');
  });

  it('ends idle with the session usage of the last usage event', () => {
    expect(view.busy).toBe(false);
    expect(view.runningTool).toBeUndefined();
    expect(view.queued).toEqual([]);
    expect(pendingPermissions(view)).toEqual([]);
    expect(view.usage.turn).toEqual(fixture.result.usage);
    expect(view.usage.session).toEqual(fixture.sessions[0].usage);
  });

  it('is busy, with the running tool and a pending approval, mid-turn', () => {
    const firstRequest = fixture.events.findIndex((e) => e.type === 'permission-request');
    const mid = replay(fixture.events.slice(0, firstRequest + 1));
    expect(mid.busy).toBe(true);
    expect(mid.runningTool).toBe('python3 -m unittest -v 2>&1');
    const pending = pendingPermissions(mid);
    expect(pending).toHaveLength(1);
    expect(pending[0].input).toEqual({ command: 'python3 -m unittest -v 2>&1' });
  });

  it('gives the same conversation as the stored history (a reload shows what streamed)', () => {
    const reloaded = viewFromMessages(sessionId, fixture.messages, fixture.sessions[0]);
    expect(reloaded.items.map(shape)).toEqual(view.items.map(shape));
    expect(reloaded.title).toBe('Fix the failing test');
    expect(reloaded.busy).toBe(false);
    expect(reloaded.usage.session).toEqual(fixture.sessions[0].usage);
  });

  it('bumps the revision of an item each time it changes, and keeps ids stable', () => {
    const live = emptyView(sessionId);
    const revs: number[] = [];
    // turn-start, the text's deltas (how many depends on the recording's timing), the tool call.
    const toolCall = fixture.events.findIndex((e) => e.type === 'tool-call');
    for (const event of fixture.events.slice(0, toolCall + 1)) {
      applyEvent(live, event);
      revs.push(live.items[1]?.rev ?? 0);
    }
    expect(live.items[1].id).toBe('i2');
    const deltas = toolCall - 1;
    // Each delta bumps the text; the tool call leaves it alone.
    expect(revs).toEqual([...Array.from({ length: deltas + 1 }, (_, i) => i), deltas]);
  });
});

describe('prompts, queueing and failures', () => {
  it('shows a prompt sent while busy as queued until its turn starts', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'first' });
    promptSent(view, 'second');
    expect(view.queued).toEqual(['second']);
    applyEvent(view, { type: 'turn-end', sessionId: 's', finishReason: 'end_turn' });
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm2', prompt: 'second' });
    expect(view.queued).toEqual([]);
    expect(view.items.filter((i) => i.kind === 'user')).toHaveLength(2);
  });

  it('shows what was sent along with a prompt on its message', () => {
    const view = emptyView('s');
    const range = { start: { line: 0, character: 0 }, end: { line: 15, character: 0 } };
    promptSent(view, 'why?', [contextLabel('file:///w/my%20dir/calc.py', range)]);
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'why?' });
    expect(view.items).toMatchObject([{ kind: 'user', text: 'why?', context: ['calc.py:1-16'] }]);
    expect(view.queuedContext).toEqual({});
    expect(contextLabel('file:///w/a.py', { start: { line: 4 }, end: { line: 4 } })).toBe('a.py:5');
    expect(contextLabel('file:///w/a.py')).toBe('a.py');
  });

  it('a failed prompt leaves the queue with an error notice', () => {
    const view = emptyView('s');
    promptSent(view, 'hello');
    promptFailed(view, 'hello', 'The prompt failed: boom');
    expect(view.queued).toEqual([]);
    expect(view.items).toMatchObject([{ kind: 'notice', level: 'error', text: 'The prompt failed: boom' }]);
  });

  it('says why a turn ended abnormally, and cancels what still waited', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'p' });
    applyEvent(view, { type: 'tool-call', sessionId: 's', callId: 'c', tool: 'bash', input: { command: 'ls' }, title: 'ls' });
    applyEvent(view, { type: 'usage', sessionId: 's', step: {}, turn: {}, session: {} } as AgentEvent);
    applyEvent(view, {
      type: 'permission-request', sessionId: 's', requestId: 'r', callId: 'c', tool: 'bash', title: 'ls', input: { command: 'ls' },
    });
    applyEvent(view, { type: 'retry', sessionId: 's', attempt: 1, delayMs: 1500, reason: 'overloaded' });
    applyEvent(view, { type: 'retry', sessionId: 's', attempt: 2, delayMs: 3000, reason: 'overloaded' });
    expect(view.items.filter((i) => i.kind === 'notice')).toHaveLength(1);
    applyEvent(view, { type: 'turn-end', sessionId: 's', finishReason: 'cancelled' });
    const tool = view.items.find((i): i is ToolItem => i.kind === 'tool');
    expect(tool?.permission?.state).toBe('cancelled');
    expect(view.items.at(-1)).toMatchObject({ kind: 'notice', text: 'Stopped.' });
    expect(view.items.some((i) => i.kind === 'notice' && i.key === 'retry')).toBe(false);
  });

  it('drops what a failed attempt streamed when the step is retried', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'p' });
    applyEvent(view, { type: 'text-delta', sessionId: 's', delta: 'first step. ', messageId: 'a1' });
    applyEvent(view, { type: 'usage', sessionId: 's', step: {}, turn: {}, session: {} } as AgentEvent);
    applyEvent(view, { type: 'text-delta', sessionId: 's', delta: 'half an ans', messageId: 'a2' });
    applyEvent(view, { type: 'retry', sessionId: 's', attempt: 1, delayMs: 10, reason: 'stream broken' });
    applyEvent(view, { type: 'text-delta', sessionId: 's', delta: 'a whole answer', messageId: 'a2' });
    const texts = view.items.filter((i) => i.kind === 'text').map((i) => (i as { text: string }).text);
    expect(texts).toEqual(['first step. ', 'a whole answer']);
  });

  it('marks running work interrupted when the server goes away', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'p' });
    applyEvent(view, { type: 'tool-call', sessionId: 's', callId: 'c', tool: 'bash', input: {}, title: 'sleep 10' });
    connectionLost(view, 'The server stopped.');
    expect(view.busy).toBe(false);
    expect(view.items).toMatchObject([
      { kind: 'user' },
      { kind: 'tool', status: 'interrupted' },
      { kind: 'notice', level: 'error', text: 'The server stopped.' },
    ]);
  });
});

describe('a proposal the user typed under', () => {
  it('shows the rebased diff, then the conflict, and clears it when the overlap goes', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'p' });
    applyEvent(view, {
      type: 'permission-request', sessionId: 's', requestId: 'r', callId: 'c', tool: 'write', title: 'Overwrite app.py',
      input: { path: 'app.py' }, diff: '-a\n+b\n', edit: { changes: {} },
    });
    const card = (): ToolItem => view.items.find((i): i is ToolItem => i.kind === 'tool') as ToolItem;
    applyEvent(view, { type: 'proposal-rebased', sessionId: 's', requestId: 'r', path: 'app.py', diff: '-a2\n+b\n', edit: { changes: {} } });
    expect(card().permission).toMatchObject({ diff: '-a2\n+b\n', state: 'pending' });
    expect(card().permission?.conflict).toBeUndefined();
    applyEvent(view, { type: 'proposal-rebased', sessionId: 's', requestId: 'r', path: 'app.py', conflict: true, lines: 'line 4' });
    expect(card().permission?.conflict).toBe('line 4 of app.py');
    applyEvent(view, { type: 'proposal-rebased', sessionId: 's', requestId: 'r', path: 'app.py', diff: '-a3\n+b\n' });
    expect(card().permission?.conflict).toBeUndefined();
    expect(card().permission?.diff).toBe('-a3\n+b\n');
  });
});

describe('formatting', () => {
  it('formats cost and tokens', () => {
    expect(formatCost(undefined)).toBe('$0.00');
    expect(formatCost(0.004)).toBe('$0.0040');
    expect(formatCost(1.234)).toBe('$1.23');
    expect(formatTokens(999)).toBe('999');
    expect(formatTokens(2803)).toBe('2.8k');
    expect(formatTokens(45_000)).toBe('45k');
    expect(formatTokens(1_500_000)).toBe('1.5M');
    expect(totalTokens({ inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 })).toBe(10);
  });
});
