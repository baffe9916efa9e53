// The session history (the title bar's History action): the workspace's sessions as a list, each
// with its title, how long ago it was used, its cost and a preview line (its last answer),
// and Rename / Export / Delete of its own; a search box that filters the list as you type (titles
// at once, then the server's full-text search of the content, agent/listSessions {query}); a click
// opens a session and goes back to the conversation. Replaces the native session dropdown, which
// had no room at the sidebar's default width.
import type { SessionActionMessage } from '../model/sessionActions';
import type { BackgroundInfo, SessionInfo } from '../protocol/generated';
import { formatCost } from '../model/transcript';
import { icon, iconButton } from './icons';

const SEARCH_DELAY_MS = 200;

type Post = (
  message: SessionActionMessage | { type: 'select-session'; sessionId: string } | { type: 'new-session' } | { type: 'background-diff'; sessionId: string },
) => void;

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

/** "5 minutes ago", "yesterday", "just now": how long ago `then` (ms) was, seen at `now`. */
export function relativeTime(then: number, now: number = Date.now()): string {
  const seconds = Math.round((then - now) / 1000);
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** The sessions whose title holds every word of the query (case-insensitive). */
export function titleMatches(sessions: SessionInfo[], query: string): SessionInfo[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return sessions.filter((s) => {
    const title = (s.title || '').toLowerCase();
    return words.every((w) => title.includes(w));
  });
}

/** A background session's line (agentls run --background, agent/prompt background): its
 * state, its branch and how many files it changed in its worktree. */
export function backgroundLine(b: BackgroundInfo): string {
  const n = b.changedFiles?.length;
  const files = n === undefined ? 'worktree gone' : n === 1 ? '1 file changed' : `${n} files changed`;
  return ['background', b.state, b.branch, files].join(' · ');
}

export class HistoryView {
  readonly el: HTMLElement;
  readonly search: HTMLInputElement;
  readonly newSession: HTMLButtonElement;
  private readonly list: HTMLUListElement;
  private readonly empty: HTMLElement;
  private sessions: SessionInfo[] = [];
  private active?: string;
  private running = false;
  private query = '';
  /** The server's matches for `query` (titles and content), once they came. */
  private results?: SessionInfo[];
  private timer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly post: Post,
    /** Shown or hidden: the panel hides the conversation meanwhile. */
    private readonly onToggle: (open: boolean) => void,
  ) {
    this.el = document.createElement('section');
    this.el.id = 'history';
    this.el.className = 'history';
    this.el.hidden = true;
    this.el.setAttribute('aria-label', 'Session history');
    const back = iconButton('arrow-left', 'Back to the conversation', () => this.close());
    back.classList.add('history-back');
    this.search = document.createElement('input');
    this.search.type = 'search';
    this.search.id = 'session-search';
    this.search.className = 'history-search';
    this.search.placeholder = 'Search sessions';
    this.search.setAttribute('aria-label', 'Search sessions by title and content');
    this.search.addEventListener('input', () => this.searchSoon());
    this.search.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      if (this.search.value) {
        this.search.value = '';
        this.searchSoon();
      } else {
        this.close();
      }
    });
    this.newSession = iconButton('add', 'New session', () => {
      this.post({ type: 'new-session' });
      this.close();
    });
    this.newSession.id = 'new-session';
    const head = document.createElement('div');
    head.className = 'history-head';
    head.append(back, this.search, this.newSession);
    this.list = document.createElement('ul');
    this.list.className = 'history-list';
    this.list.setAttribute('aria-label', 'Sessions');
    this.empty = document.createElement('p');
    this.empty.className = 'history-empty';
    this.empty.hidden = true;
    this.el.append(head, this.list, this.empty);
  }

  get open(): boolean {
    return !this.el.hidden;
  }

  show(): void {
    this.el.hidden = false;
    this.onToggle(true);
    this.render();
    this.search.focus();
  }

  close(): void {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.onToggle(false);
  }

  toggle(): void {
    if (this.open) this.close();
    else this.show();
  }

  /** The sessions, the active one, whether the server runs (actions need it). */
  set(sessions: SessionInfo[], active: string | undefined, running: boolean): void {
    this.sessions = sessions;
    this.active = active;
    this.running = running;
    if (this.open) this.render();
    else this.enable();
  }

  /** The server's matches for a query (a stale query's are dropped). */
  setResults(query: string, sessions: SessionInfo[]): void {
    if (query !== this.query) return;
    this.results = sessions;
    this.render();
  }

  /** What the list shows: with a query, the server's matches once they came (the titles that
   * match until then); else every session. A session that does not match is not shown, the
   * active one neither. */
  shown(): SessionInfo[] {
    if (!this.query) return this.sessions;
    if (!this.results) return titleMatches(this.sessions, this.query);
    // The server's copy of a session may be older than the list's (a busy flag, a new title).
    const latest = new Map(this.sessions.map((s) => [s.sessionId, s]));
    return this.results.map((s) => latest.get(s.sessionId) ?? s);
  }

  private searchSoon(): void {
    this.query = this.search.value.trim();
    this.results = undefined;
    this.render(); // the titles that match, at once
    if (this.timer) clearTimeout(this.timer);
    if (!this.query) return;
    const query = this.query;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (query === this.query) this.post({ type: 'search-sessions', query });
    }, SEARCH_DELAY_MS);
  }

  private enable(): void {
    this.search.disabled = !this.running;
    this.newSession.disabled = !this.running;
  }

  private render(): void {
    this.enable();
    const sessions = this.shown();
    this.list.replaceChildren(...sessions.map((s) => this.item(s)));
    this.empty.hidden = sessions.length > 0;
    this.empty.textContent = this.query ? `No session matches “${this.query}”.` : 'No sessions yet. Start one with New session.';
  }

  private item(info: SessionInfo): HTMLLIElement {
    const title = info.title || 'Untitled session';
    const li = document.createElement('li');
    li.className = 'history-item';
    li.dataset.sessionId = info.sessionId;
    const current = info.sessionId === this.active;
    if (current) li.classList.add('active');
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'history-open';
    open.disabled = !this.running;
    if (current) open.setAttribute('aria-current', 'true');
    const name = document.createElement('span');
    name.className = 'history-title';
    name.textContent = title;
    const meta = document.createElement('span');
    meta.className = 'history-meta';
    const when = new Date(info.updatedAt);
    meta.title = when.toLocaleString();
    meta.textContent = `${relativeTime(info.updatedAt)} · ${formatCost(info.usage?.costUsd)}`;
    const preview = document.createElement('span');
    preview.className = 'history-preview';
    // Its last answer (agent/listSessions' preview); the model and mode of one with none yet.
    preview.textContent = info.preview || [info.busy ? 'working' : '', info.mode === 'plan' ? 'plan mode' : '', info.model].filter(Boolean).join(' · ');
    preview.title = info.preview ?? '';
    if (info.busy) open.prepend(icon('loading', 'codicon-modifier-spin'));
    open.append(name, meta, preview);
    if (info.background) {
      const bg = document.createElement('span');
      bg.className = `history-background state-${info.background.state}`;
      bg.textContent = backgroundLine(info.background);
      bg.title = [info.background.worktree, info.background.reason].filter(Boolean).join('\n');
      open.append(bg);
    }
    open.addEventListener('click', () => {
      if (!current) this.post({ type: 'select-session', sessionId: info.sessionId });
      this.close();
    });
    const actions = document.createElement('div');
    actions.className = 'history-actions';
    const act = (type: 'rename-session' | 'delete-session' | 'export-session') => () => this.post({ type, sessionId: info.sessionId });
    actions.append(
      iconButton('edit', `Rename “${title}”`, act('rename-session')),
      iconButton('export', `Export “${title}” as Markdown`, act('export-session')),
      iconButton('trash', `Delete “${title}”`, act('delete-session')),
    );
    for (const b of actions.querySelectorAll('button')) b.disabled = !this.running;
    li.append(open, actions);
    if (info.background?.state === 'done') {
      // A finished background session: its branch's changes, reviewed hunk by hunk (backgroundReview.ts).
      const review = document.createElement('button');
      review.type = 'button';
      review.className = 'secondary history-review-background';
      review.textContent = 'Review changes';
      review.disabled = !this.running;
      review.addEventListener('click', () => {
        this.post({ type: 'background-diff', sessionId: info.sessionId });
        this.close();
      });
      li.classList.add('has-review');
      li.append(review);
    }
    return li;
  }
}
