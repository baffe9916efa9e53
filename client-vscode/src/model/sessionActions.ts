// The panel's session management messages (webview/sessions.ts -> sessions.ts in the extension):
// rename, delete, fork at a message, export as Markdown, and search over the session list.
import type { SessionInfo } from '../protocol/generated';

export type SessionActionMessage =
  /** The extension asks for the new title (an input box), then agent/renameSession. */
  | { type: 'rename-session'; sessionId: string }
  /** The extension asks to confirm (a modal), then agent/deleteSession. */
  | { type: 'delete-session'; sessionId: string }
  /** agent/forkSession at this message; the fork becomes the active session. */
  | { type: 'fork-session'; sessionId: string; messageId: string }
  /** agent/exportSession, written where the save dialog says. */
  | { type: 'export-session'; sessionId: string }
  /** agent/listSessions {query}; answered with `session-search`. */
  | { type: 'search-sessions'; query: string };

/** The sessions matching a search (all of them when the query has no words). */
export type SessionSearchResult = { type: 'session-search'; query: string; sessions: SessionInfo[] };

export function isSessionAction(m: Record<string, unknown>): boolean {
  switch (m.type) {
    case 'rename-session':
    case 'delete-session':
    case 'export-session':
      return typeof m.sessionId === 'string' && m.sessionId.length > 0;
    case 'fork-session':
      return typeof m.sessionId === 'string' && typeof m.messageId === 'string' && m.messageId.length > 0;
    case 'search-sessions':
      return typeof m.query === 'string' && m.query.length <= 500;
    default:
      return false;
  }
}
