// A background session's question in the panel: a session run in its own worktree (agent/prompt
// `background: true`) asks like any other, and while the panel shows another session its question
// is a card above the prompt box, labelled "Background: <title> on agentls/<branch> asks:", with
// the transcript's controls (ask_user's choices and answer, question.ts; Allow once / Reject for a
// permission) and a link that opens the session. Answered, the card goes (the host's next list).
import type { BackgroundQuestion, PanelMessage } from '../model/messages';
import { questionBlock } from './question';
import { el } from './dom';

export class BackgroundQuestions {
  readonly el: HTMLElement;
  private questions: BackgroundQuestion[] = [];
  /** Answered here, until the host's list no longer has them. */
  private readonly answered = new Set<string>();

  constructor(private readonly post: (message: PanelMessage) => void) {
    this.el = el('section', 'background-questions');
    this.el.setAttribute('aria-label', 'Questions from background sessions');
    this.el.hidden = true;
  }

  set(questions: BackgroundQuestion[] | undefined): void {
    this.questions = questions ?? [];
    const open = new Set(this.questions.map((q) => q.requestId));
    for (const id of [...this.answered]) if (!open.has(id)) this.answered.delete(id);
    this.render();
  }

  private render(): void {
    const shown = this.questions.filter((q) => !this.answered.has(q.requestId));
    this.el.replaceChildren(...shown.map((q) => this.card(q)));
    this.el.hidden = !shown.length;
  }

  private card(q: BackgroundQuestion): HTMLElement {
    const card = el('div', 'background-question');
    card.dataset.sessionId = q.sessionId;
    card.dataset.requestId = q.requestId;
    // "Background: Choose a log format on agentls/…", not "…format. on": the title's own end stop dropped
    const title = q.sessionTitle.replace(/[.:;!]+$/, '');
    const label = el('div', 'background-question-label', `Background: ${title} on ${q.branch} asks:`);
    const open = el('button', 'link background-question-open', 'Open session');
    open.title = 'Show this background session';
    open.addEventListener('click', () => this.post({ type: 'select-session', sessionId: q.sessionId }));
    const head = el('div', 'background-question-head');
    head.append(label, open);
    card.append(head);
    const answer = (decision: 'once' | 'reject', feedback?: string): void => {
      const message: PanelMessage = { type: 'approve', sessionId: q.sessionId, requestId: q.requestId, decision };
      if (feedback) message.feedback = feedback;
      this.post(message);
      this.answered.add(q.requestId);
      this.render();
    };
    if (q.tool === 'ask_user') {
      const block = questionBlock(q.requestId, q.input, answer);
      block.querySelector('.permission-title')?.remove(); // the label above says who asks
      card.append(block);
      return card;
    }
    const block = el('div', 'permission pending');
    block.setAttribute('role', 'group');
    block.setAttribute('aria-label', 'Approval needed');
    block.append(el('div', 'permission-title', q.tool === 'bash' ? 'run this command:' : `${q.tool}: ${q.title}`));
    if (q.tool === 'bash' && typeof q.input.command === 'string') block.append(el('pre', 'command exact', q.input.command));
    else if (q.diff) block.append(el('pre', 'diff', q.diff));
    const allow = el('button', '', 'Allow once');
    allow.dataset.action = 'allow-once';
    allow.addEventListener('click', () => answer('once'));
    const reject = el('button', 'danger', 'Reject');
    reject.dataset.action = 'reject';
    reject.addEventListener('click', () => answer('reject'));
    const buttons = el('div', 'buttons');
    buttons.append(allow, reject);
    block.append(buttons);
    card.append(block);
    return card;
  }
}
