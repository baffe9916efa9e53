// The questions background sessions wait on (a permission request or ask_user of a session run in
// its own worktree, agent/prompt `background: true`), when the panel shows another session: the
// panel lists them above the prompt box, labelled with their session (webview/backgroundQuestions.ts).
// A detached run's (`agentls run --background`) come in agent/listSessions' entry instead of as
// events: listed whichever session the panel shows (no transcript of this client has them).
import type { SessionInfo } from '../protocol/generated';
import type { BackgroundQuestion } from './messages';
import { pendingPermissions, type SessionView } from './transcript';

export function backgroundQuestions(
  views: Iterable<SessionView>,
  sessions: SessionInfo[],
  activeSessionId: string | undefined,
): BackgroundQuestion[] {
  const out: BackgroundQuestion[] = [];
  for (const view of views) {
    if (view.sessionId === activeSessionId) continue; // its cards are in the transcript
    const info = sessions.find((s) => s.sessionId === view.sessionId);
    if (!info?.background) continue;
    for (const item of pendingPermissions(view)) {
      const permission = item.permission;
      if (!permission) continue;
      out.push({
        sessionId: view.sessionId,
        sessionTitle: info.title || 'Background session',
        branch: info.background.branch,
        requestId: permission.requestId,
        tool: item.tool,
        title: permission.title,
        input: item.input,
        diff: permission.diff,
      });
    }
  }
  for (const info of sessions) {
    for (const question of info.background?.questions ?? []) {
      out.push({
        sessionId: info.sessionId,
        sessionTitle: info.title || 'Background session',
        branch: info.background!.branch,
        requestId: question.requestId,
        tool: question.tool,
        title: question.title,
        input: question.input,
        diff: question.diff ?? undefined,
      });
    }
  }
  return out;
}
