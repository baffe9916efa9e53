// Earlier messages in the panel: while a compaction summary is in force, a collapsed "Earlier
// messages (summarized)" block at the top of the transcript. Opening it asks the extension for
// the session's whole history (agent/getMessages history "all") and shows the messages the summary
// stands for, read-only and greyed, each user message with its Restore button (checkpoints.ts):
// agent/revert reaches a checkpoint older than the compaction.
import type { CheckpointMessage, CheckpointResult } from '../model/checkpoints';
import { viewFromMessages, type Item, type SessionView } from '../model/transcript';

type Loaded = Extract<CheckpointResult, { type: 'earlier-messages' }>;

export class EarlierMessages {
  readonly el: HTMLDetailsElement;
  private readonly body: HTMLElement;
  /** The session and summary the block is for: another summary starts it anew, closed. */
  private key?: string;
  private sessionId?: string;
  /** The summarized messages as a view of their own, once the extension sent them. */
  private view?: SessionView;
  private asked = false;

  constructor(
    private readonly post: (message: CheckpointMessage) => void,
    private readonly render: (view: SessionView, item: Item) => HTMLElement,
  ) {
    this.el = document.createElement('details');
    this.el.className = 'earlier';
    const summary = document.createElement('summary');
    summary.textContent = 'Earlier messages (summarized)';
    this.body = document.createElement('div');
    this.body.className = 'earlier-items';
    this.el.append(summary, this.body);
    this.el.addEventListener('toggle', () => {
      if (!this.el.open || this.asked || !this.sessionId) return;
      this.asked = true;
      this.say('Loading the earlier messages…');
      this.post({ type: 'earlier-messages', sessionId: this.sessionId });
    });
  }

  /** The block for the view, at the top of its transcript; null while nothing is summarized. */
  for(view: SessionView): HTMLElement | null {
    if (!view.summaryId) {
      this.el.remove();
      return null;
    }
    const key = `${view.sessionId}\n${view.summaryId}`;
    if (key !== this.key) {
      this.key = key;
      this.sessionId = view.sessionId;
      this.view = undefined;
      this.asked = false;
      this.el.open = false;
      this.body.replaceChildren();
    }
    return this.el;
  }

  /** The view is the summarized messages' (its user messages get Restore, nothing else). */
  owns(view: SessionView): boolean {
    return view === this.view;
  }

  /** The extension's answer: the summarized messages, oldest first. */
  loaded(message: Loaded): void {
    if (message.sessionId !== this.sessionId || !this.asked) return;
    if (message.error) {
      this.asked = false; // closing and opening the block asks again
      this.say(`Could not read the earlier messages: ${message.error}`);
      return;
    }
    const view = viewFromMessages(message.sessionId, message.messages);
    this.view = view;
    if (!view.items.some((i) => !i.reverted)) {
      this.say('No earlier message is stored.');
      return;
    }
    this.body.replaceChildren(...view.items.map((item) => this.render(view, item)));
  }

  private say(text: string): void {
    const p = document.createElement('div');
    p.className = 'earlier-note';
    p.textContent = text;
    this.body.replaceChildren(p);
  }
}
