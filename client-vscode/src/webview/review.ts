// Review "after" in the panel: the agent's edits applied at once and pending review, each file
// with its hunks (line-based, as the server's workspace/hunks.py cuts them), Keep / Undo per file
// and per hunk (agent/review), the file's name opening its diff in VS Code. The list is the
// session's as the server last said: agent/listReview when the panel loads, then each `review`
// event or answer.
import type { CheckpointMessage, ReviewAction } from '../model/checkpoints';
import type { ReviewFile, ReviewHunk } from '../protocol/generated';
import { el, labelledButton } from './dom';

/** A hunk's unified text, its lines coloured as the transcript's diffs. */
function hunkView(hunk: ReviewHunk): HTMLElement {
  const pre = el('pre', 'diff review-diff');
  for (const line of hunk.diff.replace(/\n$/, '').split('\n')) {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    pre.append(el('span', `line ${cls}`, line + '\n'));
  }
  return pre;
}

function counts(file: ReviewFile): string {
  let added = 0;
  let removed = 0;
  for (const h of file.hunks) {
    added += h.newLines;
    removed += h.oldLines;
  }
  if (file.base == null) return 'new file';
  return `+${added} −${removed}`;
}

export class ReviewList {
  readonly el: HTMLDetailsElement;
  private sessionId?: string;
  private files: ReviewFile[] = [];
  /** Files with an answer on its way (their buttons wait for the server's list). */
  private readonly waiting = new Set<string>();
  private connected = false;

  constructor(private readonly post: (message: CheckpointMessage) => void) {
    this.el = el('details', 'review');
    this.el.id = 'review';
    this.el.setAttribute('aria-label', 'Pending review');
    this.el.open = true;
    this.el.hidden = true;
  }

  /** The panel shows this session: ask for its pending review (when it is another session, or
   * the server is back). */
  showing(sessionId: string | undefined, connected: boolean): void {
    const reconnected = connected && !this.connected;
    this.connected = connected;
    if (sessionId === this.sessionId && !reconnected) return;
    if (sessionId !== this.sessionId) {
      this.sessionId = sessionId;
      this.files = [];
      this.waiting.clear();
      this.render();
    }
    if (sessionId && connected) this.post({ type: 'list-review', sessionId });
  }

  /** The session's pending review now (an answer, or a `review` event). */
  set(sessionId: string, files: ReviewFile[]): void {
    if (sessionId !== this.sessionId) return;
    this.files = files;
    this.waiting.clear();
    this.render();
  }

  private act(path: string, action: ReviewAction, hunks?: number[]): void {
    if (!this.sessionId || this.waiting.has(path)) return;
    this.waiting.add(path);
    this.post({ type: 'review-action', sessionId: this.sessionId, path, action, ...(hunks ? { hunks } : {}) });
    this.render();
  }

  private render(): void {
    const files = this.files;
    this.el.hidden = !files.length;
    if (!files.length) {
      this.el.replaceChildren();
      return;
    }
    const hunks = files.reduce((n, f) => n + f.hunks.length, 0);
    const summary = el(
      'summary',
      'review-summary',
      `Pending review: ${files.length === 1 ? '1 file' : `${files.length} files`}, ${hunks === 1 ? '1 change' : `${hunks} changes`}`,
    );
    const list = el('ul', 'review-files');
    for (const file of files) list.append(this.fileView(file));
    this.el.replaceChildren(summary, list);
  }

  private fileView(file: ReviewFile): HTMLElement {
    const path = file.path;
    const busy = this.waiting.has(path);
    const li = el('li', 'review-file');
    li.dataset.path = path;
    const head = el('div', 'review-file-head');
    const name = labelledButton(path, 'link review-open', `Open the diff of ${path}`, () => {
      if (this.sessionId) this.post({ type: 'open-review-diff', sessionId: this.sessionId, path });
    });
    const keep = labelledButton('Keep', 'review-keep', `Keep all changes to ${path}`, () => this.act(path, 'keep'));
    const undo = labelledButton('Undo', 'secondary review-undo', `Undo all changes to ${path}`, () => this.act(path, 'undo'));
    keep.disabled = undo.disabled = busy;
    head.append(name, el('span', 'review-counts', counts(file)), keep, undo);
    li.append(head);
    const many = file.hunks.length > 1;
    file.hunks.forEach((hunk, i) => {
      const box = el('div', 'review-hunk');
      box.dataset.index = String(hunk.index);
      if (many) {
        const what = `change ${i + 1} of ${file.hunks.length} in ${path}`;
        const bar = el('div', 'review-hunk-head');
        const k = labelledButton('Keep', 'secondary review-keep', `Keep ${what}`, () => this.act(path, 'keep', [hunk.index]));
        const u = labelledButton('Undo', 'secondary review-undo', `Undo ${what}`, () => this.act(path, 'undo', [hunk.index]));
        k.disabled = u.disabled = busy;
        bar.append(el('span', 'review-hunk-label', `Change ${i + 1}`), k, u);
        box.append(bar);
      }
      box.append(hunkView(hunk));
      li.append(box);
    });
    if (busy) li.append(el('div', 'progress', 'Sending your answer…'));
    return li;
  }
}
