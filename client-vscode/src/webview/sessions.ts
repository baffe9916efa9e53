// Session management in the panel's header: a search box over the session list (the server's
// FTS5 search, agent/listSessions {query}), Rename, Delete (the extension confirms) and Export
// (as Markdown, where the save dialog says) of the active session; and the Fork button on an
// answer (a new session with the history up to that message).
import type { SessionActionMessage } from '../model/sessionActions';
import type { SessionInfo } from '../protocol/generated';

const SEARCH_DELAY_MS = 200;

function button(label: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.className = 'secondary session-action';
  b.type = 'button';
  b.textContent = text;
  b.title = label;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

export class SessionTools {
  readonly search: HTMLInputElement;
  readonly buttons: HTMLButtonElement[];
  private query = '';
  private results?: SessionInfo[];
  private timer?: ReturnType<typeof setTimeout>;

  constructor(
    select: HTMLSelectElement,
    private readonly post: (message: SessionActionMessage) => void,
    private readonly active: () => string | undefined,
    private readonly rerender: () => void,
  ) {
    this.search = document.createElement('input');
    this.search.type = 'search';
    this.search.id = 'session-search';
    this.search.className = 'session-search';
    this.search.placeholder = 'Search sessions';
    this.search.setAttribute('aria-label', 'Search sessions by title and content');
    this.search.addEventListener('input', () => this.searchSoon());
    this.search.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.search.value) {
        e.preventDefault();
        this.search.value = '';
        this.searchSoon();
      }
    });
    const act = (type: 'rename-session' | 'delete-session' | 'export-session') => () => {
      const sessionId = this.active();
      if (sessionId) this.post({ type, sessionId });
    };
    this.buttons = [
      button('Rename session', 'Rename', act('rename-session')),
      button('Delete session', 'Delete', act('delete-session')),
      button('Export session as Markdown', 'Export', act('export-session')),
    ];
    select.before(this.search);
    select.after(...this.buttons);
  }

  private searchSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.query = this.search.value.trim();
      if (!this.query) {
        this.results = undefined;
        this.rerender();
        return;
      }
      this.post({ type: 'search-sessions', query: this.query });
    }, SEARCH_DELAY_MS);
  }

  /** The sessions the list shows: a search's matches while there is one (and the active
   * session, which the list always shows), else all. */
  shown(sessions: SessionInfo[]): SessionInfo[] {
    if (!this.query || !this.results) return sessions;
    const id = this.active();
    const active = sessions.find((s) => s.sessionId === id);
    return active && !this.results.some((s) => s.sessionId === id) ? [active, ...this.results] : this.results;
  }

  /** The server's matches for a query (a stale query's are dropped). */
  setResults(query: string, sessions: SessionInfo[]): void {
    if (query !== this.query) return;
    this.results = sessions;
    this.rerender();
  }

  enable(running: boolean, hasSession: boolean): void {
    this.search.disabled = !running;
    for (const b of this.buttons) b.disabled = !running || !hasSession;
  }
}

/** The Fork button of an answer: a new session with the history up to this message. */
export function forkButton(
  sessionId: string,
  messageId: string,
  post: (message: SessionActionMessage) => void,
): HTMLButtonElement {
  const b = button('Fork: a new session from here', 'Fork', () => post({ type: 'fork-session', sessionId, messageId }));
  // The label is drawn by CSS (.fork::before): the answer's text stays only its text (copy, tests).
  b.textContent = '';
  b.classList.add('fork');
  return b;
}
