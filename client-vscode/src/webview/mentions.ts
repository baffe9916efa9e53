// @-mentions in the prompt box, in one step: typing "@calc" lists at once the files whose name
// matches (the extension's in-memory index: mentionMatch.ts), the workspace symbols, and the
// other kinds (@selection, @problems, @terminal, @git) that start with it, in the completion list
// shared with the /commands (completion.ts). "@file:NAME" and "@symbol:NAME" still search one
// kind. A taken mention stays in the text as a chip: its token ("@calc.py") is drawn as a chip
// over the box, the caret steps over it, Backspace or Delete removes it whole. When the prompt
// is sent, each token becomes the mention's name in place (the file's workspace path: "what does
// src/calc.py do?") and its content goes with the prompt as a context item. Plain DOM.
import type { MentionItem, MentionKind, MentionSearchKind, PanelMessage } from '../model/messages';
import type { ContextRef, TextRef } from '../protocol/generated';
import { CompletionList, type CompletionOption } from './completion';

export const MENTION_KINDS: { name: MentionKind; description: string }[] = [
  { name: 'selection', description: 'the selection in the editor' },
  { name: 'problems', description: 'the problems of the active file, or of the workspace' },
  { name: 'terminal', description: "the active terminal's recent output" },
  { name: 'git', description: "the working tree's diff" },
];
export const MAX_MENTIONS = 20;
const SYMBOL_DELAY_MS = 120; // symbol providers are slower than the file index: asked once typing pauses
const SHOWN_SYMBOLS = 6;

/** The mention being typed before the caret: where its "@" is and what follows it; undefined
 * when the caret is not in one (an "@" starts the text or follows a space). */
export function mentionQuery(text: string, caret: number): { start: number; query: string } | undefined {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  if (!match) return undefined;
  return { start: match.index + match[1].length, query: match[2] };
}

/** What a query asks for: a search of files and symbols for its text (or of one kind, for
 * "file:..." and "symbol:..."), and the kinds whose name starts with it. */
export function parseQuery(query: string): { text: string; search: MentionSearchKind[]; kinds: typeof MENTION_KINDS } {
  const one = /^(file|symbol):(.*)$/.exec(query);
  if (one) return { text: one[2], search: [one[1] as MentionSearchKind], kinds: [] };
  const lower = query.toLowerCase();
  return { text: query, search: ['file', 'symbol'], kinds: MENTION_KINDS.filter((k) => k.name.startsWith(lower)) };
}

/** The token a mention shows in the text: "@calc.py", "@problems". */
export function tokenOf(item: MentionItem): string {
  return item.label.startsWith('@') ? item.label : `@${item.label}`;
}

/** What the prompt says in a mention's place. */
export function nameOf(item: MentionItem): string {
  return item.name ?? item.label;
}

/** Where the tokens are in `text`, in text order: each found where it starts the text or follows
 * a space, and ends the text or is followed by something other than a letter or digit. */
export function locateTokens(text: string, tokens: readonly string[]): { start: number; end: number; token: number }[] {
  const found: { start: number; end: number; token: number }[] = [];
  tokens.forEach((token, i) => {
    if (tokens.indexOf(token) !== i) return; // the same token twice: found once, everywhere
    for (let at = text.indexOf(token); at >= 0; at = text.indexOf(token, at + 1)) {
      const end = at + token.length;
      if ((at === 0 || /\s/.test(text[at - 1])) && (end === text.length || !/[\p{L}\p{N}_]/u.test(text[end]))) {
        found.push({ start: at, end, token: i });
      }
    }
  });
  found.sort((a, b) => a.start - b.start);
  // A token inside a longer one ("@calc" in "@calc.py"): the longer one wins.
  return found.filter((f, i) => !found.some((g, j) => j !== i && g.start <= f.start && g.end >= f.end && g.end - g.start > f.end - f.start));
}

/** Two items are the same context (a second @problems replaces the first). */
function sameRef(a: ContextRef | TextRef, b: ContextRef | TextRef): boolean {
  return JSON.stringify(a) === JSON.stringify(b) || ('label' in a && 'label' in b && a.label === b.label);
}

/** A mention in the text: its token, and its item (none yet while the extension gathers it). */
interface Placed {
  token: string;
  item?: MentionItem;
  kind?: MentionKind;
}

export class MentionMenu {
  private readonly menu: CompletionList;
  /** The chips, drawn over the box where their tokens are (the box itself is plain text). */
  readonly chips: HTMLElement;
  private placed: Placed[] = [];
  private results: Partial<Record<MentionSearchKind, { query: string; items: MentionItem[] }>> = {};
  private asked: Partial<Record<MentionSearchKind, string>> = {};
  private symbolTimer: ReturnType<typeof setTimeout> | undefined;
  private shownQuery: string | undefined;
  private drawn = ''; // the text the chips were drawn for

  /** `post` asks the extension (answered through setResults and added). */
  constructor(
    private readonly box: HTMLTextAreaElement,
    private readonly post: (message: PanelMessage) => void,
    private readonly refused: (message: string) => void,
  ) {
    this.menu = new CompletionList(box, 'mentions', 'Mentions', 'mentions');
    this.chips = document.createElement('div');
    this.chips.id = 'mention-chips';
    this.chips.className = 'mention-overlay';
    this.chips.setAttribute('aria-hidden', 'true'); // the text says the same; the box is what is read
    this.chips.hidden = true;
    box.after(this.chips);
    box.addEventListener('input', () => {
      this.sync();
      this.update();
    });
    box.addEventListener('blur', () => this.close());
    box.addEventListener('scroll', () => (this.chips.scrollTop = box.scrollTop));
    box.addEventListener('keydown', (e) => this.onEditKey(e));
    box.addEventListener('mouseup', () => this.stepOut());
    document.addEventListener('selectionchange', () => {
      if (document.activeElement !== box) return;
      if (box.value !== this.drawn) this.sync(); // the text was set from outside (a Restore, a draft)
      this.stepOut();
    });
    box.addEventListener('focus', () => box.value !== this.drawn && this.sync());
    new ResizeObserver(() => this.draw()).observe(box);
  }

  get list(): HTMLUListElement {
    return this.menu.el;
  }

  get open(): boolean {
    return this.menu.open;
  }

  /** The mentions in the text now, with their items. */
  get attached(): readonly MentionItem[] {
    return this.located().flatMap((l) => (l.placed.item ? [l.placed.item] : []));
  }

  /** `text` with each mention's token replaced by its name: what is sent. */
  inPlace(text: string): string {
    let out = '';
    let from = 0;
    for (const l of this.located(text)) {
      if (!l.placed.item) continue;
      out += text.slice(from, l.start) + nameOf(l.placed.item);
      from = l.end;
    }
    return out + text.slice(from);
  }

  /** The context items of the mentions in the text, to send with the prompt; the chips go. */
  take(): (ContextRef | TextRef)[] {
    const refs: (ContextRef | TextRef)[] = [];
    for (const item of this.attached) if (!refs.some((r) => sameRef(r, item.ref))) refs.push(item.ref);
    this.placed = [];
    this.draw();
    return refs;
  }

  /** The extension's matches of a file or symbol search (stale ones are dropped). */
  setResults(kind: MentionSearchKind, query: string, items: MentionItem[]): void {
    const now = this.current();
    if (!now || now.parsed.text !== query || !now.parsed.search.includes(kind)) return;
    this.results[kind] = { query, items };
    this.update(true);
  }

  /** An item the extension gathered (@selection, ...) for the oldest mention waiting for one,
   * or why there is none (that mention's token leaves the text). */
  added(item: MentionItem | undefined, error: string | undefined): void {
    const waiting = this.placed.find((p) => !p.item);
    if (!waiting) {
      if (item) this.attach(item);
      else if (error) this.refused(error);
      return;
    }
    const spot = this.located().find((l) => l.placed === waiting);
    if (!item) {
      this.placed.splice(this.placed.indexOf(waiting), 1);
      if (spot) this.splice(spot.start, spot.end + (this.box.value[spot.end] === ' ' ? 1 : 0), '');
      if (error) this.refused(error);
      return;
    }
    waiting.item = item;
    const token = this.uniqueToken(item, waiting);
    if (spot && token !== waiting.token) this.splice(spot.start, spot.end, token);
    waiting.token = token;
    this.draw();
  }

  /** A mention put at the caret (a chip added from outside the menu). */
  attach(item: MentionItem): void {
    if (this.placed.length >= MAX_MENTIONS) return this.refused(`at most ${MAX_MENTIONS} mentions go with one prompt`);
    const token = this.uniqueToken(item);
    this.placed.push({ token, item });
    const caret = this.box.selectionStart ?? this.box.value.length;
    const before = caret > 0 && !/\s/.test(this.box.value[caret - 1]) ? ' ' : '';
    this.splice(caret, caret, `${before}${token} `);
  }

  private current(): { start: number; query: string; parsed: ReturnType<typeof parseQuery> } | undefined {
    const caret = this.box.selectionStart ?? 0;
    const found = mentionQuery(this.box.value, caret);
    if (!found) return undefined;
    // The caret right after a chip is not a new mention.
    if (this.located().some((l) => l.start === found.start)) return undefined;
    return { ...found, parsed: parseQuery(found.query) };
  }

  /** Show what matches the mention being typed, asking the extension for what it does not have. */
  update(keep = false): void {
    const now = this.current();
    if (!now) return this.close();
    const { text, search, kinds } = now.parsed;
    const key = now.query;
    if (this.shownQuery !== key) keep = false;
    this.shownQuery = key;
    if (search.includes('file') && this.asked.file !== text) {
      this.asked.file = text;
      this.post({ type: 'mention-search', kind: 'file', query: text });
    }
    clearTimeout(this.symbolTimer);
    if (search.includes('symbol') && this.asked.symbol !== text && (text.length >= 2 || search.length === 1)) {
      this.symbolTimer = setTimeout(() => {
        if (this.current()?.parsed.text !== text) return;
        this.asked.symbol = text;
        this.post({ type: 'mention-search', kind: 'symbol', query: text });
      }, SYMBOL_DELAY_MS);
    }
    const options: CompletionOption[] = kinds.map((k) => ({
      key: `@${k.name}`,
      name: `@${k.name}`,
      description: k.description,
      kind: 'context',
      take: () => this.takeKind(k.name),
    }));
    for (const kind of search) {
      const results = this.results[kind];
      if (!results || results.query !== text) continue;
      const items = kind === 'symbol' && search.length > 1 ? results.items.slice(0, SHOWN_SYMBOLS) : results.items;
      for (const item of items) {
        options.push({
          key: JSON.stringify(item.ref),
          name: item.label,
          description: item.detail ?? '',
          kind,
          take: () => this.takeItem(item),
        });
      }
    }
    this.menu.show(options, keep);
  }

  /** A key while the list is open: true when the menu used it (the caller sends nothing). */
  onKey(e: KeyboardEvent): boolean {
    return this.menu.onKey(e);
  }

  /** The list closes; the next mention asks the extension anew (files change). */
  close(): void {
    this.menu.close();
    this.shownQuery = undefined;
    this.asked = {};
    this.results = {};
    clearTimeout(this.symbolTimer);
  }

  private takeItem(item: MentionItem): void {
    if (this.placed.length >= MAX_MENTIONS) return this.refused(`at most ${MAX_MENTIONS} mentions go with one prompt`);
    const token = this.uniqueToken(item);
    this.placed.push({ token, item });
    this.replaceQuery(`${token} `);
  }

  private takeKind(kind: MentionKind): void {
    if (this.placed.length >= MAX_MENTIONS) return this.refused(`at most ${MAX_MENTIONS} mentions go with one prompt`);
    this.placed.push({ token: `@${kind}`, kind });
    this.replaceQuery(`@${kind} `);
    this.post({ type: 'mention', kind });
  }

  /** The item's token, unless another mention already shows it for something else (two files
   * called __init__.py): then its name (the workspace path). */
  private uniqueToken(item: MentionItem, self?: Placed): string {
    const token = tokenOf(item);
    const clash = this.placed.some((p) => p !== self && p.token === token && p.item && !sameRef(p.item.ref, item.ref));
    return clash ? `@${nameOf(item)}` : token;
  }

  /** The "@..." being typed, replaced by `by` (a chip's token and a space). */
  private replaceQuery(by: string): void {
    const found = mentionQuery(this.box.value, this.box.selectionStart ?? 0);
    this.close();
    if (!found) return;
    const end = found.start + 1 + found.query.length;
    this.splice(found.start, end + (by.endsWith(' ') && this.box.value[end] === ' ' ? 1 : 0), by);
  }

  /** Replace [from, to) of the text, the caret after the new text; the draft is saved. */
  private splice(from: number, to: number, by: string): void {
    const caret = this.box.selectionStart ?? 0;
    const value = this.box.value;
    this.box.value = value.slice(0, from) + by + value.slice(to);
    const at = caret >= to ? caret - (to - from) + by.length : from + by.length;
    this.box.setSelectionRange(at, at);
    this.box.dispatchEvent(new Event('input'));
  }

  /** Each mention whose token is in the text, in text order (default: the box's). */
  private located(text = this.box.value): { start: number; end: number; placed: Placed }[] {
    const tokens = this.placed.map((p) => p.token);
    return locateTokens(text, tokens).map((l) => ({ start: l.start, end: l.end, placed: this.placed[l.token] }));
  }

  /** After an edit: a mention whose token left the text (edited away) is dropped. */
  private sync(): void {
    const tokens = new Set(this.located().map((l) => l.placed.token));
    const kept = this.placed.filter((p) => tokens.has(p.token));
    if (kept.length !== this.placed.length) this.placed = kept;
    this.draw();
  }

  /** Backspace and Delete take a chip whole; the arrows step over it. */
  private onEditKey(e: KeyboardEvent): void {
    if (e.defaultPrevented || e.isComposing || this.menu.open) return;
    const from = this.box.selectionStart ?? 0;
    if (from !== this.box.selectionEnd) return;
    const spot = this.located().find((l) =>
      e.key === 'Backspace' || e.key === 'ArrowLeft' ? l.start < from && from <= l.end : l.start <= from && from < l.end,
    );
    if (!spot) return;
    if (e.key === 'Backspace' || e.key === 'Delete') {
      e.preventDefault();
      this.splice(spot.start, spot.end, '');
    } else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      const at = e.key === 'ArrowLeft' ? spot.start : spot.end;
      this.box.setSelectionRange(at, at);
    }
  }

  /** A caret put inside a chip (a click) goes to its end. */
  private stepOut(): void {
    const from = this.box.selectionStart ?? 0;
    if (from !== this.box.selectionEnd) return;
    const spot = this.located().find((l) => l.start < from && from < l.end);
    if (spot) this.box.setSelectionRange(spot.end, spot.end);
  }

  /** The chips over the box: the text again, transparent, with each token in a chip, laid out
   * exactly as the box lays it out (same font, padding, wrapping and scroll). */
  private draw(): void {
    this.drawn = this.box.value;
    const spots = this.located();
    if (!spots.length) {
      this.chips.hidden = true;
      this.chips.replaceChildren();
      return;
    }
    const text = this.box.value;
    const parts: (Node | string)[] = [];
    let from = 0;
    for (const spot of spots) {
      parts.push(text.slice(from, spot.start));
      const chip = document.createElement('span');
      chip.className = `mention-chip${spot.placed.item ? '' : ' pending'}`;
      chip.textContent = text.slice(spot.start, spot.end);
      chip.title = spot.placed.item?.detail ?? spot.placed.item?.label ?? `${spot.placed.token}…`;
      parts.push(chip);
      from = spot.end;
    }
    parts.push(text.slice(from) + '\u200b'); // a trailing newline keeps its line
    this.chips.replaceChildren(...parts);
    this.chips.hidden = false;
    this.place();
  }

  private place(): void {
    const box = this.box;
    const style = getComputedStyle(box);
    const overlay = this.chips.style;
    for (const p of ['font', 'letterSpacing', 'wordSpacing', 'lineHeight', 'tabSize', 'textIndent', 'textTransform'] as const) {
      overlay[p] = style[p];
    }
    overlay.padding = style.padding;
    const parent = this.chips.offsetParent as HTMLElement | null;
    const b = box.getBoundingClientRect();
    let left = b.left + window.scrollX;
    let top = b.top + window.scrollY;
    // Placed against the nearest positioned ancestor (offsetParent; the page when that is a static body).
    if (parent && (parent !== document.body || getComputedStyle(parent).position !== 'static')) {
      const p = parent.getBoundingClientRect();
      left = b.left - p.left - parent.clientLeft + parent.scrollLeft;
      top = b.top - p.top - parent.clientTop + parent.scrollTop;
    }
    overlay.left = `${left + box.clientLeft}px`;
    overlay.top = `${top + box.clientTop}px`;
    overlay.width = `${box.clientWidth}px`;
    overlay.height = `${box.clientHeight}px`;
    this.chips.scrollTop = box.scrollTop;
  }
}
