// A sub-agent (the agent's task tool) runs in a child session of its own; its events carry
// parentSessionId and parentCallId. They are kept in the task call's card, as a transcript of
// their own (ToolItem.sub), built by the same reducer. No vscode or DOM import here.
import type { AgentEvent } from '../protocol/generated';
import type { SessionView, ToolItem } from './transcript';

type Apply = (view: SessionView, event: AgentEvent) => void;

/** The session whose view an event belongs in: a sub-agent's go to its parent's. */
export function viewSessionOf(event: AgentEvent): string {
  return event.parentSessionId ?? event.sessionId;
}

/** A sub-agent's event applied to its task card's transcript (made at its first event), which
 * is bumped so it renders again; false for an event of the session itself. */
export function applySubAgentEvent(view: SessionView, event: AgentEvent, apply: Apply): boolean {
  if (!event.parentSessionId || !event.parentCallId) return false;
  let card: ToolItem | undefined;
  for (let i = view.items.length - 1; i >= 0 && !card; i--) {
    const item = view.items[i];
    if (item.kind === 'tool' && item.callId === event.parentCallId) card = item;
  }
  if (!card) return true; // its task call is not in this view (a history loaded since): dropped
  card.sub ??= {
    sessionId: event.sessionId,
    title: card.title,
    items: [],
    busy: false,
    queued: [],
    usage: { turn: {}, session: {} },
    nextId: 1,
  };
  card.agent = event.agent ?? card.agent;
  apply(card.sub, { ...event, parentSessionId: undefined, parentCallId: undefined });
  card.rev += 1;
  return true;
}

/** Whether a question of a sub-agent waits in this card's transcript. */
export function subAgentAsks(card: ToolItem): boolean {
  return !!card.sub?.items.some((i) => i.kind === 'tool' && i.permission?.state === 'pending');
}
