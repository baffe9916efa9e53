// Inline chat on a selection (issue 29 item 1), as Copilot's Ctrl+I and Cursor's Cmd+K: a small
// prompt anchored at the selection in the editor (inlineChatWidget.ts draws it with VS Code's
// comments API), whose question runs as a turn in a session of its own with the selection as
// context. The session is stored like any other (the panel's history lists it, titled from the
// question); its edit proposal is drawn in the file's editor with Accept / Reject per hunk and all
// (approvals.ts). The thread shows the turn's progress and the model's answer. A follow-up while
// a proposal waits rejects it with the follow-up as feedback, so the model proposes again in the
// same turn; during a turn it steers the turn; after it, it is the session's next prompt. Closing
// the widget stops a running turn, except that a waiting proposal stays decidable in the editor.
// VS Code is reached only through InlineThread and InlineHost, so this is unit-tested without it.
import type { AgentEvent, ContextRef, Range } from './protocol/generated';
import type { PromptMode } from './model/messages';

/** One entry of the thread, as the widget shows it (Markdown). */
export interface InlineComment {
  author: 'you' | 'agentls';
  body: string;
}

/** The widget of one inline chat (a comment thread in the editor). */
export interface InlineThread {
  /** Show these entries (all of them, replacing what was shown). */
  show(comments: InlineComment[]): void;
  /** A turn runs (the widget offers Stop) or not. */
  setRunning(running: boolean): void;
  /** A proposal came: bring its first hunk into view (`uri`: its file, when not the thread's). */
  reveal(line: number, uri?: string): void;
  dispose(): void;
}

/** What the inline chat asks of the extension's state (host.ts). */
export interface InlineHost {
  newSession(activate: boolean): Promise<string | undefined>;
  prompt(text: string, context: ContextRef[] | undefined, mode: PromptMode, images: [], target: string): Promise<void>;
  approve(sessionId: string, requestId: string, decision: 'once' | 'always' | 'reject', feedback?: string): Promise<boolean>;
  cancel(sessionId: string): Promise<void>;
  onEvent(listener: (event: AgentEvent) => void): { dispose(): void };
}

const TOOL_WORDS: Record<string, string> = {
  read: 'Reading',
  grep: 'Searching for',
  glob: 'Listing',
  outline: 'Outlining',
};

/** A tool call as one line of progress: its title ("read calc.py"), worded ("Reading calc.py"). */
export function progressLine(tool: string, title: string): string {
  const word = TOOL_WORDS[tool];
  if (word && title.startsWith(`${tool} `)) return `${word} ${title.slice(tool.length + 1)}`;
  return title || tool;
}

const DECISIONS: Record<string, string> = {
  once: 'Accepted.',
  always: 'Accepted.',
  reject: 'Rejected.',
  timeout: 'Not answered in time.',
  cancelled: 'Cancelled.',
  unattended: 'Not asked (unattended).',
};

const ENDS: Record<string, string> = {
  cancelled: 'Stopped.',
  max_tokens: 'The answer hit the output token limit.',
  refusal: 'The model declined to go on with this request.',
  max_steps: 'The turn hit the step limit.',
  doom_loop: 'Stopped: the same tool call repeated three times in a row.',
};

interface Exchange {
  question: string;
  /** What the agent did and said, in order: its text, tool lines, proposals, notes. */
  parts: string[];
  /** The part the text deltas are appended to (undefined: the next delta starts one). */
  textPart?: number;
}

export class InlineChat {
  sessionId?: string;
  running = false;
  /** The edit proposal of this chat's session waiting for an answer (its request id). */
  waiting?: string;
  private readonly exchanges: Exchange[] = [];
  /** What was kept of a proposal answered hunk by hunk ("Kept 1 of 2 hunks."), by request id. */
  private readonly keptNotes = new Map<string, string>();
  private readonly subscription: { dispose(): void };
  private closed = false;
  private renderTimer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly host: InlineHost,
    private readonly thread: InlineThread,
    /** The selection, as the turn's context (ContextRef: a file's uri and a range). */
    readonly selection: { uri: string; range: Range },
    /** How soon streamed text is drawn (ms); 0 draws each delta at once. */
    private readonly renderDelay = 60,
  ) {
    this.subscription = host.onEvent((event) => this.onEvent(event));
    this.render();
  }

  /** Text typed into the widget's reply box. */
  async submit(text: string): Promise<void> {
    const question = text.trim();
    if (!question || this.closed) return;
    this.exchanges.push({ question, parts: [] });
    this.render();
    if (!this.sessionId) {
      // A session of its own, not the panel's active one; the server titles it from the question.
      const sessionId = await this.host.newSession(false);
      if (!sessionId) {
        this.note('The server did not create a session; try again once it runs.');
        return;
      }
      this.sessionId = sessionId;
      this.setRunning(true);
      await this.host.prompt(question, [{ uri: this.selection.uri, range: this.selection.range }], 'queue', [], sessionId);
      return;
    }
    if (this.waiting) {
      // Refine the waiting proposal: rejected with the follow-up as the user's feedback, the
      // model proposes again in the same turn (agent/approve's feedback).
      const requestId = this.waiting;
      this.note('Asked for another proposal.');
      await this.host.approve(this.sessionId, requestId, 'reject', question);
      return;
    }
    // During a turn the follow-up joins it at its next step; after it, it is the next prompt.
    const mode: PromptMode = this.running ? 'steer' : 'queue';
    this.setRunning(true);
    await this.host.prompt(question, undefined, mode, [], this.sessionId);
  }

  /** The editor's hunk lenses answered the waiting proposal: `kept` of its `total` hunks. */
  kept(requestId: string, kept: number, total: number): void {
    if (requestId === this.waiting) this.keptNotes.set(requestId, kept ? `Kept ${kept} of ${total} hunks.` : 'Rejected.');
  }

  /** Stop the running turn (the widget's Stop). A waiting proposal is rejected by the stop. */
  async stop(): Promise<void> {
    if (this.sessionId && this.running) await this.host.cancel(this.sessionId);
  }

  /** The widget is closed: a running turn stops, unless it waits on a proposal, which stays
   * decidable in the editor (its answer lets the turn finish, seen in the panel's history). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscription.dispose();
    if (this.renderTimer) clearTimeout(this.renderTimer);
    this.thread.dispose();
    if (this.sessionId && this.running && !this.waiting) await this.host.cancel(this.sessionId);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private current(): Exchange | undefined {
    return this.exchanges[this.exchanges.length - 1];
  }

  private note(text: string): void {
    const exchange = this.current();
    if (!exchange) return;
    exchange.parts.push(text);
    exchange.textPart = undefined;
    this.render();
  }

  private setRunning(running: boolean): void {
    if (this.running === running) return;
    this.running = running;
    this.thread.setRunning(running);
    this.render(); // "Working…" while nothing else is said yet
  }

  private onEvent(event: AgentEvent): void {
    if (this.closed || !this.sessionId || event.sessionId !== this.sessionId || event.parentSessionId) return;
    const exchange = this.current();
    if (!exchange) return;
    switch (event.type) {
      case 'turn-start':
        this.setRunning(true);
        return;
      case 'text-delta':
        if (exchange.textPart === undefined) {
          exchange.parts.push('');
          exchange.textPart = exchange.parts.length - 1;
        }
        exchange.parts[exchange.textPart] += event.delta;
        this.scheduleRender();
        return;
      case 'tool-call':
        if (event.tool === 'edit' || event.tool === 'write') {
          exchange.textPart = undefined; // the proposal says itself
          return;
        }
        this.note(`_${progressLine(event.tool, event.title)}…_`);
        return;
      case 'permission-request': {
        if (!event.edit && !event.diff) {
          this.note(`**Waiting for your answer** in the agentls panel: ${event.title}`);
          return;
        }
        this.waiting = event.requestId;
        const hunks = editHunks(event.edit);
        const line = firstEditLine(event.edit);
        const file = firstEditUri(event.edit);
        this.note(
          `**Proposed:** ${event.title}${hunks > 1 ? ` (${hunks} hunks)` : ''}. ` +
            `Accept or Reject ${hunks > 1 ? 'each hunk, or all,' : 'it'} in the editor; or type what to change and the agent proposes again.`,
        );
        if (line !== undefined) this.thread.reveal(line, file !== this.selection.uri ? file : undefined);
        return;
      }
      case 'permission-resolved':
        if (event.requestId === this.waiting) {
          this.waiting = undefined;
          const kept = event.decision === 'once' ? this.keptNotes.get(event.requestId) : undefined;
          this.keptNotes.delete(event.requestId);
          this.note(kept ?? DECISIONS[event.decision] ?? event.decision);
        }
        return;
      case 'error':
        this.note(`**${event.message}**${event.nextStep ? ` ${event.nextStep}` : ''}`);
        return;
      case 'turn-end':
        this.waiting = undefined;
        this.setRunning(false);
        if (ENDS[event.finishReason]) this.note(ENDS[event.finishReason]);
        else this.render();
        return;
      default:
        return;
    }
  }

  private scheduleRender(): void {
    if (!this.renderDelay) {
      this.render();
      return;
    }
    this.renderTimer ??= setTimeout(() => {
      this.renderTimer = undefined;
      this.render();
    }, this.renderDelay);
  }

  /** The thread as shown: each question, then what the agent did and said. */
  comments(): InlineComment[] {
    const out: InlineComment[] = [];
    for (const [i, exchange] of this.exchanges.entries()) {
      out.push({ author: 'you', body: exchange.question });
      const parts = exchange.parts.map((p) => p.trim()).filter(Boolean);
      const last = i === this.exchanges.length - 1;
      if (!parts.length && last && this.running) parts.push('_Working…_');
      if (parts.length) out.push({ author: 'agentls', body: parts.join('\n\n') });
    }
    return out;
  }

  private render(): void {
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    if (!this.closed) this.thread.show(this.comments());
  }
}

interface WireTextEdit {
  range?: { start?: { line?: number } };
  /** The document the edit is of (set here, from its TextDocumentEdit or its changes key). */
  uri?: string;
}

/** The TextEdits of a proposal's WorkspaceEdit (one per hunk), each with its document's uri. */
function textEdits(edit: unknown): WireTextEdit[] {
  if (typeof edit !== 'object' || edit === null) return [];
  const out: WireTextEdit[] = [];
  const { documentChanges, changes } = edit as { documentChanges?: unknown[]; changes?: Record<string, unknown[]> };
  for (const change of documentChanges ?? []) {
    const { edits, textDocument } = change as { edits?: unknown[]; textDocument?: { uri?: string } };
    if (Array.isArray(edits)) out.push(...(edits as WireTextEdit[]).map((e) => ({ ...e, uri: textDocument?.uri })));
  }
  for (const [uri, edits] of Object.entries(changes ?? {})) {
    if (Array.isArray(edits)) out.push(...(edits as WireTextEdit[]).map((e) => ({ ...e, uri })));
  }
  return out;
}

/** The file of a proposal's first TextEdit (undefined: no edit to read it from). */
export function firstEditUri(edit: unknown): string | undefined {
  return textEdits(edit).find((e) => typeof e.uri === 'string')?.uri;
}

/** How many hunks a proposal has (its TextEdits; at least one). */
export function editHunks(edit: unknown): number {
  return Math.max(textEdits(edit).length, 1);
}

/** The 0-based line of a proposal's first hunk (undefined: no edit to read it from). */
export function firstEditLine(edit: unknown): number | undefined {
  const lines = textEdits(edit)
    .map((e) => e.range?.start?.line)
    .filter((l): l is number => typeof l === 'number');
  return lines.length ? Math.min(...lines) : undefined;
}
