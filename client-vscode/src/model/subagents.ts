// A sub-agent (the agent's task tool) runs in a child session of its own; its events carry
// parentSessionId and parentCallId. They are kept in the task call's card, as a transcript of
// their own (ToolItem.sub), built by the same reducer (transcript.ts applyEvent). No vscode or
// DOM import here.
import type { AgentEvent } from '../protocol/generated';
import type { ToolItem } from './transcript';

/** The session whose view an event belongs in: a sub-agent's go to its parent's. */
export function viewSessionOf(event: AgentEvent): string {
  return event.parentSessionId ?? event.sessionId;
}

/** Whether a question of a sub-agent waits in this card's transcript. */
export function subAgentAsks(card: ToolItem): boolean {
  return !!card.sub?.items.some((i) => i.kind === 'tool' && i.permission?.state === 'pending');
}
