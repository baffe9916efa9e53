// "Review changes" of a finished background session (History's button): its branch's diff against
// its base, file by file and hunk by hunk, in the look of a proposal's hunk list (proposals.ts).
// Every hunk starts kept; Keep / Undo per hunk and per file only change what the card will ask
// for. Nothing reaches the user's files until "Bring in kept changes" (agent/backgroundApply, one
// edit in the editor); the answer says what was applied and what conflicted. A change clashing with
// the user's text has "Resolve in merge editor" (VS Code's merge editor on the user's file), or
// where there is none "Mark conflict in file" (git's markers in the buffer, not saved); each says
// what it does before and what it did after. "Remove worktree and branch" asks to confirm in the
// card, then deletes them (agent/backgroundRemove).
import type { ConflictResolved } from '../model/backgroundReview';
import type { BackgroundReviewMessage } from '../model/backgroundReview';
import type { BackgroundApplyResult, BackgroundDiffResult, BackgroundFile, ConflictFile, KeepFile, ReviewHunk } from '../protocol/generated';
import { el, labelledButton } from './dom';

function diffView(hunk: ReviewHunk): HTMLElement {
  const pre = el('pre', 'diff hunk-diff');
  for (const line of hunk.diff.replace(/\n$/, '').split('\n')) {
    const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(el('span', `line ${cls}`, line + '\n'));
  }
  return pre;
}

/** The keep list agent/backgroundApply takes: a file with every hunk kept as a whole (hunks
 * null), one with some as their indexes, one with none left out. */
export function keepList(files: BackgroundFile[], undone: Map<string, Set<number>>): KeepFile[] {
  const keep: KeepFile[] = [];
  for (const f of files) {
    const out = undone.get(f.path) ?? new Set<number>();
    const kept = f.hunks.map((h) => h.index).filter((i) => !out.has(i));
    if (!kept.length) continue;
    keep.push({ path: f.path, hunks: kept.length === f.hunks.length ? null : kept });
  }
  return keep;
}

export class BackgroundReviewCard {
  readonly el: HTMLElement;
  private sessionId?: string;
  private diff?: BackgroundDiffResult;
  private error?: string;
  private result?: BackgroundApplyResult;
  private removed = false;
  private confirming = false;
  private busy = false;
  /** Whether VS Code's merge editor can open a conflict (else it is marked in the buffer). */
  private mergeEditor = false;
  /** The conflicted files being resolved, and what was done with each. */
  private readonly resolving = new Set<string>();
  private readonly resolutions = new Map<string, ConflictResolved>();
  /** Per file, the hunks the user undid (every other hunk is kept). */
  private readonly undone = new Map<string, Set<number>>();

  constructor(private readonly post: (message: BackgroundReviewMessage) => void) {
    this.el = el('section', 'background-review');
    this.el.setAttribute('aria-label', 'Background session changes');
    this.el.hidden = true;
  }

  /** Open the card for this session and ask for its diff. */
  open(sessionId: string): void {
    this.sessionId = sessionId;
    this.diff = this.error = this.result = undefined;
    this.removed = this.confirming = false;
    this.busy = true;
    this.undone.clear();
    this.resolving.clear();
    this.resolutions.clear();
    this.post({ type: 'background-diff', sessionId });
    this.render();
  }

  close(): void {
    this.sessionId = undefined;
    this.render();
  }

  diffed(sessionId: string, diff?: BackgroundDiffResult, error?: string): void {
    if (sessionId !== this.sessionId) return;
    this.busy = false;
    this.diff = diff;
    this.error = error;
    this.render();
  }

  applied(sessionId: string, result?: BackgroundApplyResult, error?: string, mergeEditor = false): void {
    if (sessionId !== this.sessionId) return;
    this.busy = false;
    this.result = result;
    this.error = error;
    this.mergeEditor = mergeEditor;
    this.resolving.clear();
    this.resolutions.clear();
    this.render();
    // The answer is under the files: brought into view in the card (it scrolls past 50vh).
    this.el.querySelector('.background-review-result')?.scrollIntoView?.({ block: 'nearest' });
  }

  /** What the extension did with a conflicted file (background-resolved). */
  resolved(sessionId: string, path: string, done: ConflictResolved): void {
    if (sessionId !== this.sessionId) return;
    this.resolving.delete(path);
    this.resolutions.set(path, done);
    this.render();
  }

  removedDone(sessionId: string, error?: string): void {
    if (sessionId !== this.sessionId) return;
    this.busy = false;
    this.confirming = false;
    this.removed = !error;
    this.error = error;
    this.render();
  }

  private toggle(path: string, indexes: number[], keep: boolean): void {
    const out = this.undone.get(path) ?? new Set<number>();
    for (const i of indexes) {
      if (keep) out.delete(i);
      else out.add(i);
    }
    this.undone.set(path, out);
    this.render();
  }

  private render(): void {
    const sessionId = this.sessionId;
    this.el.hidden = !sessionId;
    if (!sessionId) {
      this.el.replaceChildren();
      return;
    }
    const head = el('div', 'background-review-head');
    head.append(
      el('span', 'proposals-heading', this.diff ? `Changes on ${this.diff.branch}` : 'Background session changes'),
      labelledButton('Close', 'secondary background-review-close', 'Close the review', () => this.close()),
    );
    const parts: HTMLElement[] = [head];
    if (this.busy && !this.diff) parts.push(el('div', 'progress', 'Reading its changes…'));
    const diff = this.diff;
    if (diff && !this.removed) {
      if (diff.state !== 'done' && diff.state !== 'failed') parts.push(el('div', 'progress', `It is still ${diff.state}: bring it in once it is done.`));
      if (!diff.files.length) parts.push(el('div', 'background-review-empty', 'It changed no files.'));
      const list = el('ul', 'hunk-list background-review-files');
      for (const file of diff.files) list.append(this.fileView(file));
      parts.push(list);
      const kept = keepList(diff.files, this.undone);
      const actions = el('div', 'background-review-actions');
      const bring = labelledButton('Bring in kept changes', 'background-review-apply', 'Apply the kept changes to your files as one edit', () => {
        this.busy = true;
        this.result = undefined;
        this.post({ type: 'background-apply', sessionId, keep: kept });
        this.render();
      });
      bring.disabled = this.busy || !kept.length || diff.state === 'running' || diff.state === 'waiting';
      const remove = this.confirming
        ? labelledButton('Confirm: remove (changes not brought in are lost)', 'background-review-remove-confirm', 'Delete its worktree and branch', () => {
            this.busy = true;
            this.post({ type: 'background-remove', sessionId, force: true });
            this.render();
          })
        : labelledButton('Remove worktree and branch', 'secondary background-review-remove', 'Remove its worktree and branch', () => {
            this.confirming = true;
            this.render();
          });
      remove.disabled = this.busy;
      actions.append(bring, remove);
      parts.push(actions);
    }
    if (this.result) parts.push(this.resultView(this.result));
    if (this.removed) parts.push(el('div', 'background-review-removed', 'Its worktree and branch were removed.'));
    if (this.error) parts.push(el('div', 'error background-review-error', this.error));
    this.el.replaceChildren(...parts);
  }

  private fileView(file: BackgroundFile): HTMLElement {
    const li = el('li', 'background-review-file');
    li.dataset.path = file.path;
    const out = this.undone.get(file.path) ?? new Set<number>();
    const all = file.hunks.map((h) => h.index);
    const head = el('div', 'hunk-head');
    const what = file.binary ? 'binary' : file.base == null ? 'new file' : file.branch == null ? 'deleted' : `${file.hunks.length} changes`;
    head.append(
      el('span', 'hunk-where', file.path),
      el('span', 'hunk-state', what),
      labelledButton('Keep file', 'secondary background-file-keep', `Keep every change to ${file.path}`, () => this.toggle(file.path, all, true)),
      labelledButton('Undo file', 'secondary background-file-undo', `Leave out every change to ${file.path}`, () => this.toggle(file.path, all, false)),
    );
    li.append(head);
    file.hunks.forEach((hunk, i) => {
      const kept = !out.has(hunk.index);
      const row = el('div', `hunk-row ${kept ? 'hunk-accepted' : 'hunk-rejected'}`);
      row.dataset.index = String(hunk.index);
      const bar = el('div', 'hunk-head');
      const label = `change ${i + 1} of ${file.hunks.length} in ${file.path}`;
      bar.append(
        el('span', 'hunk-where', `Change ${i + 1}: line ${hunk.oldStart + 1}`),
        el('span', 'hunk-state', kept ? 'kept' : 'left out'),
        kept
          ? labelledButton('Undo', 'hunk-reject secondary', `Leave out ${label}`, () => this.toggle(file.path, [hunk.index], false))
          : labelledButton('Keep', 'hunk-accept', `Keep ${label}`, () => this.toggle(file.path, [hunk.index], true)),
      );
      row.append(bar, diffView(hunk));
      li.append(row);
    });
    return li;
  }

  private resultView(result: BackgroundApplyResult): HTMLElement {
    const box = el('div', 'background-review-result');
    const n = result.applied.reduce((sum, f) => sum + f.hunks.length, 0);
    box.append(el('div', 'background-review-applied', n ? `Applied ${n === 1 ? '1 change' : `${n} changes`} to ${result.applied.map((f) => f.path).join(', ')}.` : 'Nothing was applied.'));
    for (const c of result.conflicts) {
      const which = c.hunks.map((h) => h + 1).join(', ');
      const row = el('div', 'background-review-conflict');
      row.dataset.path = c.path;
      row.append(el('div', 'error', `Not applied: ${c.path} change ${which}: ${c.reason}`));
      if (c.merge) row.append(this.conflictActions(c));
      box.append(row);
    }
    return box;
  }

  private conflictActions(c: ConflictFile): HTMLElement {
    const out = el('div', 'background-review-resolve');
    const done = this.resolutions.get(c.path);
    if (done) {
      out.append(el('div', done.how === 'merge-editor' || done.how === 'markers' ? 'background-review-resolved' : 'error', done.note));
      if (done.how !== 'failed') return out;
    }
    const sessionId = this.sessionId;
    if (!sessionId) return out;
    const how = this.mergeEditor ? 'merge-editor' : 'markers';
    const label = this.mergeEditor ? 'Resolve in merge editor' : 'Mark conflict in file';
    const b = labelledButton(label, 'background-review-resolve-button', `${label}: ${c.path}`, () => {
      this.resolving.add(c.path);
      this.post({ type: 'background-resolve', sessionId, path: c.path, how });
      this.render();
    });
    b.disabled = this.resolving.has(c.path);
    const what = this.mergeEditor
      ? `Opens VS Code's merge editor on ${c.path}: its base, your text, the branch's change; the result is your file. VS Code saves the file as it is now when the editor opens.`
      : `No merge editor here: writes both sides into ${c.path} between conflict markers, not saved.`;
    out.append(b, el('div', 'background-review-resolve-note', what));
    return out;
  }
}
