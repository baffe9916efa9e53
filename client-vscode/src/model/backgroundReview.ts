// The panel's review of a finished background session (webview/backgroundReview.ts ->
// backgroundReview.ts in the extension): its diff against the base (agent/backgroundDiff), the
// kept hunks brought into the user's tree (agent/backgroundApply), its worktree and branch removed
// (agent/backgroundRemove), a change clashing with the user's text resolved in the merge editor or
// marked in the file's buffer (backgroundMerge.ts). Nothing is applied but by the card's buttons.
import type { BackgroundApplyResult, BackgroundDiffResult, KeepFile } from '../protocol/generated';

/** What was done with one conflicted file of a background session's review: opened in the merge
 * editor, marked in its buffer, nothing (it changed since, or it failed); a sentence for the card. */
export interface ConflictResolved {
  how: 'merge-editor' | 'markers' | 'changed' | 'failed';
  note: string;
}

/** Webview -> extension. */
export type BackgroundReviewMessage =
  /** agent/backgroundDiff (answered with `background-diff`). */
  | { type: 'background-diff'; sessionId: string }
  /** agent/backgroundApply with the files and hunks kept (answered with `background-applied`). */
  | { type: 'background-apply'; sessionId: string; keep: KeepFile[] }
  /** agent/backgroundRemove, after the card's confirmation (answered with `background-removed`). */
  | { type: 'background-remove'; sessionId: string; force: boolean }
  /** A conflicted file of the last `background-applied`: in the merge editor or marked in the
   * buffer (answered with `background-resolved`). */
  | { type: 'background-resolve'; sessionId: string; path: string; how: 'merge-editor' | 'markers' };

/** Extension -> webview; error: the request failed (its message). */
export type BackgroundReviewResult =
  | { type: 'background-diff'; sessionId: string; diff?: BackgroundDiffResult; error?: string }
  /** mergeEditor: whether VS Code's merge editor can be opened (else conflicts are marked). */
  | { type: 'background-applied'; sessionId: string; result?: BackgroundApplyResult; mergeEditor?: boolean; error?: string }
  | { type: 'background-removed'; sessionId: string; error?: string }
  | ({ type: 'background-resolved'; sessionId: string; path: string } & ConflictResolved);

const id = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

function isKeep(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const k = v as Record<string, unknown>;
  return (
    id(k.path) &&
    (k.hunks === undefined || k.hunks === null || (Array.isArray(k.hunks) && k.hunks.every((h) => Number.isInteger(h) && h >= 0)))
  );
}

export function isBackgroundReviewMessage(m: Record<string, unknown>): boolean {
  switch (m.type) {
    case 'background-diff':
      return id(m.sessionId);
    case 'background-apply':
      return id(m.sessionId) && Array.isArray(m.keep) && m.keep.every(isKeep);
    case 'background-remove':
      return id(m.sessionId) && typeof m.force === 'boolean';
    case 'background-resolve':
      return id(m.sessionId) && id(m.path) && (m.how === 'merge-editor' || m.how === 'markers');
    default:
      return false;
  }
}
