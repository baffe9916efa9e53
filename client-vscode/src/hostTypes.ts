// The interfaces the host (host.ts) talks to the server and to VS Code through, apart from it so
// that the modules it uses (sessions.ts) can name them without importing it back.
import type { AgentRequests, ConflictMerge, ReviewFile, RevertConflict } from './protocol/generated';
import type { CodeMessage } from './model/codeBlocks';
import type { HostMessage, MentionItem, MentionKind, MentionSearchKind } from './model/messages';
import type { SetupMessage } from './model/setup';
import type { ConflictResolved } from './model/backgroundReview';

export interface AgentConnection {
  request<M extends keyof AgentRequests>(
    method: M,
    params: AgentRequests[M]['params'],
  ): Promise<AgentRequests[M]['result']>;
}

/** What the host needs from VS Code. */
export interface HostUi {
  /** To the webview, if one is showing (dropped otherwise: it asks for the state when it loads). */
  post(message: HostMessage): void;
  showError(message: string): void;
  openDiff(requestId: string): void;
  /** The panel (re)loaded and has the state: what else it shows is sent again (approvals.ts repost). */
  panelReady?(): void;
  /** A hunk of a proposal decided from the panel's card (approvals.ts decideHunk). */
  decideHunk?(ref: { requestId: string; file: number; hunk: number }, state: 'accepted' | 'rejected' | 'pending'): void;
  /** The user's version of a proposal they edited in its diff, as agent/approve's `edit` (approvals.ts). */
  editedProposal?(requestId: string): Record<string, unknown> | undefined;
  openFile(path: string): void;
  /** What @-mentions attach (mentions.ts); without it the panel's @ completion finds nothing. */
  mentions?: {
    search(kind: MentionSearchKind, query: string): Promise<MentionItem[]>;
    item(kind: MentionKind): Promise<MentionItem | string>;
  };
  /** Rename's input box, delete's confirmation, export's save dialog (sessions.ts). */
  sessions?: SessionDialogs;
  /** The merge editor for a conflict and a reviewed file's diff (reviewAfter.ts). */
  review?: ReviewUi;
  /** A background session's kept changes that clash with the user's text (backgroundMerge.ts). */
  backgroundConflicts?: BackgroundConflictUi;
  /** Code blocks' Copy / Insert / Apply, path links, highlighting (codeActions.ts CodeActions). */
  code?: {
    sendContext(): Promise<void>;
    handle(message: CodeMessage, client: AgentConnection | undefined, activeSessionId: string | undefined): Promise<void>;
  };
  /** The set-up card's buttons: Install, Set API key, Restart, settings, the log (extension.ts). */
  setup?(message: SetupMessage): void;
}

export interface ReviewUi {
  /** A file the user changed after the agent's edit: its three versions in the merge editor. */
  openConflict(conflict: RevertConflict): Promise<void>;
  /** A file under review "after": its reviewed base against the file now. */
  openReviewDiff(file: ReviewFile): Promise<void>;
}

export interface BackgroundConflictUi {
  /** Whether VS Code's merge editor can be opened here. */
  mergeEditor(): Promise<boolean>;
  /** The conflict resolved in the merge editor (the user's file its output) or marked in the buffer. */
  resolve(merge: ConflictMerge, branch: string, how: 'merge-editor' | 'markers'): Promise<ConflictResolved>;
}

export interface SessionDialogs {
  /** The new title (undefined: cancelled). */
  askTitle(current: string): Promise<string | undefined>;
  /** Whether the user confirmed deleting the session. */
  confirmDelete(title: string): Promise<boolean>;
  /** Save the Markdown where the user picks (undefined: cancelled); where it went. */
  saveMarkdown(suggestedName: string, markdown: string): Promise<string | undefined>;
}
