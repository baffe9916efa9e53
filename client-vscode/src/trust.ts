// Workspace trust: the server applies the workspace's .agentls/config.json in full only in a
// trusted workspace (initializationOptions.agent.workspaceTrusted). When the user grants trust
// later, the running server is told (agent/workspaceTrust) and applies it without a restart.
// No vscode import (unit-tested with any object of this shape).
import type { WorkspaceTrustParams } from './protocol/generated';

export interface TrustEvents {
  readonly isTrusted: boolean;
  onDidGrantWorkspaceTrust(listener: () => unknown): { dispose(): unknown };
}

/**
 * On a grant of trust, `notify` the server (it returns false when no server is running: the next
 * start passes isTrusted anyway) and log what happened.
 */
export function watchWorkspaceTrust(
  workspace: TrustEvents,
  notify: (params: WorkspaceTrustParams) => boolean,
  log: (message: string) => void,
): { dispose(): unknown } {
  return workspace.onDidGrantWorkspaceTrust(() => {
    if (notify({ trusted: true })) {
      log('agentls: the workspace is trusted now; the server applies its .agentls/config.json in full.');
    } else {
      log('agentls: the workspace is trusted now; the server will apply its .agentls/config.json when it starts.');
    }
  });
}
