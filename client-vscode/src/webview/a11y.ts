// Accessibility of the panel: the live region that reads each finished block of the answer to a
// screen reader (once, politely: not per delta). Every control's label is checked by
// test/browser/a11y.test.ts against Chromium's accessibility tree.
import type { SessionView } from '../model/transcript';

/** The assistant text blocks of the view that are finished and not announced yet (marked in
 * `announced`). A block is finished once something follows it or the turn ended. */
export function finishedBlocks(view: SessionView, announced: Set<string>): string[] {
  const out: string[] = [];
  view.items.forEach((item, i) => {
    if (item.kind !== 'text' || announced.has(item.id)) return;
    const last = i === view.items.length - 1;
    if (last && view.busy) return;
    announced.add(item.id);
    if (item.text.trim()) out.push(item.text.trim());
  });
  return out;
}

const KEEP = 20; // the region keeps the last few messages, not the whole conversation

export class Announcer {
  private readonly announced = new Set<string>();
  private session?: string;

  constructor(readonly region: HTMLElement) {}

  /** A view sent whole (history, a reload): its finished blocks are not read; the one streaming
   * now still is, when it finishes. */
  prime(view: SessionView | undefined): void {
    if (view?.sessionId !== this.session) this.announced.clear();
    this.session = view?.sessionId;
    if (view) finishedBlocks(view, this.announced);
  }

  /** After an event: one message in the live region per block that finished. */
  update(view: SessionView): void {
    if (view.sessionId !== this.session) this.prime(view);
    for (const text of finishedBlocks(view, this.announced)) {
      const p = document.createElement('p');
      p.textContent = text;
      this.region.append(p);
      while (this.region.childElementCount > KEEP) this.region.firstElementChild?.remove();
    }
  }
}
