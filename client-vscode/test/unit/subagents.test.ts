// Sub-agents in the extension: a child session's events (parentSessionId, parentCallId) go into
// the task call's card as a transcript of their own; the host keeps them in the parent's view,
// and lists no child session among the sessions.
import { describe, expect, it } from 'vitest';
import { applyEvent, emptyView, type ToolItem } from '../../src/model/transcript';
import { subAgentAsks, viewSessionOf } from '../../src/model/subagents';
import type { AgentEvent } from '../../src/protocol/generated';

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
});
