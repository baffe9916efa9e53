// A sub-agent (the agent's task tool) runs in a child session of its own; its events carry
// parentSessionId and parentCallId. They are kept in the task call's card, as a transcript of
// their own (ToolItem.sub), built by the same reducer (transcript.ts applyEvent). No vscode or
// DOM import here.
import type { AgentEvent, MessageInfo } from '../protocol/generated';
import { viewFromMessages, type SessionView, type ToolItem } from './transcript';

/** The session whose view an event belongs in: a sub-agent's go to its parent's. */
export function viewSessionOf(event: AgentEvent): string {
  return event.parentSessionId ?? event.sessionId;
}

/** Whether a question of a sub-agent waits in this card's transcript. */
export function subAgentAsks(card: ToolItem): boolean {
  return !!card.sub?.items.some((i) => i.kind === 'tool' && i.permission?.state === 'pending');
}

const SUMMARY = /\[sub-agent ([^,\]\n]+), session ([A-Za-z0-9_-]+):/g;

/** The sub-agent a finished task call ran, from the line its result ends with; undefined for
 * another call. */
export function subAgentOf(card: ToolItem): { agent: string; sessionId: string } | undefined {
  if (card.tool !== 'task' || !card.output) return undefined;
  const found = [...card.output.matchAll(SUMMARY)].at(-1);
  return found ? { agent: found[1], sessionId: found[2] } : undefined;
}

/** A loaded history's task cards given their sub-agents' transcripts (read with `fetch`, the
 * child session's agent/getMessages); one that cannot be read is left without. */
export async function loadSubAgents(
  view: SessionView,
  fetch: (sessionId: string) => Promise<MessageInfo[]>,
): Promise<void> {
  for (const item of view.items) {
    if (item.kind !== 'tool' || item.sub) continue;
    const found = subAgentOf(item);
    if (!found) continue;
    try {
      item.sub = viewFromMessages(found.sessionId, await fetch(found.sessionId));
      item.agent = found.agent;
      item.rev += 1;
    } catch {
      // its session was deleted, or the server went away: the card keeps the task's result
    }
  }
}
