// "Waiting for review": the proposed edits waiting for an answer, in every session (the host's
// `proposals`), above the transcript. Each row names the file and, when it is not the session the
// panel shows, the session; a click opens its diff (open-diff). Hidden when nothing waits.
import type { PanelMessage, ProposalEntry } from '../model/messages';
import { keptLabel, type CardHunk, type HunkState } from '../reviewHunks';

export class ProposalList {
  readonly el: HTMLElement;
  private proposals: ProposalEntry[] = [];
  private activeSessionId?: string;

  constructor(private readonly post: (message: PanelMessage) => void) {
    this.el = document.createElement('section');
    this.el.className = 'proposals';
    this.el.id = 'proposals';
    this.el.setAttribute('aria-label', 'Proposed edits waiting for review');
    this.el.hidden = true;
  }

  set(proposals: ProposalEntry[] | undefined, activeSessionId?: string): void {
    this.proposals = proposals ?? [];
    if (activeSessionId !== undefined) this.activeSessionId = activeSessionId;
    this.render();
  }

  /** The panel shows another session (the rows name sessions relative to it). */
  showing(activeSessionId: string | undefined): void {
    this.activeSessionId = activeSessionId;
    this.render();
  }

  private render(): void {
    this.el.replaceChildren();
    this.el.hidden = !this.proposals.length;
    if (this.el.hidden) return;
    const heading = document.createElement('div');
    heading.className = 'proposals-heading';
    heading.textContent = `Waiting for review (${this.proposals.length})`;
    const list = document.createElement('ul');
    list.className = 'proposals-list';
    for (const proposal of this.proposals) {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.className = 'proposal link';
      button.dataset.requestId = proposal.requestId;
      const file = document.createElement('span');
      file.className = 'proposal-file';
      file.textContent = proposal.path ?? proposal.title;
      button.append(file);
      if (proposal.sessionId !== this.activeSessionId) {
        const session = document.createElement('span');
        session.className = 'proposal-session';
        session.textContent = ` · ${proposal.sessionTitle || 'another session'}`;
        button.append(session);
      }
      button.title = `${proposal.title}: open the diff`;
      button.addEventListener('click', () => this.post({ type: 'open-diff', requestId: proposal.requestId }));
      item.append(button);
      list.append(item);
    }
    this.el.append(heading, list);
  }
}

/**
 * A proposal's hunks in its card (issue 29 item 4): while it waits, each hunk (file, lines, the
 * lines it removes and adds) with Accept / Reject of its own (decide-hunk: the same decision as the
 * editor's lenses; the answer goes once every hunk is decided); after the answer, what was kept of
 * each, and "1 of 2 hunks kept" in place of "Allowed once". The extension sends the hunks and their
 * states (proposal-hunks) and the count kept (proposal-kept).
 */
export class HunkCards {
  private readonly hunks = new Map<string, CardHunk[]>();
  private readonly kept = new Map<string, { kept: number; total: number }>();

  constructor(private readonly post: (message: PanelMessage) => void) {}

  set(requestId: string, hunks: CardHunk[]): void {
    this.hunks.set(requestId, hunks);
  }

  setKept(requestId: string, kept: number, total: number): void {
    this.kept.set(requestId, { kept, total });
  }

  /** Whether the card of `requestId` lists hunks (a proposal of two or more). */
  has(requestId: string): boolean {
    return (this.hunks.get(requestId)?.length ?? 0) > 1;
  }

  /** The resolved card's label ("1 of 2 hunks kept"), if the answer was given hunk by hunk. */
  keptLabel(requestId: string): string | undefined {
    const k = this.kept.get(requestId);
    return k ? keptLabel(k.kept, k.total) : undefined;
  }

  /** The list of hunks: with Accept / Reject while `pending`, else each one's outcome. */
  list(requestId: string, pending: boolean): HTMLElement {
    const hunks = this.hunks.get(requestId) ?? [];
    const list = document.createElement('ol');
    list.className = 'hunk-list';
    list.setAttribute('aria-label', `${hunks.length} hunks`);
    const files = new Set(hunks.map((h) => h.path)).size;
    for (const h of hunks) {
      const row = document.createElement('li');
      row.className = `hunk-row hunk-${h.state}`;
      row.dataset.hunk = `${h.file}:${h.hunk}`;
      const head = document.createElement('div');
      head.className = 'hunk-head';
      const where = document.createElement('span');
      where.className = 'hunk-where';
      where.textContent = files > 1 ? `${h.path}, ${h.where}` : h.where;
      head.append(where);
      if (pending && h.state === 'pending') {
        head.append(this.button(requestId, h, 'accepted', 'Accept'), this.button(requestId, h, 'rejected', 'Reject'));
      } else {
        const state = document.createElement('span');
        state.className = 'hunk-state';
        const done = !pending;
        state.textContent = h.state === 'accepted' ? (done ? 'kept' : 'accepted') : h.state === 'rejected' ? (done ? 'not kept' : 'rejected') : 'not kept';
        head.append(state);
        if (pending) head.append(this.button(requestId, h, 'pending', 'Undo'));
      }
      const diff = document.createElement('pre');
      diff.className = 'diff hunk-diff';
      for (const line of h.removed) diff.append(span('del', `-${line}\n`));
      for (const line of h.added) diff.append(span('add', `+${line}\n`));
      row.append(head, diff);
      list.append(row);
    }
    return list;
  }

  private button(requestId: string, h: CardHunk, state: HunkState, label: string): HTMLButtonElement {
    const button = document.createElement('button');
    button.className = state === 'accepted' ? 'hunk-accept' : state === 'rejected' ? 'hunk-reject secondary' : 'hunk-undo secondary';
    button.textContent = label;
    button.title = `${label} ${h.where}${state === 'pending' ? ' (decide it again)' : ''}`;
    button.addEventListener('click', () => this.post({ type: 'decide-hunk', requestId, file: h.file, hunk: h.hunk, state }));
    return button;
  }
}

function span(cls: string, text: string): HTMLSpanElement {
  const el = document.createElement('span');
  el.className = `line ${cls}`;
  el.textContent = text;
  return el;
}

/** A stored call's line of what was kept of its hunks ("1 of 2 hunks kept"): the history keeps
 * it (the tool part's keptHunks), so the card says it after a window reload too. */
export function keptHunksLine(kept: readonly boolean[]): HTMLElement {
  const line = document.createElement('div');
  line.className = 'permission resolved decision-once hunks-kept';
  line.textContent = keptLabel(kept.filter(Boolean).length, kept.length);
  return line;
}
