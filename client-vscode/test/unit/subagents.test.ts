// Sub-agents in the extension: a child session's events (parentSessionId, parentCallId) go into
// the task call's card as a transcript of their own; the host keeps them in the parent's view,
// and lists no child session among the sessions.
import { describe, expect, it } from 'vitest';
import { applyEvent, emptyView, viewFromMessages, type ToolItem } from '../../src/model/transcript';
import { loadSubAgents, subAgentAsks, viewSessionOf } from '../../src/model/subagents';
import type { AgentEvent, MessageInfo } from '../../src/protocol/generated';

const child = { sessionId: 'child', parentSessionId: 's', parentCallId: 'call_task', agent: 'general' };

function withTask(): { view: ReturnType<typeof emptyView>; card: () => ToolItem } {
  const view = emptyView('s');
  applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'look around' });
  applyEvent(view, {
    type: 'tool-call',
    sessionId: 's',
    callId: 'call_task',
    tool: 'task',
    title: 'task: find notes',
    input: { description: 'find notes', prompt: 'Read notes.txt' },
  });
  const card = (): ToolItem => view.items.find((i) => i.kind === 'tool' && i.callId === 'call_task') as ToolItem;
  return { view, card };
}

describe('a sub-agent in its task card', () => {
  it('nests the child session’s events in the card and leaves the parent’s transcript alone', () => {
    const { view, card } = withTask();
    const before = view.items.length;
    const rev = card().rev;
    const events: AgentEvent[] = [
      { type: 'turn-start', messageId: 'c1', prompt: 'Read notes.txt', ...child },
      { type: 'text-delta', delta: 'Reading.', messageId: 'c2', ...child },
      { type: 'tool-call', callId: 'call_read', tool: 'read', title: 'read notes.txt', input: { path: 'notes.txt' }, ...child },
      { type: 'tool-result', callId: 'call_read', tool: 'read', output: 'milk', isError: false, status: 'completed', ...child },
    ];
    for (const event of events) applyEvent(view, event);
    expect(view.items.length).toBe(before);
    expect(card().rev).toBeGreaterThan(rev);
    expect(card().agent).toBe('general');
    const sub = card().sub;
    expect(sub?.sessionId).toBe('child');
    expect(sub?.items.map((i) => i.kind)).toEqual(['user', 'text', 'tool']);
    expect(sub?.items[2]).toMatchObject({ kind: 'tool', callId: 'call_read', status: 'completed', output: 'milk' });
    // The parent's own turn is still running; the child's end ends only the child.
    applyEvent(view, { type: 'turn-end', finishReason: 'end_turn', messageId: 'c2', ...child });
    expect(view.busy).toBe(true);
    expect(sub?.busy).toBe(false);
  });

  it('shows a sub-agent’s question in the card, answered in the child’s session', () => {
    const { view, card } = withTask();
    applyEvent(view, { type: 'tool-call', callId: 'call_fetch', tool: 'webfetch', title: 'webfetch x', input: { url: 'https://x.test' }, ...child });
    applyEvent(view, {
      type: 'permission-request',
      requestId: 'r1',
      callId: 'call_fetch',
      tool: 'webfetch',
      title: 'Fetch https://x.test',
      input: { url: 'https://x.test' },
      ...child,
    });
    expect(subAgentAsks(card())).toBe(true);
    expect(card().sub?.sessionId).toBe('child');
    applyEvent(view, { type: 'permission-resolved', requestId: 'r1', decision: 'reject', ...child });
    expect(subAgentAsks(card())).toBe(false);
  });

  it('files an event under its parent’s session; one whose task call is not shown is dropped', () => {
    expect(viewSessionOf({ type: 'turn-end', finishReason: 'end_turn', ...child })).toBe('s');
    expect(viewSessionOf({ type: 'turn-end', sessionId: 's', finishReason: 'end_turn' })).toBe('s');
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', messageId: 'c1', prompt: 'x', ...child });
    expect(view.items).toEqual([]);
  });

  it('gives a loaded history’s task card its sub-agent’s transcript, read from its session', async () => {
    const task = {
      type: 'tool' as const,
      callId: 'call_task',
      tool: 'task',
      input: { description: 'find notes', prompt: 'Read notes.txt' },
      status: 'completed' as const,
      output: 'Notes say milk.\n\n[sub-agent explorer, session ses_child1: 1 tool call (read); read notes.txt]',
      title: 'task: find notes',
    };
    const parent: MessageInfo[] = [
      { id: 'm1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'look' }] },
      { id: 'm2', role: 'assistant', createdAt: 2, parts: [task] },
    ];
    const child: MessageInfo[] = [
      { id: 'c1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'Read notes.txt' }] },
      { id: 'c2', role: 'assistant', createdAt: 2, parts: [{ type: 'text', text: 'Notes say milk.' }] },
    ];
    const view = viewFromMessages('s', parent);
    const asked: string[] = [];
    await loadSubAgents(view, async (id) => {
      asked.push(id);
      return child;
    });
    expect(asked).toEqual(['ses_child1']);
    const card = view.items.find((i) => i.kind === 'tool') as ToolItem;
    expect(card.agent).toBe('explorer');
    expect(card.sub?.sessionId).toBe('ses_child1');
    expect(card.sub?.items.map((i) => i.kind)).toEqual(['user', 'text']);
    // A session that cannot be read leaves the card as it was.
    const again = viewFromMessages('s', parent);
    await loadSubAgents(again, async () => Promise.reject(new Error('gone')));
    expect((again.items.find((i) => i.kind === 'tool') as ToolItem).sub).toBeUndefined();
  });
});
