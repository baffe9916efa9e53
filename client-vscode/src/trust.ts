// Workspace trust: the server asks before it applies a workspace config (.agentls/config.json,
// .mcp.json) whose content the user has not confirmed, and only in a trusted workspace
// (initializationOptions.agent.workspaceTrusted); elsewhere such a file only tightens. When the
// user grants trust later, the running server is told (agent/workspaceTrust) without a restart.
// No vscode import (unit-tested with any object of this shape).
import type {
  ConfirmWorkspaceConfigParams,
  ConfirmWorkspaceConfigResult,
  WorkspaceTrustParams,
} from './protocol/generated';

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
      log('agentls: the workspace is trusted now; the server asks before it applies a workspace config you have not confirmed.');
    } else {
      log('agentls: the workspace is trusted now; the server will ask about its workspace config when it starts.');
    }
  });
}

// agent/confirmWorkspaceConfig: the server found a workspace config file (.agentls/config.json,
// .mcp.json) new or changed since the user confirmed it. It does not apply until the user says
// "Apply" here: a modal shows what it enables and the change (a diff; "Show Change" opens the
// whole diff in an editor and asks again). "Keep ignoring" (or dismissing the dialog) keeps it
// ignored, and the server does not ask about that content again.
export interface ConfirmUi {
  /** A modal warning with `detail` and these buttons; the button chosen, undefined when dismissed. */
  ask(message: string, detail: string, choices: string[]): PromiseLike<string | undefined>;
  /** Open the whole diff in a read-only editor. */
  showDiff(diff: string): PromiseLike<unknown>;
}

export const APPLY = 'Apply';
export const KEEP_IGNORING = 'Keep ignoring';
export const SHOW_CHANGE = 'Show Change';
// The dialog shows this many lines of the diff; the rest is one click away (Show Change).
const DETAIL_LINES = 40;

export function confirmDetail(params: ConfirmWorkspaceConfigParams): string {
  const parts: string[] = [];
  if (params.enables.length) parts.push(['It enables:', ...params.enables.map((line) => `  ${line}`)].join('\n'));
  const lines = params.diff.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, DETAIL_LINES);
  if (lines.length > DETAIL_LINES) shown.push(`… ${lines.length - DETAIL_LINES} more lines (Show Change)`);
  parts.push(shown.join('\n'));
  parts.push(
    params.change === 'new'
      ? 'agentls ignores this file until you apply it.'
      : params.change === 'deleted'
        ? 'agentls keeps applying the content you confirmed until you apply the deletion.'
        : 'agentls keeps the content you confirmed before until you apply this one.',
  );
  return parts.join('\n\n');
}

export async function confirmWorkspaceConfig(
  params: ConfirmWorkspaceConfigParams,
  ui: ConfirmUi,
  log: (message: string) => void,
): Promise<ConfirmWorkspaceConfigResult> {
  const detail = confirmDetail(params);
  for (;;) {
    const choice = await ui.ask(params.title, detail, [APPLY, SHOW_CHANGE, KEEP_IGNORING]);
    if (choice === SHOW_CHANGE) {
      await ui.showDiff(params.diff);
      continue;
    }
    const apply = choice === APPLY;
    log(`agentls: ${apply ? 'applied' : 'kept ignoring'} ${params.file} (sha256 ${params.sha256.slice(0, 12)})`);
    return { apply };
  }
}
