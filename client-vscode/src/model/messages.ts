// Messages between the extension and its webview panel (both directions), as plain JSON.
import type { CardHunk, HunkState } from '../reviewHunks';
import { isSessionAction, type SessionActionMessage, type SessionSearchResult } from './sessionActions';
import { isCheckpointMessage, type CheckpointMessage, type CheckpointResult } from './checkpoints';
import { isBackgroundReviewMessage, type BackgroundReviewMessage, type BackgroundReviewResult } from './backgroundReview';
import type { AgentEvent, CommandInfo, ContextRef, McpServerInfo, SessionInfo, TextRef } from '../protocol/generated';
import type { SessionView } from './transcript';
import type { ModelEntry } from '../protocol/generated';
import { isSetupMessage, type SetupHostMessage, type SetupMessage, type SetupState } from './setup';
import { isCodeMessage, type CodeHostMessage, type CodeMessage } from './codeBlocks';

export type ConnectionStatus = 'starting' | 'running' | 'restarting' | 'stopped';

export interface PanelState {
  connection: ConnectionStatus;
  /** Why the server is not running, when it is not. */
  connectionMessage?: string;
  sessions: SessionInfo[];
  activeSessionId?: string;
  view?: SessionView;
  /** The proposed edits waiting for review, in every session. */
  proposals?: ProposalEntry[];
  /** The questions background sessions other than the active one wait on (backgroundQuestions.ts). */
  backgroundQuestions?: BackgroundQuestion[];
  /** The server's install, while there is no server to start (model/setup.ts). */
  setup?: SetupState;
}

/** Extension -> webview. */
export type HostMessage =
  /** The models (agent/listModels) and the workspace's choice, after the panel asked (list-models). */
  | { type: 'models'; models: ModelEntry[]; current?: string; defaultModel?: string }
  /** Everything, after the webview (re)loads or the active session changes. */
  | { type: 'state'; state: PanelState }
  /** One event of the active session, applied with the same reducer as the extension's. */
  | { type: 'event'; event: AgentEvent }
  | { type: 'prompt-sent'; sessionId: string; text: string; context?: string[]; steer?: boolean; images?: string[] }
  | { type: 'prompt-failed'; sessionId: string; text: string; message: string }
  | { type: 'sessions'; sessions: SessionInfo[]; activeSessionId?: string }
  | { type: 'focus-prompt'; text?: string }
  /** A waiting proposal's hunks, and what the user decided for each so far (approvals.ts); after
   * it was answered hunk by hunk, how many were kept (webview/proposals.ts). */
  | { type: 'proposal-hunks'; requestId: string; hunks: CardHunk[] }
  | { type: 'proposal-kept'; requestId: string; kept: number; total: number }
  /** A selection for the prompt box, as a chip (webview/selectionChip.ts; nothing is sent): which
   * session its prompt goes to by default (agentls.selectionSession). */
  | { type: 'add-selection'; item: MentionItem; session: 'current' | 'new' }
  /** The proposed edits waiting for review, in every session (the panel's "Waiting for review"). */
  | { type: 'proposals'; proposals: ProposalEntry[] }
  /** The questions background sessions wait on (webview/backgroundQuestions.ts). */
  | { type: 'background-questions'; questions: BackgroundQuestion[] }
  /** The MCP servers (agent/mcpStatus), after the panel asked (mcp-status). */
  | { type: 'mcp'; servers: McpServerInfo[] }
  /** The /commands (agent/listCommands), after the panel asked (list-commands). */
  | { type: 'commands'; commands: CommandInfo[] }
  /** @-mentions (webview/mentions.ts): the files or symbols matching a query, or one item. */
  | { type: 'mention-results'; kind: MentionSearchKind; query: string; items: MentionItem[] }
  | { type: 'mention-item'; item?: MentionItem; error?: string }
  /** Restore, Redo and review "after" (model/checkpoints.ts). */
  | CheckpointResult
  /** A background session's review card (model/backgroundReview.ts). */
  | BackgroundReviewResult
  | SessionSearchResult
  /** Code blocks' theme and grammars (model/codeBlocks.ts). */
  | CodeHostMessage
  /** The set-up card and the History action (model/setup.ts). */
  | SetupHostMessage;

/** A proposed edit waiting for an answer (webview/proposals.ts lists them; a click opens its diff). */
export interface ProposalEntry {
  sessionId: string;
  sessionTitle?: string;
  requestId: string;
  title: string;
  /** The file it changes, as the tool call named it. */
  path?: string;
}

/** A question (a permission request or ask_user) of a background session the panel does not show:
 * answered from a labelled card in the panel (webview/backgroundQuestions.ts). */
export interface BackgroundQuestion {
  sessionId: string;
  sessionTitle: string;
  branch: string;
  requestId: string;
  tool: string;
  /** The permission's title (what it would do). */
  title: string;
  input: Record<string, unknown>;
  diff?: string;
}

/** An @-mention's context item, as its chip shows it. */
export interface MentionItem {
  label: string;
  detail?: string;
  ref: ContextRef | TextRef;
  /** What the prompt says in the mention's place (a file's workspace path, a symbol's name);
   * the label when there is none. */
  name?: string;
}
export type MentionSearchKind = 'file' | 'symbol';
export type MentionKind = 'selection' | 'problems' | 'terminal' | 'git';

function isMentionRefs(value: unknown): boolean {
  return (
    value === undefined ||
    (Array.isArray(value) &&
      value.every(
        (r) =>
          typeof r === 'object' &&
          r !== null &&
          (typeof r.uri === 'string' || (r.type === 'text' && typeof r.label === 'string' && typeof r.text === 'string')),
      ))
  );
}

/** An image pasted or dropped into the prompt box (base64 data). */
export interface PromptImage {
  mimeType: string;
  data: string;
}

function isPromptImages(value: unknown): boolean {
  return (
    value === undefined ||
    (Array.isArray(value) &&
      value.every((i) => typeof i === 'object' && i !== null && typeof i.mimeType === 'string' && typeof i.data === 'string'))
  );
}

export type ApproveDecision = 'once' | 'always' | 'reject';
export type PromptMode = 'queue' | 'steer';
export type SessionMode = 'build' | 'plan';
/** Where an "always" is kept: this session, or every later session of the workspace. */
export type ApproveScope = 'session' | 'project';

/** Webview -> extension. */
export type PanelMessage =
  | { type: 'ready' }
  /** Ask for the models (answered with `models`); the workspace's model from now on, and the
   * active session's (agent/setModel). */
  | { type: 'list-models' }
  | { type: 'set-model'; model: string }
  /** mode 'steer': added to the running turn at its next step (agent/prompt mode "steer"). */
  /** newSession: in a new session (a selection's chip asked for one: webview/selectionChip.ts). */
  | { type: 'prompt'; text: string; mode?: PromptMode; images?: PromptImage[]; context?: (ContextRef | TextRef)[]; newSession?: boolean }
  /** "Run in background": a new session in its own git worktree and branch (agent/prompt background). */
  | { type: 'prompt-background'; text: string }
  /** The active session's mode (agent/setMode). */
  | { type: 'set-mode'; mode: SessionMode }
  | { type: 'cancel' }
  /** Run the active session's failed last turn again from where it failed (agent/retry). */
  | { type: 'retry' }
  | { type: 'new-session' }
  | { type: 'select-session'; sessionId: string }
  | {
      type: 'approve';
      sessionId: string;
      requestId: string;
      decision: ApproveDecision;
      feedback?: string;
      scope?: ApproveScope;
    }
  | { type: 'open-diff'; requestId: string }
  /** Accept or reject one hunk of a proposal from its card (or undecide it: 'pending'). */
  | { type: 'decide-hunk'; requestId: string; file: number; hunk: number; state: HunkState }
  | { type: 'open-file'; path: string }
  /** Ask for the MCP servers' state (answered with an `mcp` message). */
  | { type: 'mcp-status' }
  /** Ask for the /commands (answered with a `commands` message). */
  | { type: 'list-commands' }
  /** @file / @symbol completion (answered with `mention-results`). */
  | { type: 'mention-search'; kind: MentionSearchKind; query: string }
  /** @selection, @problems, @terminal, @git (answered with `mention-item`). */
  | { type: 'mention'; kind: MentionKind }
  /** Rename, delete, fork, export, search (model/sessionActions.ts). */
  | SessionActionMessage
  /** Restore, Redo and review "after" (model/checkpoints.ts). */
  | CheckpointMessage
  | BackgroundReviewMessage
  /** Code blocks' Copy / Insert / Apply, path links, grammars (model/codeBlocks.ts). */
  | CodeMessage
  /** Install, Set API key, Restart, settings, the log (model/setup.ts). */
  | SetupMessage;

export function isPanelMessage(value: unknown): value is PanelMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'list-models':
    case 'cancel':
    case 'retry':
    case 'new-session':
    case 'mcp-status':
    case 'list-commands':
      return true;
    case 'prompt':
      return (
        typeof m.text === 'string' && (m.mode === undefined || m.mode === 'queue' || m.mode === 'steer') && isPromptImages(m.images) &&
        isMentionRefs(m.context) && (m.newSession === undefined || typeof m.newSession === 'boolean')
      );
    case 'prompt-background':
      return typeof m.text === 'string';
    case 'mention-search':
      return (m.kind === 'file' || m.kind === 'symbol') && typeof m.query === 'string';
    case 'mention':
      return m.kind === 'selection' || m.kind === 'problems' || m.kind === 'terminal' || m.kind === 'git';
    case 'set-model':
      return typeof m.model === 'string' && m.model.length > 0;
    case 'set-mode':
      return m.mode === 'build' || m.mode === 'plan';
    case 'select-session':
      return typeof m.sessionId === 'string';
    case 'approve':
      return (
        typeof m.sessionId === 'string' &&
        typeof m.requestId === 'string' &&
        (m.decision === 'once' || m.decision === 'always' || m.decision === 'reject') &&
        (m.feedback === undefined || typeof m.feedback === 'string') &&
        (m.scope === undefined || m.scope === 'session' || m.scope === 'project')
      );
    case 'open-diff':
      return typeof m.requestId === 'string';
    case 'decide-hunk':
      return (
        typeof m.requestId === 'string' && Number.isInteger(m.file) && Number.isInteger(m.hunk) &&
        (m.state === 'accepted' || m.state === 'rejected' || m.state === 'pending')
      );
    case 'open-file':
      return typeof m.path === 'string';
    default:
      return isSessionAction(m) || isCheckpointMessage(m) || isBackgroundReviewMessage(m) || isCodeMessage(m) || isSetupMessage(m);
  }
}
