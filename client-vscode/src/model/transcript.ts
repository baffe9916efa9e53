// A session as the panel shows it, built from agent/getMessages and kept current by agent/event.
// The extension and the webview run this same reducer: the extension owns the truth (it survives the
// panel being hidden), the webview gets a snapshot and then applies the same events as they stream.
// No vscode or DOM import here.
import type {
  AgentEvent,
  MessageInfo,
  SessionInfo,
  TodoItem,
  Usage,
} from '../protocol/generated';
import { GATE_MARK, gateLine } from './finishGate';
import { hookLine } from './hooks';

export type ToolStatus = 'pending' | 'running' | 'completed' | 'error' | 'cancelled' | 'interrupted';
export type Decision = 'once' | 'always' | 'reject' | 'timeout' | 'cancelled' | 'unattended';

export interface Permission {
  requestId: string;
  /** 'pending' until permission-resolved names the decision. */
  state: 'pending' | Decision;
  title: string;
  /** A unified diff of a proposed file change. */
  diff?: string;
  /** The request carries a WorkspaceEdit (the extension can show it in a diff editor). */
  hasEdit: boolean;
  /** The user changed lines of the file this proposal changes too (proposal-rebased): where, e.g.
   * "line 4 of app.py"; it cannot be accepted until they undo that. */
  conflict?: string;
  /** What answering "always" allows, in the server's words ("Always allow `git status` commands");
   * undefined: "always" is not offered for this request. */
  always?: string;
  /** bash: the command will run inside the sandbox (workspace writable, the rest read-only,
   * secrets hidden, network off unless the settings allow it). */
  sandboxed?: boolean;
}

interface ItemBase {
  /** Stable within a view, so the webview can update the element of a changed item. */
  id: string;
  /** Bumped on every change of the item. */
  rev: number;
  /** The message was undone by agent/revert. */
  reverted?: boolean;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  text: string;
  context: string[];
  /** Images sent with it, as data: URLs. */
  images?: string[];
  /** Sent while a turn ran, and added to it (a steer). */
  steered?: boolean;
  /** The stored user message (a checkpoint: the panel's Restore reverts to it). */
  messageId?: string;
}
export interface TextItem extends ItemBase {
  kind: 'text';
  text: string;
  messageId?: string;
}
export interface ThinkingItem extends ItemBase {
  kind: 'thinking';
  text: string;
  messageId?: string;
}
export interface ToolItem extends ItemBase {
  kind: 'tool';
  callId: string;
  tool: string;
  title: string;
  input: Record<string, unknown>;
  status: ToolStatus;
  output?: string;
  isError?: boolean;
  progress?: string;
  permission?: Permission;
  /** A proposal of several hunks accepted in part, read from the history: whether each hunk was
   * kept (the card says "1 of 2 hunks kept" after a reload, when the live answer is gone). */
  keptHunks?: boolean[];
  /** A task call's sub-agent: its own transcript (model/subagents.ts), and its agent type. */
  sub?: SessionView;
  agent?: string;
}
export interface NoticeItem extends ItemBase {
  kind: 'notice';
  level: 'info' | 'warning' | 'error';
  text: string;
  /** Notices with a key replace the previous one with that key (retries). */
  key?: string;
  /** A failed turn's error (webview/errors.ts shows it as a card with Retry). */
  failure?: Failure;
}
/** What an error event of a failed turn says besides its sentence (the notice's text). */
export interface Failure {
  kind: string;
  nextStep: string;
  retryable: boolean;
  details?: string;
  /** Retry was asked for (agent/retry): the card keeps no Retry button. */
  retried?: boolean;
}
export type Item = UserItem | TextItem | ThinkingItem | ToolItem | NoticeItem;

export interface SessionUsage {
  turn: Usage;
  session: Usage;
  /** The sub-agents' share of `session` (which counts it). */
  subagents?: Usage;
}

export interface SessionView {
  sessionId: string;
  title: string;
  items: Item[];
  busy: boolean;
  /** Prompts sent and not started yet (the session was busy). */
  queued: string[];
  /** What was sent along with a queued prompt (file:lines labels), by prompt text. */
  queuedContext?: Record<string, string[]>;
  /** The images (data: URLs) sent with a queued prompt, by prompt text. */
  queuedImages?: Record<string, string[]>;
  usage: SessionUsage;
  /** Title of the tool call running now. */
  runningTool?: string;
  nextId: number;
  /** Index in items where the step being streamed began (a retry drops what came after). */
  stepStart?: number;
  /** Queued prompts sent to steer the running turn (a subset of queued). */
  steering?: string[];
  /** The session's todo list (todowrite), pinned above the transcript. */
  todos?: TodoItem[];
  /** 'plan': nothing may change until the user approves the plan (exit_plan). */
  mode?: 'build' | 'plan';
  /** The compaction summary in force (its message id): the messages before it are summarized. */
  summaryId?: string;
}

export function emptyView(sessionId: string, title = ''): SessionView {
  return {
    sessionId,
    title,
    items: [],
    busy: false,
    queued: [],
    usage: { turn: {}, session: {} },
    nextId: 1,
  };
}

function newId(view: SessionView): string {
  return `i${view.nextId++}`;
}

function push<T extends Item>(view: SessionView, item: Omit<T, 'id' | 'rev'>): T {
  const full = { ...item, id: newId(view), rev: 1 } as T;
  view.items.push(full);
  return full;
}

function touch(item: Item): void {
  item.rev += 1;
}

function findTool(view: SessionView, callId: string): ToolItem | undefined {
  for (let i = view.items.length - 1; i >= 0; i--) {
    const item = view.items[i];
    if (item.kind === 'tool' && item.callId === callId) return item;
  }
  return undefined;
}

function ensureTool(view: SessionView, callId: string, tool: string, title: string): ToolItem {
  return (
    findTool(view, callId) ??
    push<ToolItem>(view, { kind: 'tool', callId, tool, title, input: {}, status: 'running' })
  );
}

/** Requests waiting for an answer in this view, oldest first. */
/** What the bash sandbox allowed when the call ran in it ("workspace writable, network off"),
 * else undefined. Read from the server's line just before the exit code line: a command's own
 * output always comes before the blank line that ends it, so it cannot pass for that line. */
export function ranInSandbox(item: ToolItem): string | undefined {
  if (item.tool !== 'bash' || item.output === undefined) return undefined;
  const lines = item.output.split('\n');
  if (lines.length < 2) return undefined;
  const match = /^\(ran in the sandbox: (.+)\)$/.exec(lines[lines.length - 2]);
  return match ? match[1] : undefined;
}

export function pendingPermissions(view: SessionView): ToolItem[] {
  return view.items.filter(
    (i): i is ToolItem => i.kind === 'tool' && i.permission?.state === 'pending',
  );
}

const NORMAL_ENDS = new Set(['end_turn', 'tool_use']);
const END_NOTICES: Record<string, string> = {
  cancelled: 'Stopped.',
  max_tokens: 'The answer hit the output token limit.',
  refusal: 'The model declined to go on with this request.',
  max_steps: 'The turn hit the step limit.',
  doom_loop: 'Stopped: the same tool call repeated three times in a row.',
  error: 'The turn ended with an error.',
};

/** A sub-agent's event (the task tool's child session) applied to its task card's transcript
 * (made at its first event), which is bumped so it renders again; false for an event of the
 * session itself. One whose task call is not in the view (a history loaded since) is dropped. */
function applySubAgentEvent(view: SessionView, event: AgentEvent): boolean {
  if (!event.parentSessionId || !event.parentCallId) return false;
  const card = findTool(view, event.parentCallId);
  if (!card) return true;
  card.sub ??= emptyView(event.sessionId, card.title);
  card.agent = event.agent ?? card.agent;
  applyEvent(card.sub, { ...event, parentSessionId: undefined, parentCallId: undefined });
  touch(card);
  return true;
}

/** Apply one agent/event to a view, in place. */
export function applyEvent(view: SessionView, event: AgentEvent): void {
  if (applySubAgentEvent(view, event)) return;
  switch (event.type) {
    case 'turn-start': {
      view.busy = true;
      retried(view); // a failure before this turn is retried by it, or left behind
      if (event.retry) {
        // agent/retry: the failed turn goes on (no new prompt); its error card stays.
        view.stepStart = view.items.length;
        return;
      }
      const at = view.queued.indexOf(event.prompt);
      if (at >= 0) view.queued.splice(at, 1);
      if (view.steering) view.steering = view.steering.filter((q) => q !== event.prompt);
      const context = view.queuedContext?.[event.prompt] ?? [];
      if (view.queuedContext && !view.queued.includes(event.prompt)) delete view.queuedContext[event.prompt];
      const images = view.queuedImages?.[event.prompt];
      if (view.queuedImages && !view.queued.includes(event.prompt)) delete view.queuedImages[event.prompt];
      push<UserItem>(view, { kind: 'user', text: event.prompt, context, messageId: event.messageId, ...(images?.length ? { images } : {}) });
      view.stepStart = view.items.length;
      view.usage.turn = {};
      if (!view.title) view.title = event.prompt.split('\n')[0].slice(0, 80);
      return;
    }
    case 'steer': {
      // The prompts it joins (several steers sent during one step become one message).
      view.queued = view.queued.filter((q) => {
        const taken = event.prompt.includes(q) && (view.steering ?? []).includes(q);
        if (taken) view.steering = view.steering?.filter((s) => s !== q);
        return !taken;
      });
      push<UserItem>(view, { kind: 'user', text: event.prompt, context: [], steered: true, messageId: event.messageId });
      view.stepStart = view.items.length;
      return;
    }
    case 'todo':
      view.todos = event.todos;
      return;
    case 'mode':
      view.mode = event.mode;
      return;
    case 'text-delta':
    case 'thinking-delta': {
      view.busy = true;
      const kind = event.type === 'text-delta' ? 'text' : 'thinking';
      const last = view.items[view.items.length - 1];
      const messageId = event.messageId ?? undefined;
      if (last && last.kind === kind && last.messageId === messageId) {
        last.text += event.delta;
        touch(last);
      } else {
        push<TextItem | ThinkingItem>(view, { kind, text: event.delta, messageId });
      }
      return;
    }
    case 'tool-call': {
      view.busy = true;
      const item = ensureTool(view, event.callId, event.tool, event.title);
      item.tool = event.tool;
      item.title = event.title;
      item.input = event.input;
      if (item.status === 'pending') item.status = 'running';
      touch(item);
      view.runningTool = event.title;
      return;
    }
    case 'tool-result': {
      const item = ensureTool(view, event.callId, event.tool, event.tool);
      item.output = event.output;
      item.isError = event.isError;
      item.status = toolStatus(event.status, event.isError);
      item.progress = undefined;
      if (item.permission?.state === 'pending') item.permission.state = 'cancelled';
      if (view.runningTool === item.title) view.runningTool = undefined;
      if (event.title) item.title = event.title;
      touch(item);
      return;
    }
    case 'progress': {
      const item = findTool(view, event.callId);
      if (item) {
        item.progress = event.message;
        touch(item);
      }
      return;
    }
    case 'permission-request': {
      const item = ensureTool(view, event.callId, event.tool, event.title);
      if (!Object.keys(item.input).length) item.input = event.input;
      item.permission = {
        requestId: event.requestId,
        state: 'pending',
        title: event.title,
        diff: event.diff ?? undefined,
        hasEdit: !!event.edit,
        always: event.always ?? undefined,
        sandboxed: event.sandboxed ?? false,
      };
      touch(item);
      return;
    }
    case 'proposal-rebased': {
      // The user typed in the file while the proposal waited: redrawn on their text, or a conflict.
      for (const item of view.items) {
        if (item.kind === 'tool' && item.permission?.requestId === event.requestId) {
          item.permission.conflict = event.conflict ? `${event.lines ?? 'lines'} of ${event.path}` : undefined;
          if (event.diff) item.permission.diff = event.diff;
          touch(item);
        }
      }
      return;
    }
    case 'permission-resolved': {
      for (const item of view.items) {
        if (item.kind === 'tool' && item.permission?.requestId === event.requestId) {
          item.permission.state = event.decision;
          touch(item);
        }
      }
      return;
    }
    case 'usage':
      view.usage = { turn: event.turn, session: event.session, ...(event.subagents ? { subagents: event.subagents } : {}) };
      // A step ends with its usage; what follows belongs to the next step.
      view.stepStart = view.items.length;
      return;
    case 'retry': {
      // The server voids what the failed attempt streamed: drop it, or it shows twice.
      const from = view.stepStart ?? view.items.length;
      view.items = view.items.filter(
        (item, index) => index < from || !(item.kind === 'text' || item.kind === 'thinking' || item.kind === 'tool'),
      );
      view.stepStart = Math.min(from, view.items.length);
      notice(
        view,
        'warning',
        `Retrying (attempt ${event.attempt}) in ${(event.delayMs / 1000).toFixed(1)} s: ${event.reason}`,
        'retry',
      );
      return;
    }
    case 'error':
      if (event.kind) {
        const failure: Failure = { kind: event.kind, nextStep: event.nextStep ?? '', retryable: event.retryable ?? false, details: event.details ?? undefined };
        push<NoticeItem>(view, { kind: 'notice', level: 'error', text: event.message, failure });
        return;
      }
      notice(view, 'error', event.message);
      return;
    case 'compaction':
      if (event.status === 'started') {
        notice(view, 'info', 'Summarizing the older part of the conversation…', 'compaction');
      } else if (event.status === 'done') {
        if (event.summaryMessageId) view.summaryId = event.summaryMessageId;
        notice(
          view,
          'info',
          `Summarized ${event.summarizedMessages ?? 'older'} messages to stay within the context window.`,
          'compaction',
        );
      } else {
        notice(view, 'warning', `Could not summarize the conversation: ${event.error ?? 'unknown error'}`, 'compaction');
      }
      return;
    case 'turn-end': {
      view.busy = false;
      view.runningTool = undefined;
      for (const item of view.items) {
        if (item.kind === 'tool' && item.permission?.state === 'pending') {
          item.permission.state = 'cancelled';
          touch(item);
        }
      }
      const failed = event.finishReason === 'error' && view.items.at(-1)?.kind === 'notice' && !!(view.items.at(-1) as NoticeItem).failure;
      if (!NORMAL_ENDS.has(event.finishReason) && !failed) {
        notice(view, event.finishReason === 'cancelled' ? 'info' : 'warning', END_NOTICES[event.finishReason] ?? `Turn ended: ${event.finishReason}`);
      }
      // A retry notice is history once the turn is over.
      view.items = view.items.filter((i) => !(i.kind === 'notice' && i.key === 'retry'));
      return;
    }
    case 'review':
      return; // the pending review is the panel's own list (webview/review.ts), not the transcript
    case 'hook': {
      // A hook (the user's command) ran: one line, as loud as how it ended.
      const line = hookLine(event);
      notice(view, line.level, line.text);
      return;
    }
    case 'finish-gate': {
      // The turn's files checked again before it could end: a small line on the turn.
      const line = gateLine(event);
      notice(view, line.level, line.text);
      return;
    }
    default: {
      const unknown: never = event;
      void unknown;
    }
  }
}

/** A retry started: no Retry is offered on the cards of the failures before it. */
function retried(view: SessionView): void {
  for (const item of view.items) {
    if (item.kind === 'notice' && item.failure && !item.failure.retried) {
      item.failure.retried = true;
      touch(item);
    }
  }
}

/** The failure card of a loaded session whose last turn failed (its words are not stored). */
function lastFailure(reverted: boolean | undefined): Omit<NoticeItem, 'id' | 'rev'> {
  return {
    kind: 'notice',
    level: 'error',
    text: 'The last turn ended with an error.',
    failure: { kind: 'unknown', nextStep: 'Retry runs it again from where it failed.', retryable: true },
    reverted,
  };
}

function toolStatus(status: string | null | undefined, isError: boolean): ToolStatus {
  const known: ToolStatus[] = ['pending', 'running', 'completed', 'error', 'cancelled', 'interrupted'];
  if (status && (known as string[]).includes(status)) return status as ToolStatus;
  return isError ? 'error' : 'completed';
}

export function notice(view: SessionView, level: NoticeItem['level'], text: string, key?: string): void {
  if (key) {
    const existing = view.items.find(
      (i): i is NoticeItem => i.kind === 'notice' && i.key === key,
    );
    if (existing) {
      existing.text = text;
      existing.level = level;
      touch(existing);
      // Keep it where the turn is now.
      view.items.splice(view.items.indexOf(existing), 1);
      view.items.push(existing);
      return;
    }
  }
  push<NoticeItem>(view, { kind: 'notice', level, text, key });
}

/** A prompt was sent by this client: shown as queued until its turn starts. */
export function promptSent(view: SessionView, text: string, context: string[] = [], steer = false, images: string[] = []): void {
  view.queued.push(text);
  if (steer) view.steering = [...(view.steering ?? []), text];
  if (context.length) view.queuedContext = { ...view.queuedContext, [text]: context };
  if (images.length) view.queuedImages = { ...view.queuedImages, [text]: images };
}

/** How a piece of context sent with a prompt is shown: `calc.py:12-15`. */
export function contextLabel(uri: string, range?: { start: { line: number }; end: { line: number } } | null): string {
  const where = range ? `:${range.start.line + 1}${range.end.line !== range.start.line ? `-${range.end.line + 1}` : ''}` : '';
  return basename(uri) + where;
}

/** A prompt was refused (or the request failed) before its turn started. */
export function promptFailed(view: SessionView, text: string, message: string): void {
  const at = view.queued.indexOf(text);
  if (at >= 0) view.queued.splice(at, 1);
  notice(view, 'error', message);
}

/** The server went away: whatever was running is over. */
export function connectionLost(view: SessionView, message: string): void {
  if (view.busy || view.queued.length) notice(view, 'error', message);
  view.busy = false;
  view.queued = [];
  view.runningTool = undefined;
  for (const item of view.items) {
    if (item.kind !== 'tool') continue;
    let changed = false;
    if (item.status === 'running' || item.status === 'pending') {
      item.status = 'interrupted';
      changed = true;
    }
    if (item.permission?.state === 'pending') {
      item.permission.state = 'cancelled';
      changed = true;
    }
    if (changed) touch(item);
  }
}

function basename(uri: string): string {
  const clean = uri.split(/[?#]/)[0];
  try {
    return decodeURIComponent(clean.slice(clean.lastIndexOf('/') + 1));
  } catch {
    return clean.slice(clean.lastIndexOf('/') + 1);
  }
}

/** A view from the stored history (agent/getMessages), e.g. after VS Code reloads. */
export function viewFromMessages(
  sessionId: string,
  messages: MessageInfo[],
  info?: SessionInfo,
): SessionView {
  const view = emptyView(sessionId, info?.title ?? '');
  for (const message of messages) {
    const reverted = message.reverted ? true : undefined;
    if (message.role === 'user') {
      const texts: string[] = [];
      const context: string[] = [];
      const images: string[] = [];
      for (const part of message.parts) {
        if (part.type === 'text') texts.push(part.text);
        else if (part.type === 'image') images.push(`data:${part.mediaType};base64,${part.data}`);
        else if (part.type === 'context') context.push(contextLabel(part.uri, part.range));
        else if (part.type === 'summary') {
          if (!reverted) view.summaryId = message.id;
          push<NoticeItem>(view, {
            kind: 'notice',
            level: 'info',
            text: `Summary of ${part.summarizedMessages ?? 'the'} earlier messages:\n\n${part.text}`,
            reverted,
          });
        }
        // Tool results live on the assistant's tool parts.
      }
      if (texts.length === 1 && !context.length && !images.length && texts[0].startsWith(GATE_MARK)) {
        // The finish gate's message to the model (not the user's): what it sent back.
        push<NoticeItem>(view, { kind: 'notice', level: 'info', text: texts[0], reverted });
      } else if (texts.length || context.length || images.length) {
        push<UserItem>(view, { kind: 'user', text: texts.join('\n\n'), context, reverted, messageId: message.id, ...(images.length ? { images } : {}) });
      }
      continue;
    }
    for (const part of message.parts) {
      if (part.type === 'text') {
        push<TextItem>(view, { kind: 'text', text: part.text, messageId: message.id, reverted });
      } else if (part.type === 'thinking') {
        if (part.text) push<ThinkingItem>(view, { kind: 'thinking', text: part.text, messageId: message.id, reverted });
      } else if (part.type === 'tool') {
        const status = (part.status ?? 'pending') as ToolStatus;
        push<ToolItem>(view, {
          kind: 'tool',
          callId: part.callId,
          tool: part.tool,
          title: part.title ?? part.tool,
          input: part.input,
          status,
          output: part.output ?? undefined,
          isError: status === 'error' || status === 'cancelled' || status === 'interrupted',
          reverted,
          ...(part.keptHunks?.length ? { keptHunks: part.keptHunks } : {}),
        });
      }
    }
    if (message.finishReason === 'error' && message === messages.at(-1)) {
      push<NoticeItem>(view, lastFailure(reverted));
    } else if (message.finishReason && !NORMAL_ENDS.has(message.finishReason)) {
      push<NoticeItem>(view, {
        kind: 'notice',
        level: message.finishReason === 'cancelled' ? 'info' : 'warning',
        text: END_NOTICES[message.finishReason] ?? `Turn ended: ${message.finishReason}`,
        reverted,
      });
    }
  }
  if (info) {
    view.busy = info.busy;
    view.usage.session = info.usage;
    if (info.subagentUsage) view.usage.subagents = info.subagentUsage;
    if (!view.title) view.title = info.title;
  }
  if (!view.title) {
    const first = view.items.find((i): i is UserItem => i.kind === 'user');
    if (first) view.title = first.text.split('\n')[0].slice(0, 80);
  }
  return view;
}

/** Tokens of a usage, for display. */
export function totalTokens(usage: Usage): number {
  return (
    (usage.inputTokens ?? 0) +
    (usage.outputTokens ?? 0) +
    (usage.cacheReadTokens ?? 0) +
    (usage.cacheWriteTokens ?? 0)
  );
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(usd: number | undefined): string {
  const value = usd ?? 0;
  if (value === 0) return '$0.00';
  if (value < 0.01) return `$${value.toFixed(4)}`;
  return `$${value.toFixed(2)}`;
}
