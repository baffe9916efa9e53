// @-mentions in the prompt box: typing "@" offers @file, @symbol, @selection, @problems,
// @terminal and @git; "@file:NAME" and "@symbol:NAME" list the extension's matches (fuzzy file
// paths, workspace symbols). A taken mention leaves the text and becomes a chip above the box,
// removable (x, or Backspace on it) until the prompt is sent with them as context items.
// Arrows move, Tab or Enter takes one, Escape closes. Plain DOM, like commands.ts.
import type { MentionItem, MentionKind, MentionSearchKind, PanelMessage } from '../model/messages';
import type { ContextRef, TextRef } from '../protocol/generated';

export const MENTION_KINDS: { name: MentionKind | MentionSearchKind; description: string }[] = [
  { name: 'file', description: 'a workspace file' },
  { name: 'symbol', description: 'a workspace symbol' },
  { name: 'selection', description: 'the selection in the editor' },
  { name: 'problems', description: 'the problems of the active file, or of the workspace' },
  { name: 'terminal', description: "the active terminal's recent output" },
  { name: 'git', description: "the working tree's diff" },
];
export const MAX_MENTIONS = 20;

/** The mention being typed before the caret: where its "@" is and what follows it; undefined
 * when the caret is not in one (an "@" starts the text or follows a space). */
export function mentionQuery(text: string, caret: number): { start: number; query: string } | undefined {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  if (!match) return undefined;
  return { start: match.index + match[1].length, query: match[2] };
}

/** What a query asks for: the kinds that start with it, or a search of files or symbols. */
export function parseQuery(query: string): { search: MentionSearchKind; text: string } | { kinds: typeof MENTION_KINDS } {
  const search = /^(file|symbol):(.*)$/.exec(query);
  if (search) return { search: search[1] as MentionSearchKind, text: search[2] };
  return { kinds: MENTION_KINDS.filter((k) => k.name.startsWith(query.toLowerCase())) };
}

/** Two items are the same context (a second @problems replaces the first). */
function sameRef(a: ContextRef | TextRef, b: ContextRef | TextRef): boolean {
  return JSON.stringify(a) === JSON.stringify(b) || ('label' in a && 'label' in b && a.label === b.label);
}

type Option = { key: string; name: string; description: string; take: () => void };

export class MentionMenu {
  readonly list: HTMLUListElement;
  readonly chips: HTMLElement;
  private items: MentionItem[] = [];
  private options: Option[] = [];
  private selected = 0;
  private results: { kind: MentionSearchKind; query: string; items: MentionItem[] } | undefined;

  /** `post` asks the extension (answered through setResults and added). */
  constructor(
    private readonly box: HTMLTextAreaElement,
    private readonly post: (message: PanelMessage) => void,
    private readonly refused: (message: string) => void,
  ) {
    this.list = document.createElement('ul');
    this.list.id = 'mentions';
    this.list.className = 'commands mentions';
    this.list.setAttribute('role', 'listbox');
    this.list.setAttribute('aria-label', 'Mentions');
    this.list.hidden = true;
    this.chips = document.createElement('div');
    this.chips.id = 'mention-chips';
    this.chips.className = 'mention-chips';
    this.chips.setAttribute('aria-label', 'Attached context');
    this.chips.hidden = true;
    box.before(this.list);
    box.before(this.chips);
    box.addEventListener('input', () => this.update());
    box.addEventListener('blur', () => this.close());
    this.list.addEventListener('mousedown', (e) => {
      const li = (e.target as HTMLElement).closest<HTMLElement>('[data-option]');
      if (!li) return;
      e.preventDefault(); // the box keeps its focus
      this.options[Number(li.dataset.option)]?.take();
    });
    this.chips.addEventListener('click', (e) => {
      const chip = (e.target as HTMLElement).closest<HTMLElement>('[data-chip]');
      if ((e.target as HTMLElement).closest('.mention-remove') && chip) this.remove(Number(chip.dataset.chip));
    });
    this.chips.addEventListener('keydown', (e) => {
      const chip = (e.target as HTMLElement).closest<HTMLElement>('[data-chip]');
      if (chip && (e.key === 'Backspace' || e.key === 'Delete')) {
        e.preventDefault();
        this.remove(Number(chip.dataset.chip));
        this.box.focus();
      }
    });
  }

  get open(): boolean {
    return !this.list.hidden;
  }

  /** The attached items (their labels and refs), kept until `take()`. */
  get attached(): readonly MentionItem[] {
    return this.items;
  }

  /** The context items to send with the prompt; the chips go. */
  take(): (ContextRef | TextRef)[] {
    const refs = this.items.map((i) => i.ref);
    this.items = [];
    this.renderChips();
    return refs;
  }

  /** The extension's matches of a file or symbol search (stale ones are dropped). */
  setResults(kind: MentionSearchKind, query: string, items: MentionItem[]): void {
    const now = this.current();
    if (!now || 'kinds' in now.parsed || now.parsed.search !== kind || now.parsed.text !== query) return;
    this.results = { kind, query, items };
    this.update();
  }

  /** An item the extension gathered (@selection, ...), or why there is none. */
  added(item: MentionItem | undefined, error: string | undefined): void {
    if (item) this.attach(item);
    else if (error) this.refused(error);
  }

  attach(item: MentionItem): void {
    const at = this.items.findIndex((i) => sameRef(i.ref, item.ref));
    if (at >= 0) this.items[at] = item;
    else if (this.items.length >= MAX_MENTIONS) return this.refused(`at most ${MAX_MENTIONS} mentions go with one prompt`);
    else this.items.push(item);
    this.renderChips();
  }

  remove(index: number): void {
    this.items.splice(index, 1);
    this.renderChips();
  }

  private current(): { start: number; query: string; parsed: ReturnType<typeof parseQuery> } | undefined {
    const found = mentionQuery(this.box.value, this.box.selectionStart ?? 0);
    return found && { ...found, parsed: parseQuery(found.query) };
  }

  /** Show what matches the mention being typed. */
  update(): void {
    const now = this.current();
    if (!now) return this.close();
    const { parsed } = now;
    if ('kinds' in parsed) {
      this.options = parsed.kinds.map((k) => ({
        key: k.name,
        name: `@${k.name}`,
        description: k.description,
        take: () => this.takeKind(k.name),
      }));
    } else {
      const { search, text } = parsed;
      const results = this.results;
      if (!results || results.kind !== search || results.query !== text) {
        this.post({ type: 'mention-search', kind: search, query: text });
      }
      const items = results && results.kind === search ? results.items : [];
      this.options = items.map((item) => ({
        key: JSON.stringify(item.ref),
        name: item.label,
        description: item.detail ?? '',
        take: () => {
          this.clearToken();
          this.attach(item);
        },
      }));
    }
    this.selected = Math.min(this.selected, Math.max(0, this.options.length - 1));
    if (!this.options.length) return void (this.list.hidden = true);
    this.list.replaceChildren(
      ...this.options.map((option, i) => {
        const li = document.createElement('li');
        li.className = `command${i === this.selected ? ' selected' : ''}`;
        li.dataset.option = String(i);
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === this.selected));
        const name = document.createElement('span');
        name.className = 'command-name';
        name.textContent = option.name;
        const description = document.createElement('span');
        description.className = 'command-description';
        description.textContent = option.description;
        li.append(name, ' ', description);
        return li;
      }),
    );
    this.list.hidden = false;
  }

  /** A key while the list is open: true when the menu used it (the caller sends nothing). */
  onKey(e: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      this.selected = (this.selected + step + this.options.length) % this.options.length;
      this.update();
    } else if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && !e.isComposing)) {
      this.options[this.selected]?.take();
    } else if (e.key === 'Escape') {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  private takeKind(kind: MentionKind | MentionSearchKind): void {
    if (kind === 'file' || kind === 'symbol') {
      this.replaceToken(`@${kind}:`);
      this.update();
      return;
    }
    this.clearToken();
    this.post({ type: 'mention', kind });
  }

  /** The "@..." being typed, replaced (by nothing when the mention became a chip). */
  private replaceToken(by: string): void {
    const now = this.current();
    if (!now) return;
    const caret = this.box.selectionStart ?? 0;
    const rest = this.box.value.slice(caret);
    this.box.value = this.box.value.slice(0, now.start) + by + rest;
    const at = now.start + by.length;
    this.box.setSelectionRange(at, at);
    this.box.dispatchEvent(new Event('input')); // the draft is saved
  }

  private clearToken(): void {
    this.replaceToken('');
    this.close();
  }

  private renderChips(): void {
    this.chips.replaceChildren(
      ...this.items.map((item, i) => {
        const chip = document.createElement('span');
        chip.className = 'mention-chip';
        chip.dataset.chip = String(i);
        chip.tabIndex = 0;
        chip.title = item.detail ?? item.label;
        const label = document.createElement('span');
        label.textContent = item.label;
        const remove = document.createElement('button');
        remove.className = 'mention-remove';
        remove.textContent = '×';
        remove.setAttribute('aria-label', `Remove ${item.label}`);
        chip.append(label, remove);
        return chip;
      }),
    );
    this.chips.hidden = !this.items.length;
  }

  close(): void {
    this.list.hidden = true;
    this.selected = 0;
  }
}
