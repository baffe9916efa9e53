// Long sessions: the transcript draws its newest items only (the last PAGE when a session opens),
// under an "Earlier messages" bar that brings MORE of the earlier ones in when it is scrolled
// near (or clicked), the view kept where it was. A session of 2,000 messages opens by drawing a twentieth of
// them; a streamed delta redraws only the item it changes (main.ts). Figures: docs/benchmarks.md
// (bench/panel_transcript.py).
export const PAGE = 100; // drawn when a session opens
export const MORE = 100; // drawn each time the bar comes near

export class TranscriptWindow {
  readonly bar: HTMLButtonElement;
  private start = 0;
  private session: string | undefined;

  /** `redraw` draws the transcript again at once (with the window's new start). */
  constructor(
    private readonly scroller: HTMLElement,
    private readonly redraw: () => void,
  ) {
    this.bar = document.createElement('button');
    this.bar.className = 'secondary earlier-page';
    this.bar.addEventListener('click', () => this.more());
    new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && this.more(), {
      root: scroller,
      rootMargin: '600px 0px 0px 0px',
    }).observe(this.bar);
  }

  /** The items to draw: those from the window's start on (the last PAGE of a session just
   * opened, and again once the view is back at the bottom: `atBottom`, so the earlier pages
   * drawn while reading back do not weigh on every later frame). */
  items<T>(sessionId: string, items: readonly T[], atBottom = false): readonly T[] {
    if (sessionId !== this.session || (atBottom && this.start < items.length - 2 * PAGE)) {
      this.session = sessionId;
      this.start = Math.max(0, items.length - PAGE);
    }
    this.start = Math.min(this.start, items.length);
    return this.start ? items.slice(this.start) : items;
  }

  /** The bar after `after` (or first in `parent`) while items are left out, else no bar; returns
   * what the first drawn item goes after. */
  place(parent: HTMLElement, after: Element | null): Element | null {
    if (!this.start) {
      this.bar.remove();
      return after;
    }
    this.bar.textContent = `Earlier messages (${this.start} more)`;
    const expected = after ? after.nextElementSibling : parent.firstElementChild;
    if (expected !== this.bar) {
      if (after) after.after(this.bar);
      else parent.prepend(this.bar);
    }
    return this.bar;
  }

  /** A session is drawn anew (another one, or the same reloaded). */
  reset(): void {
    this.session = undefined;
  }

  private more(): void {
    if (!this.start || !this.bar.isConnected) return;
    const height = this.scroller.scrollHeight;
    const top = this.scroller.scrollTop;
    this.start = Math.max(0, this.start - MORE);
    this.redraw();
    this.scroller.scrollTop = top + (this.scroller.scrollHeight - height); // the same messages in view
    // Still near (short messages): more on the next frame (the observer says only changes).
    if (this.start && this.near()) requestAnimationFrame(() => this.near() && this.more());
  }

  private near(): boolean {
    return this.bar.isConnected && this.bar.getBoundingClientRect().bottom >= this.scroller.getBoundingClientRect().top - 600;
  }
}
