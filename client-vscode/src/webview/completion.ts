// The completion list above the prompt box, one module for both menus of the panel: the
// /commands (commands.ts) and the @-mentions (mentions.ts). Arrows move, Tab or Enter takes the
// selected option, Escape closes, a click takes one (the box keeps its focus). Plain DOM.

export interface CompletionOption {
  /** Stable across updates: the selection stays on it when more options arrive. */
  key: string;
  name: string;
  description: string;
  /** What it is (file, symbol, context, command): a data-kind attribute for the style. */
  kind?: string;
  take: () => void;
}

export class CompletionList {
  readonly el: HTMLUListElement;
  private options: CompletionOption[] = [];
  private selected = 0;

  constructor(box: HTMLTextAreaElement, id: string, label: string, className = '') {
    this.el = document.createElement('ul');
    this.el.id = id;
    this.el.className = `commands ${className}`.trim();
    this.el.setAttribute('role', 'listbox');
    this.el.setAttribute('aria-label', label);
    this.el.hidden = true;
    box.before(this.el);
    this.el.addEventListener('mousedown', (e) => {
      const li = (e.target as HTMLElement).closest<HTMLElement>('[data-option]');
      if (!li) return;
      e.preventDefault(); // the box keeps its focus
      this.options[Number(li.dataset.option)]?.take();
    });
  }

  get open(): boolean {
    return !this.el.hidden;
  }

  /** Show `options` (none: the list closes). With `keep`, the selected option stays selected
   * when it is still there (more results arrived); otherwise the first is. */
  show(options: CompletionOption[], keep = false): void {
    const key = keep ? this.options[this.selected]?.key : undefined;
    this.options = options;
    const at = key === undefined ? -1 : options.findIndex((o) => o.key === key);
    this.selected = at >= 0 ? at : 0;
    if (!options.length) return this.close();
    this.render();
    this.el.hidden = false;
  }

  private render(): void {
    this.el.replaceChildren(
      ...this.options.map((option, i) => {
        const li = document.createElement('li');
        li.className = `command${i === this.selected ? ' selected' : ''}`;
        li.dataset.option = String(i);
        if (option.kind) li.dataset.kind = option.kind;
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
    this.el.children[this.selected]?.scrollIntoView?.({ block: 'nearest' });
  }

  /** A key while the list is open: true when the list used it (the caller does nothing more). */
  onKey(e: KeyboardEvent): boolean {
    if (!this.open || !this.options.length) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      this.selected = (this.selected + step + this.options.length) % this.options.length;
      this.render();
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

  close(): void {
    this.el.hidden = true;
    this.selected = 0;
  }
}
