// The panel's review of a finished background session, in the extension: each message of the
// card (model/backgroundReview.ts) is one request to the server, its answer (or its error) posted
// back to the card. The kept hunks reach the user's files as the server's workspace/applyEdit
// (applyEdit.ts): one edit in the editor, undone with one Undo.
import type { BackgroundReviewMessage } from './model/backgroundReview';
import type { AgentConnection, HostUi } from './hostTypes';

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
        ui.post({ type: 'background-diff', sessionId, diff: await client.request('agent/backgroundDiff', { sessionId }) });
      } catch (err) {
        ui.post({ type: 'background-diff', sessionId, error: message(err) });
      }
      return;
    case 'background-apply':
      try {
        ui.post({ type: 'background-applied', sessionId, result: await client.request('agent/backgroundApply', { sessionId, keep: m.keep }) });
      } catch (err) {
        ui.post({ type: 'background-applied', sessionId, error: message(err) });
      }
      return;
    case 'background-remove':
      try {
        await client.request('agent/backgroundRemove', { sessionId, force: m.force });
        ui.post({ type: 'background-removed', sessionId });
      } catch (err) {
        ui.post({ type: 'background-removed', sessionId, error: message(err) });
      }
      return;
  }
}
