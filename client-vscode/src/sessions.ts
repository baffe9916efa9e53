// The session management the panel asks for (model/sessionActions.ts), through the server:
// agent/renameSession, deleteSession (after a modal confirmation), forkSession, exportSession
// (saved where the save dialog says), listSessions {query}. VS Code's dialogs come in through
// SessionDialogs, so this is unit-tested without VS Code.
import type { SessionActionMessage } from './model/sessionActions';
import type { AgentConnection, HostUi } from './hostTypes';

export type { SessionDialogs } from './hostTypes';
import type { SessionInfo } from './protocol/generated';

/** What of AgentHost this needs. */
export interface SessionsHost {
  sessions: SessionInfo[];
  activeSessionId?: string;
  refreshSessions(): Promise<void>;
  select(sessionId: string): Promise<void>;
  newSession(): Promise<string | undefined>;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A file name for the export: the title's letters and digits, at most 60 of them. */
export function exportName(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${slug || 'session'}.md`;
}

export async function sessionAction(
  host: SessionsHost,
  client: AgentConnection | undefined,
  ui: HostUi,
  action: SessionActionMessage,
): Promise<void> {
  if (!client) {
    ui.showError('agentls: the server is not running.');
    return;
  }
  const dialogs = ui.sessions;
  const title = (id: string) => host.sessions.find((s) => s.sessionId === id)?.title || 'Untitled session';
  const posted = () => ui.post({ type: 'sessions', sessions: host.sessions, activeSessionId: host.activeSessionId });
  try {
    switch (action.type) {
      case 'search-sessions': {
        const { sessions } = await client.request('agent/listSessions', { query: action.query });
        ui.post({ type: 'session-search', query: action.query, sessions: sessions.filter((s) => !s.parentId) });
        return;
      }
      case 'rename-session': {
        const name = (await dialogs?.askTitle(title(action.sessionId)))?.trim();
        if (!name) return;
        await client.request('agent/renameSession', { sessionId: action.sessionId, title: name });
        await host.refreshSessions();
        posted();
        return;
      }
      case 'delete-session': {
        if (!(await dialogs?.confirmDelete(title(action.sessionId)))) return;
        await client.request('agent/deleteSession', { sessionId: action.sessionId });
        await host.refreshSessions();
        if (host.activeSessionId === action.sessionId) {
          const next = host.sessions[0]?.sessionId;
          if (next) await host.select(next);
          else await host.newSession();
        }
        posted();
        return;
      }
      case 'fork-session': {
        const fork = await client.request('agent/forkSession', {
          sessionId: action.sessionId,
          messageId: action.messageId,
        });
        await host.refreshSessions();
        await host.select(fork.sessionId);
        return;
      }
      case 'export-session': {
        if (!dialogs) return;
        const { markdown } = await client.request('agent/exportSession', { sessionId: action.sessionId });
        await dialogs.saveMarkdown(exportName(title(action.sessionId)), markdown);
        return;
      }
    }
  } catch (err) {
    ui.showError(`agentls: ${message(err)}`);
  }
}
