// A selection sent from the editor ("Ask agent about this", Ctrl+Alt+A) is context, not a prompt
// (issue 29 item 2): it goes into the prompt box as a chip (the @-mention machinery of mentions.ts:
// a token in the text drawn as a chip, its range going with the prompt as a context item exactly as
// @selection's does), the box takes the focus, and nothing is sent. Below the box a bar shows what
// was attached: the file and lines (a click reveals them in the editor), which session the prompt
// will go to (the current one or a new one: a toggle, its default from agentls.selectionSession),
// and suggestions that fill the box (never send). The bar goes when the chip leaves the text or the
// prompt is sent. Plain DOM.
import type { MentionItem, PanelMessage } from '../model/messages';
import type { MentionMenu } from './mentions';

export const SUGGESTIONS: { label: string; text: string }[] = [
  { label: 'Explain', text: 'Explain this code.' },
  { label: 'Find bugs', text: 'Point out anything wrong with this code.' },
  { label: 'Write tests', text: 'Write tests for this code.' },
];

/** "src/calc.py:3-7" as the path and the first line (1-based) to open. */
export function revealTarget(item: MentionItem): { path: string; line?: number } | undefined {
  if (!('uri' in item.ref)) return undefined;
  const name = item.name ?? item.label;
  const match = /^(.*):(\d+)(?:-\d+)?$/.exec(name);
  return match ? { path: match[1], line: Number(match[2]) } : { path: name };
}

const sameRef = (a: MentionItem, b: MentionItem): boolean => JSON.stringify(a.ref) === JSON.stringify(b.ref);

export class SelectionBar {
  readonly el: HTMLElement;
  private item: MentionItem | undefined;
  private fresh = false;
  private readonly file: HTMLButtonElement;
  private readonly toggle: HTMLButtonElement;

  constructor(
    private readonly box: HTMLTextAreaElement,
    private readonly mentions: MentionMenu,
    private readonly post: (message: PanelMessage) => void,
  ) {
    this.el = document.createElement('div');
    this.el.className = 'selection-bar';
    this.el.id = 'selection-bar';
    this.el.setAttribute('role', 'group');
    this.el.setAttribute('aria-label', 'Selection attached to the prompt');
    this.el.hidden = true;
    this.file = document.createElement('button');
    this.file.className = 'selection-file';
    this.file.addEventListener('click', () => {
      const target = this.item && revealTarget(this.item);
      if (target) this.post({ type: 'open-path', ...target });
    });
    this.toggle = document.createElement('button');
    this.toggle.className = 'selection-session secondary';
    this.toggle.addEventListener('click', () => {
      this.fresh = !this.fresh;
      this.renderToggle();
      this.box.focus();
    });
    const suggestions = document.createElement('div');
    suggestions.className = 'selection-suggestions';
    suggestions.setAttribute('aria-label', 'Suggestions (fill the box)');
    for (const s of SUGGESTIONS) {
      const button = document.createElement('button');
      button.className = 'selection-suggestion secondary';
      button.textContent = s.label;
      button.title = `Put "${s.text}" into the prompt box (nothing is sent)`;
      button.addEventListener('click', () => this.suggest(s.text));
      suggestions.append(button);
    }
    const top = document.createElement('div');
    top.className = 'selection-row';
    top.append(this.file, this.toggle);
    this.el.append(top, suggestions);
    box.addEventListener('input', () => this.check());
  }

  /** Whether the prompt goes to a new session (the toggle, while a selection's chip is in the text). */
  get newSession(): boolean {
    return !this.el.hidden && this.fresh;
  }

  /** A selection from the editor: its chip at the end of the text, the bar shown, the box focused. */
  add(item: MentionItem, session: 'current' | 'new'): void {
    this.box.focus();
    if (!this.mentions.attached.some((a) => sameRef(a, item))) {
      const end = this.box.value.length;
      this.box.setSelectionRange(end, end);
      this.mentions.attach(item);
    }
    this.item = item;
    this.fresh = session === 'new';
    this.file.textContent = item.name ?? item.label;
    this.file.title = `Show ${item.name ?? item.label} in the editor`;
    this.renderToggle();
    this.el.hidden = false;
    this.box.focus();
    // The bar moved the box (the composer grows upwards): the chips are drawn again over it.
    this.box.dispatchEvent(new Event('input'));
  }

  /** The prompt was sent: the bar goes. */
  done(): void {
    if (this.el.hidden) return;
    this.item = undefined;
    this.el.hidden = true;
    this.box.dispatchEvent(new Event('input')); // the box moved back down: the chips with it
  }

  private renderToggle(): void {
    this.toggle.textContent = this.fresh ? 'New session' : 'Current session';
    this.toggle.setAttribute('aria-pressed', String(this.fresh));
    this.toggle.title = this.fresh
      ? 'The prompt starts a new session (click: send it to the current session)'
      : 'The prompt goes to the current session (click: start a new session with it)';
  }

  /** A suggestion's text at the start of the box (the chip stays); the caret at the end. */
  private suggest(text: string): void {
    const rest = this.box.value.trim();
    const known = SUGGESTIONS.find((s) => rest.startsWith(s.text));
    const body = known ? rest.slice(known.text.length).trim() : rest;
    this.box.value = `${text} ${body} `.replace(/ +$/, ' ');
    const end = this.box.value.length;
    this.box.focus();
    this.box.setSelectionRange(end, end);
    this.box.dispatchEvent(new Event('input'));
  }

  /** The chip left the text (deleted, or sent): the bar goes. */
  private check(): void {
    if (this.el.hidden || !this.item) return;
    const item = this.item;
    if (!this.mentions.attached.some((a) => sameRef(a, item))) this.done();
  }
}
