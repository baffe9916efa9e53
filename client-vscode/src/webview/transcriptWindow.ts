// Long sessions: the transcript draws its newest items only (the last PAGE when a session opens),
// under an "Earlier messages" bar that brings MORE of the earlier ones in when it is scrolled
// near (or clicked), the view kept where it was. The earlier ones are drawn here, a page at a
// time, each page in a container of its own: drawing one is a frame's work however many are
// drawn already (the transcript lays out a few pages, not thousands of items). Back at the
// bottom, they are let go again. A session of 2,000 messages opens by drawing a twentieth of them;
// a streamed delta redraws only the item it changes (main.ts). Figures: docs/benchmarks.md
// (bench/panel_transcript.py).
export const PAGE = 100; // drawn by the transcript when a session opens
export const MORE = 25; // drawn here each time the bar comes near: a frame's work

export class TranscriptWindow<T> {
  readonly bar: HTMLButtonElement;
  /** The transcript draws the items from `start` on. */
  private start = 0;
  /** The items from `drawnFrom` to `start` are drawn here, in `pages` (oldest first). */
  private drawnFrom = 0;
  private pages: HTMLElement[] = [];
  private items: readonly T[] | undefined;
  private view: object | undefined;

  /** `draw` makes one earlier item's element, as the transcript draws it. */
  constructor(
    private readonly scroller: HTMLElement,
    private readonly draw: (item: T) => HTMLElement,
  ) {
    this.bar = document.createElement('button');
    this.bar.className = 'secondary earlier-page';
    this.bar.addEventListener('click', () => this.more());
    new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && this.more(), {
      root: scroller,
      rootMargin: '600px 0px 0px 0px',
    }).observe(this.bar);
  }

  /** The items the transcript draws of `view`: the last PAGE of a view just shown (a session
   * opened, or the same given anew), and again once the view is back at the bottom
   * (`atBottom`), so the earlier pages drawn while reading back do not weigh on every frame. */
  shown(view: object, items: readonly T[], atBottom = false): readonly T[] {
    if (view !== this.view || (atBottom && (this.pages.length > 0 || this.start < items.length - 2 * PAGE))) {
      this.view = view;
      this.start = Math.max(0, items.length - PAGE);
      this.drawnFrom = this.start;
      for (const page of this.pages) page.remove();
      this.pages = [];
    }
    this.items = items; // the same items, or these less a failed step's (a turn's end, a retry)
    this.start = Math.min(this.start, items.length);
    this.drawnFrom = Math.min(this.drawnFrom, this.start);
    return this.start ? items.slice(this.start) : items;
  }

  /** The bar (while items are left out) and the pages drawn here, after `after` (or first in
   * `parent`); returns what the transcript's first item goes after. */
  place(parent: HTMLElement, after: Element | null): Element | null {
    let previous = after;
    const put = (el: Element): void => {
      const expected = previous ? previous.nextElementSibling : parent.firstElementChild;
      if (expected !== el) {
        if (previous) previous.after(el);
        else parent.prepend(el);
      }
      previous = el;
    };
    if (this.drawnFrom) {
      this.bar.textContent = `Earlier messages (${this.drawnFrom} more)`;
      put(this.bar);
    } else {
      this.bar.remove();
    }
    for (const page of this.pages) put(page);
    return previous;
  }

  /** The page before the first drawn, drawn and put under the bar, the view kept in place. */
  private more(): void {
    const items = this.items;
    if (!items || !this.drawnFrom || !this.bar.isConnected) return;
    const height = this.scroller.scrollHeight;
    const top = this.scroller.scrollTop;
    const from = Math.max(0, this.drawnFrom - MORE);
    const page = document.createElement('div');
    page.className = 'earlier-items';
    page.append(...items.slice(from, this.drawnFrom).map((item) => this.draw(item)));
    this.bar.after(page);
    this.pages.unshift(page);
    this.drawnFrom = from;
    if (from) this.bar.textContent = `Earlier messages (${from} more)`;
    else this.bar.remove();
    this.scroller.scrollTop = top + (this.scroller.scrollHeight - height); // the same messages in view
    // Still near (short messages): more on the next frame (the observer says only changes).
    if (this.drawnFrom && this.near()) requestAnimationFrame(() => this.near() && this.more());
  }

  private near(): boolean {
    return this.bar.isConnected && this.bar.getBoundingClientRect().bottom >= this.scroller.getBoundingClientRect().top - 600;
  }
}
