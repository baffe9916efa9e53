// Restore, Redo and review "after", as the panel asks for them (model/checkpoints.ts), through
// the server: agent/revert (dryRun for the preview), agent/unrevert, agent/getMessages history
// "all" (the messages a compaction summarized, to restore to), agent/listReview and agent/review. A conflict (a file the user changed after the agent's edit) opens in VS Code's
// merge editor through ReviewUi (reviewAfter.ts), so this is unit-tested without VS Code.
import type { CheckpointMessage } from './model/checkpoints';
import type { AgentConnection, HostUi } from './hostTypes';
import type { AgentEvent, ReviewFile, RevertConflict } from './protocol/generated';

/** What of AgentHost this needs. */
export interface CheckpointHost {
  /** Reload the active session's transcript (agent/getMessages) and tell the panel. */
  reload(): Promise<void>;
}

function message(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

export class Checkpoints {
  /** Each session's pending review, as last heard (for a file's diff: its base). */
  private readonly review = new Map<string, ReviewFile[]>();

  constructor(
    private readonly host: CheckpointHost,
    private readonly ui: HostUi,
  ) {}

  /** Every agent/event: a `review` event is the session's pending review now. */
  onEvent(event: AgentEvent): void {
    if (event.type === 'review' && !event.parentSessionId) this.review.set(event.sessionId, event.files);
  }

  files(sessionId: string): ReviewFile[] {
    return this.review.get(sessionId) ?? [];
  }

  async handle(client: AgentConnection | undefined, m: CheckpointMessage): Promise<void> {
    if (!client) {
      this.ui.showError('agentls: the server is not running.');
      return;
    }
    switch (m.type) {
      case 'revert-preview':
        try {
          const preview = await client.request('agent/revert', { sessionId: m.sessionId, messageId: m.messageId, scope: m.scope, dryRun: true });
          this.ui.post({ ...m, preview });
        } catch (err) {
          this.ui.post({ ...m, error: message(err) });
        }
        return;
      case 'revert': {
        let result;
        try {
          result = await client.request('agent/revert', { sessionId: m.sessionId, messageId: m.messageId, scope: m.scope });
        } catch (err) {
          this.ui.showError(`agentls: could not restore: ${message(err)}`);
          this.ui.post({ type: 'revert-preview', sessionId: m.sessionId, messageId: m.messageId, scope: m.scope, error: message(err) });
          return;
        }
        await this.reload();
        this.ui.post({ type: 'reverted', sessionId: m.sessionId, messageId: m.messageId, scope: m.scope, result });
        // The dropped message goes back into the prompt box, to edit and send again.
        if (m.scope !== 'code' && result.prompt) this.ui.post({ type: 'focus-prompt', text: result.prompt });
        await this.conflicts(result.conflicts ?? []);
        return;
      }
      case 'unrevert': {
        let result;
        try {
          result = await client.request('agent/unrevert', { sessionId: m.sessionId });
        } catch (err) {
          this.ui.showError(`agentls: could not redo: ${message(err)}`);
          this.ui.post({ type: 'unreverted', sessionId: m.sessionId, error: message(err) });
          return;
        }
        await this.reload();
        this.ui.post({ type: 'unreverted', sessionId: m.sessionId, result });
        await this.conflicts(result.conflicts ?? []);
        return;
      }
      case 'earlier-messages': {
        try {
          const { messages } = await client.request('agent/getMessages', { sessionId: m.sessionId, history: 'all' });
          this.ui.post({ ...m, messages: messages.filter((x) => x.summarized) });
        } catch (err) {
          this.ui.post({ ...m, messages: [], error: message(err) });
        }
        return;
      }
      case 'list-review': {
        let files: ReviewFile[];
        try {
          files = (await client.request('agent/listReview', { sessionId: m.sessionId })).files;
        } catch {
          return; // an unknown session (not stored yet) or a server without review: nothing pending
        }
        this.review.set(m.sessionId, files);
        this.ui.post({ type: 'review-files', sessionId: m.sessionId, files });
        return;
      }
      case 'review-action': {
        try {
          const result = await client.request('agent/review', {
            sessionId: m.sessionId,
            path: m.path,
            action: m.action,
            ...(m.hunks ? { hunks: m.hunks } : {}),
          });
          this.review.set(m.sessionId, result.files);
          this.ui.post({ type: 'review-files', sessionId: m.sessionId, files: result.files });
          if (result.conflict) await this.conflicts([result.conflict]);
        } catch (err) {
          this.ui.showError(`agentls: could not ${m.action === 'keep' ? 'keep' : 'undo'} ${m.path}: ${message(err)}`);
          // The panel shows the list as the server has it.
          this.ui.post({ type: 'review-files', sessionId: m.sessionId, files: this.files(m.sessionId) });
        }
        return;
      }
      case 'open-review-diff': {
        const file = this.files(m.sessionId).find((f) => f.path === m.path);
        if (file) await this.ui.review?.openReviewDiff(file);
        return;
      }
    }
  }

  /** The transcript as the server has it now (a failed reload is only a stale transcript). */
  private async reload(): Promise<void> {
    try {
      await this.host.reload();
    } catch (err) {
      this.ui.showError(`agentls: could not reload the session: ${message(err)}`);
    }
  }

  private async conflicts(conflicts: RevertConflict[]): Promise<void> {
    for (const conflict of conflicts) {
      try {
        await this.ui.review?.openConflict(conflict);
      } catch (err) {
        this.ui.showError(`agentls: ${conflict.path} was not restored (you changed it since); ${message(err)}`);
      }
    }
  }
}
