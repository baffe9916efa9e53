// The panel's review of a finished background session, in the extension: each message of the
// card (model/backgroundReview.ts) is one request to the server, its answer (or its error) posted
// back to the card. The kept hunks reach the user's files as the server's workspace/applyEdit
// (applyEdit.ts): one edit in the editor, undone with one Undo. A change that clashes with the
// user's text comes back with its texts for a merge (kept here per session, the card asks by path):
// the card's button opens it in the merge editor, or marks it in the buffer (backgroundMerge.ts).
import type { BackgroundReviewMessage } from './model/backgroundReview';
import type { AgentConnection, HostUi } from './hostTypes';
import type { ConflictMerge } from './protocol/generated';

/** Per session: its branch (from its diff) and the conflicts of its last bring-in, by path. */
const reviews = new Map<string, { branch?: string; merges: Map<string, ConflictMerge> }>();

function review(sessionId: string): { branch?: string; merges: Map<string, ConflictMerge> } {
  let r = reviews.get(sessionId);
  if (!r) reviews.set(sessionId, (r = { merges: new Map() }));
  return r;
}

function message(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

export async function backgroundReview(client: AgentConnection | undefined, ui: HostUi, m: BackgroundReviewMessage): Promise<void> {
  const sessionId = m.sessionId;
  if (!client) {
    ui.showError('agentls: the server is not running.');
    return;
  }
  switch (m.type) {
    case 'background-diff':
      try {
        const diff = await client.request('agent/backgroundDiff', { sessionId });
        review(sessionId).branch = diff.branch;
        ui.post({ type: 'background-diff', sessionId, diff });
      } catch (err) {
        ui.post({ type: 'background-diff', sessionId, error: message(err) });
      }
      return;
    case 'background-apply':
      try {
        const result = await client.request('agent/backgroundApply', { sessionId, keep: m.keep });
        const merges = review(sessionId).merges;
        merges.clear();
        for (const c of result.conflicts) if (c.merge) merges.set(c.path, c.merge);
        const mergeEditor = merges.size > 0 && ui.backgroundConflicts ? await ui.backgroundConflicts.mergeEditor() : false;
        ui.post({ type: 'background-applied', sessionId, result, mergeEditor });
      } catch (err) {
        ui.post({ type: 'background-applied', sessionId, error: message(err) });
      }
      return;
    case 'background-resolve': {
      const r = reviews.get(sessionId);
      const merge = r?.merges.get(m.path);
      if (!merge || !ui.backgroundConflicts) {
        ui.post({ type: 'background-resolved', sessionId, path: m.path, how: 'failed', note: `${m.path}: no conflict of this review to resolve.` });
        return;
      }
      const done = await ui.backgroundConflicts.resolve(merge, r?.branch ?? 'the branch', m.how);
      if (done.how !== 'failed') r?.merges.delete(m.path); // once: its text has changed since
      ui.post({ type: 'background-resolved', sessionId, path: m.path, ...done });
      return;
    }
    case 'background-remove':
      try {
        await client.request('agent/backgroundRemove', { sessionId, force: m.force });
        reviews.delete(sessionId);
        ui.post({ type: 'background-removed', sessionId });
      } catch (err) {
        ui.post({ type: 'background-removed', sessionId, error: message(err) });
      }
      return;
  }
}
