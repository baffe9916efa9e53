// The panel's checkpoint and review messages (webview/checkpoints.ts, webview/review.ts ->
// checkpoints.ts in the extension): Restore at a user message (agent/revert, previewed with
// dryRun), Redo (agent/unrevert), and review "after" (agent/listReview, agent/review).
import type { MessageInfo, ReviewFile, RevertResult, UnrevertResult } from '../protocol/generated';

export type RevertScope = 'code' | 'conversation' | 'both';
export type ReviewAction = 'keep' | 'undo';

/** Webview -> extension. */
export type CheckpointMessage =
  /** agent/revert dryRun: what a Restore would touch (answered with `revert-preview`). */
  | { type: 'revert-preview'; sessionId: string; messageId: string; scope: RevertScope }
  /** agent/revert; conflicts open in the merge editor; answered with `reverted` after the reload. */
  | { type: 'revert'; sessionId: string; messageId: string; scope: RevertScope }
  /** agent/unrevert: redo the last revert (answered with `unreverted`). */
  | { type: 'unrevert'; sessionId: string }
  /** agent/getMessages history "all": the messages a compaction summarized (answered with `earlier-messages`). */
  | { type: 'earlier-messages'; sessionId: string }
  /** agent/listReview (answered with `review-files`). */
  | { type: 'list-review'; sessionId: string }
  /** agent/review: keep or undo a file, or some of its hunks. */
  | { type: 'review-action'; sessionId: string; path: string; action: ReviewAction; hunks?: number[] }
  /** The file's diff in VS Code: the reviewed base against the file now. */
  | { type: 'open-review-diff'; sessionId: string; path: string };

/** Extension -> webview. */
export type CheckpointResult =
  | { type: 'revert-preview'; sessionId: string; messageId: string; scope: RevertScope; preview?: RevertResult; error?: string }
  | { type: 'reverted'; sessionId: string; messageId: string; scope: RevertScope; result: RevertResult }
  /** error: the redo did not go through (the extension showed why). */
  | { type: 'unreverted'; sessionId: string; result?: UnrevertResult; error?: string }
  /** The messages before the summary in force (summarized), oldest first; error: none could be read. */
  | { type: 'earlier-messages'; sessionId: string; messages: MessageInfo[]; error?: string }
  /** What the session's review holds now (after listReview, an answer, or a `review` event). */
  | { type: 'review-files'; sessionId: string; files: ReviewFile[] };

const SCOPES = new Set(['code', 'conversation', 'both']);
const id = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

export function isCheckpointMessage(m: Record<string, unknown>): boolean {
  switch (m.type) {
    case 'revert-preview':
    case 'revert':
      return id(m.sessionId) && id(m.messageId) && SCOPES.has(m.scope as string);
    case 'unrevert':
    case 'earlier-messages':
    case 'list-review':
      return id(m.sessionId);
    case 'review-action':
      return (
        id(m.sessionId) &&
        id(m.path) &&
        (m.action === 'keep' || m.action === 'undo') &&
        (m.hunks === undefined || (Array.isArray(m.hunks) && m.hunks.every((h) => Number.isInteger(h) && h >= 0)))
      );
    case 'open-review-diff':
      return id(m.sessionId) && id(m.path);
    default:
      return false;
  }
}
