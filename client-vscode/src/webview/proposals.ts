// "Waiting for review": the proposed edits waiting for an answer, in every session (the host's
// `proposals`), above the transcript. Each row names the file and, when it is not the session the
// panel shows, the session; a click opens its diff (open-diff). Hidden when nothing waits.
import type { PanelMessage, ProposalEntry } from '../model/messages';

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
