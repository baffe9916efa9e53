// The extension's state and its answers to the panel: the sessions of this workspace, a view of
// each one seen, the active session, and what each panel message asks of the server. It talks to
// the server and to VS Code only through the interfaces below, so it is unit-tested without either.
import type {
  AgentEvent,
  ApproveParams,
  ContextRef,
  McpServerInfo,
  SessionInfo,
  TextRef,
} from './protocol/generated';
import type { BackgroundQuestion, ConnectionStatus, ProposalEntry, MentionItem, MentionKind, MentionSearchKind, PanelMessage, PanelState, PromptImage, PromptMode, SessionMode } from './model/messages';
import {
  applyEvent,
  connectionLost,
  contextLabel,
  emptyView,
  notice,
  pendingPermissions,
  promptFailed,
  promptSent,
  viewFromMessages,
  type SessionView,
  type ToolItem,
} from './model/transcript';
import { loadSubAgents, viewSessionOf } from './model/subagents';
import { ModelChoice } from './modelChoice';
import type { AgentConnection, HostUi } from './hostTypes';
import { sessionAction } from './sessions';
import { Checkpoints } from './checkpoints';
import { backgroundReview } from './backgroundReview';
import { backgroundQuestions } from './model/backgroundQuestions';
import type { SetupState } from './model/setup';

export type { AgentConnection, HostUi } from './hostTypes';

export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const ACTIVE_KEY = 'agentls.activeSessionId';

export interface HostStatus {
  connection: ConnectionStatus;
  busy: boolean;
  /** The session the panel shows runs a turn: what Stop (the view's title, Escape) stops. */
  activeBusy?: boolean;
  runningTool?: string;
  waitingForApproval: number;
  costUsd?: number;
  /** The API key the chosen model's provider lacks (its environment variable). */
  missingKey?: string;
  /** Where the server's install stands, while there is none to start (the set-up card's phase). */
  setup?: SetupState['phase'];
}

/** How often the session list is asked again while a background session runs or waits. */
const BACKGROUND_POLL_MS = 3000;

export class AgentHost {
  readonly views = new Map<string, SessionView>();
  sessions: SessionInfo[] = [];
  /** Sessions started here with "Run in background", before the session list has them. */
  private readonly startedInBackground = new Set<string>();
  /** The MCP servers, as the last agent/mcpStatus said (asked by the panel). */
  mcpServers: McpServerInfo[] = [];
  /** The model picker: the server's models and the workspace's choice (modelChoice.ts). */
  readonly models: ModelChoice;
  activeSessionId?: string;
  connection: ConnectionStatus = 'starting';
  connectionMessage?: string;
  /** The server's install, while there is none to start (server.ts; the panel's set-up card). */
  setup?: SetupState;
  private client?: AgentConnection;
  private readonly loading = new Set<string>();
  /** Sessions whose view has their whole history (loaded, or created here), not just recent events. */
  private readonly complete = new Set<string>();
  private readonly changeListeners = new Set<() => void>();
  private readonly eventListeners = new Set<(event: AgentEvent) => void>();
  private refreshTimer?: ReturnType<typeof setTimeout>;
  /** The next look at the session list while a detached background run (`agentls run
   * --background`) lives: its questions come in the list, not as events. */
  private pollTimer?: ReturnType<typeof setTimeout>;
  /** Restore, Redo and review "after" (checkpoints.ts). */
  readonly checkpoints: Checkpoints;

  constructor(
    private readonly ui: HostUi,
    private readonly memory: KeyValueStore,
  ) {
    this.activeSessionId = memory.get<string>(ACTIVE_KEY);
    this.models = new ModelChoice(memory);
    this.checkpoints = new Checkpoints(this, ui);
  }

  // ---- wiring -------------------------------------------------------------------------

  /** Called on every state change worth a status-bar update (not on every text delta). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.changeListeners.add(listener);
    return { dispose: () => this.changeListeners.delete(listener) };
  }

  /** Every agent/event, after the host applied it. */
  onEvent(listener: (event: AgentEvent) => void): { dispose(): void } {
    this.eventListeners.add(listener);
    return { dispose: () => this.eventListeners.delete(listener) };
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  get activeView(): SessionView | undefined {
    return this.activeSessionId ? this.views.get(this.activeSessionId) : undefined;
  }

  panelState(): PanelState {
    return {
      connection: this.connection,
      connectionMessage: this.connectionMessage,
      sessions: this.sessions,
      activeSessionId: this.activeSessionId,
      view: this.activeView,
      proposals: this.proposals(),
      backgroundQuestions: this.backgroundQuestions(),
      setup: this.setup,
    };
  }

  /** The install's state changed (undefined: nothing to set up). */
  setSetup(setup: SetupState | undefined): void {
    this.setup = setup;
    this.ui.post({ type: 'setup', setup });
    this.changed();
  }

  /** A provider's key was set: the models (their "no key" marks) and the status bar anew. */
  async keysChanged(): Promise<void> {
    const models = await this.models.refresh(this.client);
    if (models) this.ui.post(models);
    this.changed();
  }

  status(): HostStatus {
    const view = this.activeView;
    let waiting = 0;
    for (const v of this.views.values()) waiting += pendingPermissions(v).length;
    const busyView = view?.busy ? view : [...this.views.values()].find((v) => v.busy);
    return {
      connection: this.connection,
      busy: !!busyView,
      activeBusy: !!view?.busy,
      runningTool: busyView?.runningTool,
      waitingForApproval: waiting,
      costUsd: view?.usage.session.costUsd,
      missingKey: this.models.missingKey(),
      ...(this.setup && this.connection !== 'running' ? { setup: this.setup.phase } : {}),
    };
  }

  /** The request of a pending permission, wherever it is. */
  findPermission(requestId: string): { view: SessionView; item: ToolItem } | undefined {
    for (const view of this.views.values()) {
      for (const item of view.items) {
        if (item.kind === 'tool' && item.permission?.requestId === requestId) return { view, item };
      }
    }
    return undefined;
  }

  // ---- the connection -----------------------------------------------------------------

  /** The server is up (first start or a restart): load the sessions and the active one. */
  async connected(client: AgentConnection): Promise<void> {
    this.client = client;
    this.connection = 'running';
    this.connectionMessage = undefined;
    try {
      await this.refreshSessions();
      const known = new Set(this.sessions.map((s) => s.sessionId));
      if (!this.activeSessionId || !known.has(this.activeSessionId)) {
        await this.setActive(this.sessions[0]?.sessionId);
      }
      if (this.activeSessionId) await this.load(this.activeSessionId);
    } catch (err) {
      this.ui.showError(`agentls: could not load the sessions: ${errorText(err)}`);
    }
    this.postState();
    this.changed();
  }

  /** The server stopped (it may be restarting). */
  disconnected(status: 'restarting' | 'stopped', message: string): void {
    this.client = undefined;
    this.connection = status;
    this.connectionMessage = message;
    for (const view of this.views.values()) connectionLost(view, message);
    this.loading.clear();
    this.postState();
    this.changed();
  }

  handleEvent(event: AgentEvent): void {
    const id = viewSessionOf(event); // a sub-agent's event goes in its task card
    if (this.loading.has(id)) return; // the history being loaded already reflects it
    let view = this.views.get(id);
    if (!view) {
      view = emptyView(id);
      this.views.set(id, view);
    }
    applyEvent(view, event);
    this.checkpoints.onEvent(event);
    if (id === this.activeSessionId) this.ui.post({ type: 'event', event });
    for (const listener of this.eventListeners) listener(event);
    if (event.type === 'turn-start' || event.type === 'turn-end') this.scheduleRefresh();
    if (event.type === 'permission-request' || event.type === 'permission-resolved' || event.type === 'turn-end') {
      // A background session's question: the panel's labelled card, its history entry "waiting".
      this.ui.post({ type: 'background-questions', questions: this.backgroundQuestions() });
      this.postProposals();
      // Its state (waiting) and, for a session the list does not have yet (its first question may
      // come before the list that has it), its card: from the list the refresh brings.
      if (this.isBackground(id) || !this.sessions.some((s) => s.sessionId === id)) this.scheduleRefresh();
    }
    if (event.type !== 'text-delta' && event.type !== 'thinking-delta') this.changed();
  }

  // ---- what the panel (and the commands) ask for --------------------------------------

  async handlePanelMessage(message: PanelMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.postState();
        this.ui.panelReady?.(); // the proposal cards' hunks (approvals.ts)
        void this.ui.code?.sendContext(); // the code blocks' theme, the workspace folder
        return;
      case 'list-models': {
        const models = await this.models.refresh(this.client);
        if (models) this.ui.post(models);
        this.changed();
        return;
      }
      case 'set-model':
        await this.setModel(message.model);
        return;
      case 'prompt':
        if (message.newSession && !(await this.newSession())) return;
        await this.prompt(message.text, message.context, message.mode, message.images);
        return;
      case 'prompt-background':
        await this.promptBackground(message.text);
        return;
      case 'set-mode':
        await this.setMode(message.mode);
        return;
      case 'cancel':
        await this.cancel();
        return;
      case 'retry':
        await this.retry();
        return;
      case 'new-session':
        await this.newSession();
        return;
      case 'select-session':
        await this.select(message.sessionId);
        return;
      case 'approve': {
        // Accepted from the panel: a proposal the user edited in its diff goes as their version.
        const edit = message.decision !== 'reject' ? this.ui.editedProposal?.(message.requestId) : undefined;
        if (edit && message.decision === 'always') {
          // "Always" allows the agent's edits, never silently in place of the user's own version.
          this.ui.showError('agentls: you edited this proposal: accept your version once (Allow once), or undo your changes first.');
          return;
        }
        await this.approve(message.sessionId, message.requestId, message.decision, message.feedback, message.scope, edit);
        // A detached run's question leaves with the next list (no permission-resolved event comes).
        if (this.isBackground(message.sessionId)) this.scheduleRefresh();
        return;
      }
      case 'decide-hunk':
        this.ui.decideHunk?.({ requestId: message.requestId, file: message.file, hunk: message.hunk }, message.state);
        return;
      case 'open-diff':
        this.ui.openDiff(message.requestId);
        return;
      case 'open-file':
        this.ui.openFile(message.path);
        return;
      case 'load-grammar':
      case 'copy-code':
      case 'insert-code':
      case 'apply-code':
      case 'open-path':
        await this.ui.code?.handle(message, this.client, this.activeSessionId); // codeActions.ts
        return;
      case 'install-server':
      case 'set-api-key':
      case 'restart-server':
      case 'open-settings':
      case 'show-log':
        this.ui.setup?.(message);
        return;
      case 'mcp-status':
        await this.refreshMcp();
        return;
      case 'list-commands':
        await this.refreshCommands();
        return;
      case 'mention-search':
        await this.mentionSearch(message.kind, message.query);
        return;
      case 'mention':
        await this.mention(message.kind);
        return;
      case 'rename-session':
      case 'delete-session':
      case 'fork-session':
      case 'export-session':
      case 'search-sessions':
        await sessionAction(this, this.client, this.ui, message);
        return;
      case 'revert-preview':
      case 'revert':
      case 'unrevert':
      case 'earlier-messages':
      case 'list-review':
      case 'review-action':
      case 'open-review-diff':
        await this.checkpoints.handle(this.client, message);
        return;
      case 'background-diff':
      case 'background-apply':
      case 'background-remove':
      case 'background-resolve':
        await backgroundReview(this.client, this.ui, message);
        return;
    }
  }

  private async mentionSearch(kind: MentionSearchKind, query: string): Promise<void> {
    let items: MentionItem[] = [];
    try {
      items = (await this.ui.mentions?.search(kind, query)) ?? [];
    } catch {
      // no provider answered: nothing to offer
    }
    this.ui.post({ type: 'mention-results', kind, query, items });
  }

  private async mention(kind: MentionKind): Promise<void> {
    let found: MentionItem | string = `@${kind} is not available here.`;
    try {
      found = (await this.ui.mentions?.item(kind)) ?? found;
    } catch (err) {
      found = `@${kind}: ${errorText(err)}`;
    }
    this.ui.post(typeof found === 'string' ? { type: 'mention-item', error: found } : { type: 'mention-item', item: found });
  }

  /** Ask the server for the /commands and tell the panel (its completion). */
  async refreshCommands(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const { commands } = await client.request('agent/listCommands', {});
      this.ui.post({ type: 'commands', commands });
    } catch {
      return; // a server without commands: no completion
    }
  }

  /** Ask the server for its MCP servers (state and tools) and tell the panel. */
  async refreshMcp(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const { servers } = await client.request('agent/mcpStatus', {});
      this.mcpServers = servers ?? [];
    } catch {
      return; // a server without MCP support: no list
    }
    this.ui.post({ type: 'mcp', servers: this.mcpServers });
  }

  /** The picker's choice: kept for the workspace, used by the active session from its next turn. */
  async setModel(model: string): Promise<void> {
    try {
      await this.models.choose(model, this.client, this.activeSessionId);
    } catch (err) {
      this.ui.showError(`agentls: could not use ${model}: ${errorText(err)}`);
    }
    this.ui.post(this.models.message());
    this.changed();
  }

  /** The active session's mode (a new session if there is none): 'plan' refuses every change
   * until the user approves the plan. The server's mode event updates the views. */
  async setMode(mode: SessionMode): Promise<void> {
    const client = this.requireClient();
    if (!client) return;
    const sessionId = this.activeSessionId ?? (await this.newSession());
    if (!sessionId) return;
    try {
      await client.request('agent/setMode', { sessionId, mode });
    } catch (err) {
      this.ui.showError(`agentls: could not switch to ${mode} mode: ${errorText(err)}`);
    }
  }

  /** Send a prompt to the active session (a new one if there is none), or to `target` (an inline
   * chat's session, not shown in the panel); mode 'steer' adds it to the running turn at its next
   * step instead of queueing it. */
  async prompt(
    text: string,
    context?: (ContextRef | TextRef)[],
    mode: PromptMode = 'queue',
    images: PromptImage[] = [],
    target?: string,
  ): Promise<void> {
    const trimmed = text.trim();
    if (!trimmed && !images.length) return; // a prompt may be images only
    const client = this.requireClient();
    if (!client) return;
    let sessionId = target ?? this.activeSessionId;
    if (!sessionId) {
      const created = await this.newSession();
      if (!created) return;
      sessionId = created;
    }
    const view = this.views.get(sessionId) ?? emptyView(sessionId);
    this.views.set(sessionId, view);
    const labels = (context ?? []).map((c) => ('uri' in c ? contextLabel(c.uri, c.range) : c.label));
    const steer = mode === 'steer' && view.busy;
    const shown = images.map((i) => `data:${i.mimeType};base64,${i.data}`);
    promptSent(view, trimmed, labels, steer, shown);
    if (sessionId === this.activeSessionId) this.ui.post({
      type: 'prompt-sent',
      sessionId,
      text: trimmed,
      ...(labels.length ? { context: labels } : {}),
      ...(steer ? { steer } : {}),
      ...(shown.length ? { images: shown } : {}),
    });
    const items = [...(context ?? []), ...images.map((i) => ({ type: 'image' as const, mimeType: i.mimeType, data: i.data }))];
    this.changed();
    try {
      const result = await client.request('agent/prompt', {
        sessionId,
        text: trimmed,
        ...(items.length ? { context: items } : {}),
        ...(steer ? { mode } : {}),
      });
      if (!result.messageId && result.text) await this.commandAnswered(view, trimmed, result.sessionId, result.text);
      this.scheduleRefresh(); // the session is no longer busy, and may have a title now
    } catch (err) {
      if (this.client !== client) return; // the server went away; disconnected() said so
      const message = `The prompt failed: ${errorText(err)}`;
      promptFailed(view, trimmed, message);
      if (sessionId === this.activeSessionId) {
        this.ui.post({ type: 'prompt-failed', sessionId, text: trimmed, message });
      }
      this.changed();
    }
  }

  /** "Run in background": the prompt starts a new session in its own git worktree and branch
   * (agent/prompt background: true), which runs detached; the active session gets a notice
   * saying where, and the history lists it with its state. */
  async promptBackground(text: string): Promise<void> {
    const trimmed = text.trim();
    const client = this.requireClient();
    if (!trimmed || !client) return;
    let sessionId = this.activeSessionId;
    if (!sessionId) {
      const created = await this.newSession();
      if (!created) return;
      sessionId = created;
    }
    const view = this.views.get(sessionId) ?? emptyView(sessionId);
    this.views.set(sessionId, view);
    try {
      const result = await client.request('agent/prompt', { sessionId, text: trimmed, background: true });
      this.startedInBackground.add(result.sessionId);
      notice(view, 'info', result.text);
      this.scheduleRefresh();
    } catch (err) {
      if (this.client !== client) return;
      notice(view, 'error', `Could not start it in the background: ${errorText(err)}`);
    }
    if (sessionId === this.activeSessionId) this.postState(); // the notice in the panel now
    this.changed();
  }

  /** A built-in command (/model, /compact, /clear) answered without a turn: its outcome is a
   * notice where the prompt waited; /clear's new session becomes the active one. */
  private async commandAnswered(view: SessionView, prompt: string, sessionId: string, text: string): Promise<void> {
    const at = view.queued.indexOf(prompt);
    if (at >= 0) view.queued.splice(at, 1);
    notice(view, 'info', text);
    if (sessionId !== view.sessionId) {
      this.views.set(sessionId, emptyView(sessionId));
      this.complete.add(sessionId);
      await this.refreshSessions();
      await this.select(sessionId);
      return;
    }
    if (view.sessionId === this.activeSessionId) this.postState();
    this.changed();
  }

  async cancel(sessionId = this.activeSessionId): Promise<void> {
    const client = this.requireClient();
    if (!client || !sessionId) return;
    try {
      await client.request('agent/cancel', { sessionId });
    } catch (err) {
      this.ui.showError(`agentls: could not stop: ${errorText(err)}`);
    }
  }

  /** The active session's failed last turn, again from where it failed (agent/retry); what it
   * does shows through its events, a refusal (nothing to retry, a turn runs) as an error. */
  async retry(sessionId = this.activeSessionId): Promise<void> {
    const client = this.requireClient();
    if (!client || !sessionId) return;
    try {
      await client.request('agent/retry', { sessionId });
    } catch (err) {
      this.ui.showError(`agentls: could not retry: ${errorText(err)}`);
    }
  }

  /** A new session, the panel's active one unless `activate` is false (an inline chat's). */
  async newSession(activate = true): Promise<string | undefined> {
    const client = this.requireClient();
    if (!client) return undefined;
    try {
      const { sessionId } = await client.request('agent/newSession', {});
      await this.models.apply(client, sessionId).catch((err: unknown) => this.ui.showError(`agentls: ${errorText(err)}`));
      this.views.set(sessionId, emptyView(sessionId));
      this.complete.add(sessionId);
      if (activate) await this.setActive(sessionId);
      await this.refreshSessions();
      this.postState();
      this.changed();
      return sessionId;
    } catch (err) {
      this.ui.showError(`agentls: could not create a session: ${errorText(err)}`);
      return undefined;
    }
  }

  async select(sessionId: string): Promise<void> {
    await this.setActive(sessionId);
    if (!this.complete.has(sessionId) && this.client) await this.load(sessionId);
    this.postState();
    this.changed();
  }

  async approve(
    sessionId: string,
    requestId: string,
    decision: 'once' | 'always' | 'reject',
    feedback?: string,
    scope?: 'session' | 'project',
    /** What the user accepts instead of the proposal: some of its hunks, or the user's version. */
    edit?: Record<string, unknown>,
  ): Promise<boolean> {
    const client = this.requireClient();
    if (!client) return false;
    const params: ApproveParams = { sessionId, requestId, decision };
    if (feedback) params.feedback = feedback;
    if (edit && decision !== 'reject') params.edit = edit;
    // "session" is the server's default: sent only for a project-wide "always".
    if (decision === 'always' && scope === 'project') params.scope = scope;
    try {
      await client.request('agent/approve', params);
      return true;
    } catch (err) {
      // Usually: already answered elsewhere, or the turn was cancelled meanwhile.
      this.ui.showError(`agentls: the answer was not taken: ${errorText(err)}`);
      return false;
    }
  }

  /** Reload the active session from the server's history. */
  async reload(): Promise<void> {
    await this.refreshSessions();
    if (this.activeSessionId) await this.load(this.activeSessionId);
    this.postState();
    this.changed();
  }

  // ---- internals ----------------------------------------------------------------------

  private requireClient(): AgentConnection | undefined {
    if (!this.client) {
      this.ui.showError(
        this.connection === 'stopped'
          ? 'agentls: the server is not running (run "agentls: Restart server").'
          : 'agentls: the server is starting; try again in a moment.',
      );
    }
    return this.client;
  }

  private async setActive(sessionId: string | undefined): Promise<void> {
    this.activeSessionId = sessionId;
    await this.memory.update(ACTIVE_KEY, sessionId);
  }

  private async load(sessionId: string): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.loading.add(sessionId);
    try {
      const { messages, todos, mode } = await client.request('agent/getMessages', { sessionId });
      const info = this.sessions.find((s) => s.sessionId === sessionId);
      const view = viewFromMessages(sessionId, messages, info);
      await loadSubAgents(view, async (id) => (await client.request('agent/getMessages', { sessionId: id })).messages);
      view.todos = todos ?? [];
      view.mode = mode ?? 'build';
      const old = this.views.get(sessionId);
      // Keep what this client knows and the history does not: queued prompts, the turn's usage.
      if (old) {
        view.queued = old.queued;
        view.queuedContext = old.queuedContext;
        view.usage.turn = old.usage.turn;
        // A running turn's open questions (a background session's, seen before it was opened):
        // its history is stored when the turn ends, and the question is answered here meanwhile.
        for (const item of pendingPermissions(old)) {
          if (!view.items.some((i) => i.kind === 'tool' && i.callId === item.callId)) view.items.push(item);
        }
        if (pendingPermissions(old).length) view.busy = true;
      }
      this.views.set(sessionId, view);
      this.complete.add(sessionId);
    } catch (err) {
      const view = this.views.get(sessionId) ?? emptyView(sessionId);
      notice(view, 'error', `Could not load this session: ${errorText(err)}`);
      this.views.set(sessionId, view);
    } finally {
      this.loading.delete(sessionId);
    }
  }

  async refreshSessions(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const { sessions } = await client.request('agent/listSessions', {});
    this.sessions = sessions.filter((s) => !s.parentId); // a sub-agent's is in its task card
    const live = this.sessions.some((s) => s.background?.state === 'running' || s.background?.state === 'waiting');
    if (live && !this.pollTimer) {
      this.pollTimer = setTimeout(() => {
        this.pollTimer = undefined;
        this.scheduleRefresh();
      }, BACKGROUND_POLL_MS);
    }
    for (const info of sessions) {
      const view = this.views.get(info.sessionId);
      if (view && !view.title) view.title = info.title;
    }
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.refreshSessions()
        .then(() => {
          this.ui.post({ type: 'sessions', sessions: this.sessions, activeSessionId: this.activeSessionId });
          this.ui.post({ type: 'background-questions', questions: this.backgroundQuestions() });
        })
        .catch(() => undefined);
    }, 150);
  }

  private postState(): void {
    this.ui.post({ type: 'state', state: this.panelState() });
  }

  /** The proposed edits waiting for an answer, in every session seen (the panel lists them),
   * but for a background session not shown: its labelled question card above the prompt box
   * asks it already. */
  proposals(): ProposalEntry[] {
    const out: ProposalEntry[] = [];
    for (const view of this.views.values()) {
      if (view.sessionId !== this.activeSessionId && this.isBackground(view.sessionId)) continue;
      const sessionTitle = this.sessions.find((s) => s.sessionId === view.sessionId)?.title;
      for (const item of pendingPermissions(view)) {
        const permission = item.permission;
        if (!permission || (!permission.hasEdit && !permission.diff)) continue;
        const path = typeof item.input.path === 'string' ? item.input.path : undefined;
        out.push({ sessionId: view.sessionId, sessionTitle, requestId: permission.requestId, title: permission.title, path });
      }
    }
    return out;
  }

  /** Whether a session runs in its own worktree (agent/prompt `background: true`). */
  isBackground(sessionId: string): boolean {
    return this.startedInBackground.has(sessionId) || this.sessions.some((s) => s.sessionId === sessionId && !!s.background);
  }

  /** The questions background sessions other than the active one wait on. */
  backgroundQuestions(): BackgroundQuestion[] {
    return backgroundQuestions(this.views.values(), this.sessions, this.activeSessionId);
  }

  private postProposals(): void {
    this.ui.post({ type: 'proposals', proposals: this.proposals() });
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.changeListeners.clear();
    this.eventListeners.clear();
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
