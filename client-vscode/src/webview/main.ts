// The panel: renders the active session's view and applies its events as they stream in, with
// the same reducer as the extension. Talks to the extension only through postMessage.
import type { AgentEvent, McpServerInfo, SessionInfo } from '../protocol/generated';
import type { ApproveDecision, ApproveScope, HostMessage, PanelMessage, PanelState } from '../model/messages';
import { mcpList } from '../model/mcp';
import { renderPinned } from './todo';
import { HunkCards, ProposalList, keptHunksLine } from './proposals';
import { CommandMenu } from './commands';
import { ImageTray, thumbnails } from './images';
import { ModelPicker } from './models';
import { Announcer } from './a11y';
import { MentionMenu } from './mentions';
import { SelectionBar } from './selectionChip';
import { forkButton } from './sessions';
import { HistoryView } from './history';
import { KeyNotice, SetupCard } from './setup';
import { modeButton as makeModeButton, pickerRow, showMode } from './composer';
import { Restore } from './checkpoints';
import { questionBlock, questionResolved } from './question';
import { EarlierMessages } from './earlier';
import { ReviewList } from './review';
import { BackgroundReviewCard } from './backgroundReview';
import { BackgroundQuestions } from './backgroundQuestions';
import { TranscriptWindow } from './transcriptWindow';
import { failureCard } from './errors';
import { CostView } from './cost';
import { configureMarkdown, markdown } from './markdown';
import { relativePaths, setWorkspaceRoot } from './paths';
import { foldsIntoTodoList, inputFields, outputBlock, rejectionNote, subAgentResult, titleElement, toolName, toolStatus, wasRejected } from './toolcards';
import {
  applyEvent,
  emptyView,
  notice,
  pendingPermissions,
  promptFailed,
  promptSent,
  ranInSandbox,
  type Item,
  type SessionView,
  type ToolItem,
} from '../model/transcript';
import { subAgentAsks, viewSessionOf } from '../model/subagents';

interface VsCodeApi {
  postMessage(message: PanelMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface UiState {
  expanded: string[];
  draft: string;
}

const vscode = acquireVsCodeApi();
const saved = (vscode.getState() ?? {}) as Partial<UiState>;
const expanded = new Set<string>(saved.expanded ?? []);

let state: PanelState = { connection: 'starting', sessions: [] };
const rendered = new Map<string, { rev: number; el: HTMLElement }>();
let renderedSession: string | undefined;
/** Requests whose reject form is open: requestId -> the feedback typed so far. */
const rejecting = new Map<string, string>();
/** Requests answered here and not resolved yet (their buttons are gone, so no double answer). */
const answered = new Set<string>();
const ANSWER_TIMEOUT_MS = 5000;

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el as T;
};
const app = $<HTMLDivElement>('app');
const transcript = $<HTMLElement>('transcript');
/** The session list (the title bar's History action), the set-up card while no server runs, and
 * the missing-key notice over the prompt box (history.ts, setup.ts). */
/** A finished background session's changes, opened from History's "Review changes" (backgroundReview.ts). */
const backgroundReview = new BackgroundReviewCard(post);
const history = new HistoryView(
  (m) => (m.type === 'background-diff' ? backgroundReview.open(m.sessionId) : post(m)),
  (open) => app.classList.toggle('showing-history', open),
);
const setupCard = new SetupCard(post);
const banner = setupCard.el;
transcript.before(history.el, banner);
const keyNotice = new KeyNotice(post);
const activity = $<HTMLSpanElement>('activity');
const costView = new CostView($<HTMLSpanElement>('usage')); // the total, its breakdown on hover
const promptBox = $<HTMLTextAreaElement>('prompt');
const sendButton = $<HTMLButtonElement>('send');
const backgroundButton = $<HTMLButtonElement>('send-background');
const stopButton = $<HTMLButtonElement>('stop');
const idlePlaceholder = promptBox.placeholder;
const BUSY_PLACEHOLDER = 'Enter steers the running turn · Alt+Enter queues for after it';
/** The todo list and the plan-mode notice, pinned above the transcript (todo.ts). */
const pinned = h('details', { class: 'pinned', id: 'pinned', 'aria-label': 'Todo list and mode' });
pinned.hidden = true;
let pinnedKey = '';
transcript.before(pinned);
/** The proposed edits waiting for review, in every session (proposals.ts). */
const proposalList = new ProposalList(post);
/** A proposal's hunks in its card, Accept / Reject each, and what was kept (proposals.ts). */
const hunkCards = new HunkCards(post);
pinned.before(proposalList.el);
/** The mode and model pickers under the prompt box (composer.ts, models.ts). */
const pickers = pickerRow(stopButton.parentElement ?? document.body);
promptBox.before(keyNotice.el);
/** Questions of background sessions the panel does not show, above the prompt box (backgroundQuestions.ts). */
const backgroundQuestions = new BackgroundQuestions(post);
keyNotice.el.before(backgroundQuestions.el);
const modeButton = makeModeButton();
pickers.append(modeButton);
const modelPicker = new ModelPicker(pickers, (model) => post({ type: 'set-model', model }), () => post({ type: 'list-models' }));
/** The live region reading finished blocks (a11y.ts). */
const announcer = new Announcer($<HTMLElement>('announcer'));
/** Restore at a user message, and Redo (checkpoints.ts); the pending review "after" (review.ts). */
const restore = new Restore(post, (prompt) => {
  if (promptBox.value.trim() !== prompt.trim()) return; // the user has typed something else since
  promptBox.value = '';
  saveUi();
});
transcript.after(restore.redoBar);
/** The messages a compaction summarized, shown on demand with their Restore buttons (earlier.ts). */
const earlier = new EarlierMessages(post, (view, item) => renderItem(view, item));
const reviewList = new ReviewList(post);
transcript.before(reviewList.el);
transcript.before(backgroundReview.el);

function post(message: PanelMessage): void {
  vscode.postMessage(message);
}

function saveUi(): void {
  const ui: UiState = { expanded: [...expanded], draft: promptBox.value };
  vscode.setState(ui);
}

// ---- small DOM helpers ------------------------------------------------------------------

type Child = Node | string | null | undefined | false;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (key === 'class') el.className = String(value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

/** Answers' Markdown: code blocks with Copy / Insert / Apply and colours, paths as links (markdown.ts). */
const highlighter = configureMarkdown(post, () => state.view?.sessionId);

// ---- rendering --------------------------------------------------------------------------

function lines(prefix: string, text: string): string {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

function inputSummary(item: ToolItem): HTMLElement | null {
  const input = item.input;
  if (item.tool === 'bash' && typeof input.command === 'string') {
    return h('pre', { class: 'command' }, h('span', { class: 'prompt-sign', 'aria-hidden': 'true' }, '$ '), input.command);
  }
  if (item.tool === 'exit_plan' && typeof input.plan === 'string') return markdown(input.plan, 'plan markdown');
  if (item.permission?.diff) return diffView(item.permission.diff);
  if (item.tool === 'edit' && typeof input.old_string === 'string' && typeof input.new_string === 'string') {
    return diffView(`--- ${relativePaths(String(input.path ?? ''))}\n${lines('-', input.old_string)}\n${lines('+', input.new_string)}\n`);
  }
  if (!Object.keys(input).length || item.tool === 'task') return null; // a sub-agent's card shows its steps
  if (typeof input.path === 'string' && Object.keys(input).length === 1) {
    return h('div', { class: 'input-path' }, relativePaths(input.path));
  }
  return inputFields(input); // toolcards.ts: name / value lines, not a JSON document
}

function diffView(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff' });
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    pre.append(h('span', { class: `line ${cls}` }, line + '\n'));
  }
  return pre;
}

const DECISION_LABELS: Record<string, string> = {
  once: 'Allowed once',
  always: 'Always allowed',
  reject: 'Rejected',
  timeout: 'Timed out',
  cancelled: 'Cancelled',
};

/** The approval part of a card; `detail` (what is asked: the command, the diff) goes above the buttons. */
function permissionBlock(view: SessionView, item: ToolItem, detail: HTMLElement | null): HTMLElement | null {
  const permission = item.permission;
  if (!permission) return null;
  const asks = item.tool === 'ask_user'; // a question to the user (question.ts), not a permission
  if (permission.state !== 'pending') {
    return h(
      'div',
      { class: `permission resolved decision-${permission.state}` },
      asks
        ? questionResolved(permission.state)
        : (hunkCards.keptLabel(permission.requestId) ?? DECISION_LABELS[permission.state] ?? permission.state),
    );
  }
  const requestId = permission.requestId;
  const plan = item.tool === 'exit_plan';
  const what =
    item.tool === 'bash'
      ? 'agentls wants to run this command:'
      : plan
        ? 'agentls has a plan. Approve it to start building, or keep planning with your feedback:'
        : permission.hasEdit || permission.diff
        ? `agentls wants to make this change (${permission.title}):`
        : `agentls wants to use ${item.tool}: ${permission.title}`;
  const block = h('div', { class: 'permission pending', role: 'group', 'aria-label': 'Approval needed' });
  block.append(h('div', { class: 'permission-title' }, what));
  if (permission.conflict) {
    block.append(
      h('div', { class: 'permission-conflict', role: 'alert' }, `You changed ${permission.conflict} while this waited, lines it changes too: it cannot be accepted. Reject it (the agent is told why), or undo your change there.`),
    );
  }
  if (item.tool === 'bash' && typeof item.input.command === 'string') {
    block.append(h('pre', { class: 'command exact' }, item.input.command));
    block.append(
      permission.sandboxed
        ? h('div', { class: 'permission-sandbox sandboxed' }, 'Sandboxed: it can write only inside the workspace, and secret files are hidden.')
        : h('div', { class: 'permission-sandbox unsandboxed' }, 'Not sandboxed: it runs with your full access.'),
    );
  } else if (detail) {
    block.append(detail);
  }
  const approve = (decision: ApproveDecision, feedback?: string, scope?: ApproveScope): void => {
    rejecting.delete(requestId);
    const message: PanelMessage = { type: 'approve', sessionId: view.sessionId, requestId, decision };
    if (feedback) message.feedback = feedback;
    if (scope) message.scope = scope;
    post(message);
    answered.add(requestId);
    rerender(item);
    promptBox.focus(); // after an approval, back to the prompt box
    // If the answer got lost (the extension shows why), offer the buttons again.
    setTimeout(() => {
      if (answered.delete(requestId) && item.permission?.state === 'pending') rerender(item);
    }, ANSWER_TIMEOUT_MS);
  };
  if (answered.has(requestId)) {
    block.append(h('div', { class: 'progress' }, 'Sending your answer…'));
    return block;
  }
  if (asks) return questionBlock(requestId, item.input, (decision, answer) => approve(decision, answer));
  if (rejecting.has(requestId)) {
    const field = h('input', {
      type: 'text',
      class: 'feedback',
      placeholder: 'Why? What should it do instead? (optional, sent to the agent)',
      'aria-label': 'Feedback for the agent',
    });
    field.value = rejecting.get(requestId) ?? '';
    field.addEventListener('input', () => rejecting.set(requestId, field.value));
    const send = h('button', { class: 'danger', 'data-action': 'confirm-reject' }, 'Reject');
    const back = h('button', { class: 'secondary', 'data-action': 'cancel-reject' }, 'Back');
    send.addEventListener('click', () => approve('reject', field.value.trim() || undefined));
    back.addEventListener('click', () => {
      rejecting.delete(requestId);
      rerender(item);
    });
    field.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        approve('reject', field.value.trim() || undefined);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        rejecting.delete(requestId);
        rerender(item);
      }
    });
    block.append(h('div', { class: 'reject-form' }, field, h('div', { class: 'buttons' }, send, back)));
    queueMicrotask(() => field.focus());
    return block;
  }
  const buttons = h('div', { class: 'buttons' });
  if (permission.hasEdit) {
    const review = h('button', { class: 'secondary', 'data-action': 'open-diff' }, 'Review diff');
    review.addEventListener('click', () => post({ type: 'open-diff', requestId }));
    buttons.append(review);
  }
  const once = h('button', { 'data-decision': 'once' }, item.tool === 'bash' ? 'Run once' : plan ? 'Approve plan' : 'Accept');
  const reject = h('button', { class: 'secondary', 'data-decision': 'reject' }, plan ? 'Keep planning…' : 'Reject…');
  once.addEventListener('click', () => approve('once'));
  reject.addEventListener('click', () => {
    rejecting.set(requestId, '');
    rerender(item);
  });
  if (permission.conflict) {
    // The user changed lines it changes too: the server refuses an accept; only Reject is offered.
    buttons.append(reject);
    block.append(buttons);
    return block;
  }
  buttons.append(once);
  // "Always" says exactly what it allows (the server's label); no such buttons when the server
  // does not offer it for this request.
  if (permission.always) {
    const label = permission.always;
    const always = h(
      'button',
      { class: 'secondary', 'data-decision': 'always', 'data-scope': 'session', title: `${label}, for the rest of this session` },
      'Always',
    );
    const project = h(
      'button',
      { class: 'secondary', 'data-decision': 'always', 'data-scope': 'project', title: `${label}, in every session of this project (agentls permissions lists and revokes these)` },
      'Always in this project',
    );
    always.addEventListener('click', () => approve('always'));
    project.addEventListener('click', () => approve('always', undefined, 'project'));
    buttons.append(always, project);
    block.append(h('div', { class: 'permission-always' }, label));
  }
  buttons.append(reject);
  block.append(buttons);
  return block;
}

/** "sandboxed" on a bash result that ran in the sandbox (what it allowed in the tooltip). */
function sandboxBadge(item: ToolItem): HTMLElement[] {
  const allowed = ranInSandbox(item);
  return allowed ? [h('span', { class: 'sandbox-badge', title: `Ran in the sandbox: ${allowed}` }, 'sandboxed')] : [];
}

function renderTool(view: SessionView, item: ToolItem): HTMLElement {
  const pending = item.permission?.state === 'pending';
  const status = toolStatus(item); // toolcards.ts: "Rejected", not "failed", for a call turned down
  const details = h('details', {
    class: `tool ${status.className}${pending ? ' needs-approval' : ''}`,
    'data-call-id': item.callId,
    'data-tool': item.tool,
  });
  details.open = pending || expanded.has(item.callId) || subAgentAsks(item);
  details.append(
    h(
      'summary',
      {},
      h('span', { class: 'status-dot', 'aria-hidden': 'true' }),
      h('span', { class: 'tool-name' }, toolName(item)),
      titleElement(item, post),
      ...sandboxBadge(item),
      h('span', { class: 'tool-status' }, status.text),
    ),
  );
  const body = h('div', { class: 'tool-body' });
  // A proposal of several hunks: its hunks, each with Accept / Reject, or what was kept of each.
  const hunks = item.permission && hunkCards.has(item.permission.requestId) ? hunkCards.list(item.permission.requestId, pending) : null;
  const summary = hunks ?? inputSummary(item);
  if (summary && !pending) body.append(summary);
  const permission = permissionBlock(view, item, pending ? summary : null);
  if (permission) body.append(permission);
  else if (item.keptHunks) body.append(keptHunksLine(item.keptHunks)); // from the history
  if (item.progress) body.append(h('div', { class: 'progress' }, item.progress));
  if (item.sub) {
    // The sub-agent's own transcript; its questions are answered in its session.
    const sub = item.sub;
    const nested = h('div', { class: 'subagent', 'data-session-id': sub.sessionId });
    nested.append(h('div', { class: 'subagent-label' }, toolName(item)));
    for (const child of sub.items) nested.append(renderItem(sub, child));
    body.append(nested);
  }
  const note = rejectionNote(item);
  if (note) body.append(h('div', { class: 'rejected-note' }, 'Your note: ', note));
  if (item.tool === 'task' && item.output && !item.isError) {
    body.append(markdown(subAgentResult(item.output), 'subagent-result markdown')); // the sub-agent's answer
  } else if (item.output !== undefined && !wasRejected(item)) {
    body.append(outputBlock(item, post)); // toolcards.ts: a file listing's paths as links
  }
  details.append(body);
  // Remember what the user opened (a card waiting for approval is open by itself, not remembered).
  details.querySelector('summary')?.addEventListener('click', () => {
    if (details.open) expanded.delete(item.callId);
    else expanded.add(item.callId);
    saveUi();
  });
  return details;
}

function renderItem(view: SessionView, item: Item): HTMLElement {
  let el: HTMLElement;
  switch (item.kind) {
    case 'user':
      el = h(
        'div',
        { class: 'message user' },
        h('div', { class: 'role' }, 'You', item.steered ? h('span', { class: 'badge' }, 'steered') : null),
        h('div', { class: 'user-text' }, item.text),
        item.images?.length ? thumbnails(item.images) : null,
        item.context.length ? h('div', { class: 'context' }, 'with ' + item.context.join(', ')) : null,
        view === state.view || earlier.owns(view) ? restore.forMessage(view.sessionId, item) : null, // not in a sub-agent's card
      );
      break;
    case 'text':
      el = markdown(item.text, 'message assistant markdown');
      if (item.messageId && !earlier.owns(view)) el.append(forkButton(view.sessionId, item.messageId, post));
      break;
    case 'thinking':
      el = h('details', { class: 'thinking' }, h('summary', {}, 'Thinking'), markdown(item.text, 'markdown'));
      break;
    case 'tool':
      // A todo update is shown by the pinned list (todo.ts), not by a card of its own.
      el = foldsIntoTodoList(item) ? h('div', { class: 'todo-update', hidden: true }) : renderTool(view, item);
      break;
    case 'notice':
      el = item.failure // a failed turn: its sentence, next step, Retry, details (errors.ts)
        ? failureCard(item, view === state.view ? post : undefined)
        : h('div', { class: `notice ${item.level}`, role: item.level === 'error' ? 'alert' : 'note' }, item.text);
      break;
  }
  el.dataset.itemId = item.id;
  if (item.reverted) el.classList.add('reverted');
  return el;
}

function rerender(item: Item): void {
  const view = state.view;
  const entry = rendered.get(item.id);
  if (!view || !entry) return;
  const el = renderItem(view, item);
  entry.el.replaceWith(el);
  rendered.set(item.id, { rev: item.rev, el });
}

function renderSessions(): void {
  const { activeSessionId } = state;
  app.dataset.session = activeSessionId ?? '';
  const known = state.sessions.some((s) => s.sessionId === activeSessionId);
  // A new session is listed before the server's list has it.
  const sessions: SessionInfo[] =
    activeSessionId && !known && state.view
      ? [{ sessionId: activeSessionId, title: state.view.title || 'New session', createdAt: Date.now(), updatedAt: Date.now(), busy: state.view.busy, model: '', usage: state.view.usage.session } as SessionInfo, ...state.sessions]
      : state.sessions;
  history.set(sessions, activeSessionId, state.connection === 'running');
}

/** The set-up card while no server runs (setup.ts); it holds the place of an empty conversation. */
function renderBanner(): void {
  setupCard.render({ connection: state.connection, connectionMessage: state.connectionMessage, setup: state.setup });
  app.classList.toggle('setting-up', setupCard.blocking);
}

function nearBottom(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
}

/** The transcript's newest items drawn, the earlier ones as they are scrolled to (transcriptWindow.ts). */
const transcriptWindow = new TranscriptWindow<Item>(transcript, (item) => renderItem(state.view as SessionView, item));

function renderTranscript(): void {
  const view = state.view;
  const stick = nearBottom();
  if (!view || renderedSession !== view.sessionId) {
    rendered.clear();
    transcript.replaceChildren();
    renderedSession = view?.sessionId;
  }
  // A conversation restored to before its first message shows as empty (its items are hidden).
  if (!view || (!view.items.some((i) => !i.reverted) && !view.queued.length)) {
    transcript.replaceChildren(
      h(
        'div',
        { class: 'empty' },
        h('p', {}, 'Ask agentls to do something in this workspace.'),
        h('p', { class: 'hint' }, 'It reads files, runs commands and proposes edits; edits and commands wait for your approval.'),
      ),
    );
    rendered.clear();
    return;
  }
  transcript.querySelector(':scope > .empty')?.remove();
  const live = new Set<string>();
  const top = earlier.for(view); // the summarized messages, collapsed, before the summary
  if (top && transcript.firstElementChild !== top) transcript.prepend(top);
  // A long session draws its newest items, the earlier ones on demand (transcriptWindow.ts).
  const shown = transcriptWindow.shown(view, view.items, stick);
  let previous: Element | null = transcriptWindow.place(transcript, top);
  for (const item of shown) {
    live.add(item.id);
    const entry = rendered.get(item.id);
    let el: HTMLElement;
    if (!entry || entry.rev !== item.rev) {
      el = renderItem(view, item);
      if (entry) entry.el.replaceWith(el);
      rendered.set(item.id, { rev: item.rev, el });
    } else {
      el = entry.el;
    }
    const expectedNext: Element | null = previous ? previous.nextElementSibling : transcript.firstElementChild;
    if (expectedNext !== el) {
      if (previous) previous.after(el);
      else transcript.prepend(el);
    }
    previous = el;
  }
  for (const [id, entry] of rendered) {
    if (!live.has(id)) {
      entry.el.remove();
      rendered.delete(id);
    }
  }
  transcript.querySelectorAll(':scope > .queued').forEach((el) => el.remove());
  for (const text of view.queued) {
    transcript.append(
      h(
        'div',
        { class: 'message user queued' },
        h('div', { class: 'role' }, 'You ', h('span', { class: 'badge' }, view.steering?.includes(text) ? 'steering' : view.busy ? 'queued' : 'sending')),
        h('div', { class: 'user-text' }, text),
      ),
    );
  }
  if (view.busy) {
    transcript.querySelector(':scope > .working')?.remove();
    transcript.append(h('div', { class: 'working', 'aria-hidden': 'true' }, h('span'), h('span'), h('span')));
  } else {
    transcript.querySelector(':scope > .working')?.remove();
  }
  if (stick) transcript.scrollTop = transcript.scrollHeight;
}

function renderFooter(): void {
  const view = state.view;
  const pending = view ? pendingPermissions(view) : [];
  const waiting = pending.length;
  let text = '';
  if (state.connection !== 'running') text = '';
  else if (waiting === 1 && pending[0].tool === 'ask_user') text = 'Waiting for your answer';
  else if (waiting) text = waiting === 1 ? 'Waiting for your approval' : `${waiting} requests wait for your approval`;
  else if (view?.busy) text = view.runningTool ? `Working: ${view.runningTool}` : 'Working…';
  else text = 'Idle';
  if (view?.queued.length && view.busy) text += ` · ${view.queued.length} queued`;
  activity.textContent = text;
  activity.className = waiting ? 'attention' : '';
  costView.show(view?.usage, state.sessions.find((s) => s.sessionId === view?.sessionId)?.model); // cost.ts
  stopButton.disabled = !view?.busy || state.connection !== 'running';
  stopButton.hidden = !view?.busy; // Send's place is enough while idle
  keyNotice.render(state.connection === 'running' ? modelPicker.missingKey() : undefined);
  promptBox.placeholder = view?.busy ? BUSY_PLACEHOLDER : idlePlaceholder;
  const planning = view?.mode === 'plan';
  modeButton.setAttribute('aria-pressed', String(planning));
  showMode(modeButton, planning);
  modeButton.classList.toggle('active', planning);
  modeButton.disabled = state.connection !== 'running';
  const key = JSON.stringify([view?.todos ?? [], view?.mode ?? 'build']);
  if (key !== pinnedKey) {
    pinnedKey = key;
    renderPinned(pinned, view?.todos, view?.mode);
  }
  sendButton.disabled = state.connection !== 'running';
  backgroundButton.disabled = state.connection !== 'running';
}

let scheduled = false;
let renderedBusy: boolean | undefined;
function flush(): void {
  if (!scheduled) return;
  scheduled = false;
  renderTranscript();
  renderFooter();
  if (renderedBusy !== state.view?.busy) {
    renderedBusy = state.view?.busy;
    renderSessions();
  }
}
function scheduleRender(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(flush);
  setTimeout(flush, 100); // rAF does not run in a hidden page
}

function renderAll(): void {
  renderSessions();
  renderBanner();
  scheduled = true;
  flush();
}

// ---- MCP servers: a small list under the banner, once there is one ----------------------

const mcpBox = h('details', { class: 'mcp', id: 'mcp', 'aria-label': 'MCP servers' });
mcpBox.hidden = true;
banner.after(mcpBox);

function renderMcp(servers: McpServerInfo[]): void {
  const list = mcpList(servers);
  const open = mcpBox.open;
  mcpBox.hidden = !list.rows.length;
  mcpBox.classList.toggle('attention', list.attention);
  const rows = list.rows.map((row) =>
    h(
      'li',
      { class: `mcp-server status-${row.status.replace(' ', '-')}`, 'data-server': row.name, title: row.tools.join('\n') || undefined },
      h('span', { class: 'mcp-name' }, row.name),
      ' ',
      h('span', { class: 'mcp-detail' }, row.detail),
      row.error ? h('pre', { class: 'mcp-error' }, row.error) : null,
    ),
  );
  mcpBox.replaceChildren(h('summary', {}, list.summary), h('ul', { class: 'mcp-servers' }, ...rows));
  mcpBox.open = open || list.attention;
}

// ---- input ------------------------------------------------------------------------------

/** While a turn runs, a prompt steers it (added at its next step) unless `queue` is asked for
 * (Alt+Enter): then it waits for the turn to end. */
function send(queue = false): void {
  const text = mentionMenu.inPlace(promptBox.value); // each @-mention's chip as its name (mentions.ts)
  // A prompt of images only (chips and an empty box) is sent as its images.
  if ((!text.trim() && imageTray.count === 0) || state.connection !== 'running') return;
  const images = imageTray.take();
  const context = mentionMenu.take();
  const newSession = selectionBar.newSession; // the selection chip's toggle (selectionChip.ts)
  selectionBar.done();
  const attached = { ...(images.length ? { images } : {}), ...(context.length ? { context } : {}), ...(newSession ? { newSession } : {}) };
  post(state.view?.busy && !queue && !newSession ? { type: 'prompt', text, mode: 'steer', ...attached } : { type: 'prompt', text, ...attached });
  promptBox.value = '';
  promptBox.dispatchEvent(new Event('input')); // the chips go too; the draft is saved
  promptBox.focus(); // also after a click on Send
}

promptBox.value = saved.draft ?? '';
/** Images pasted or dropped into the prompt box, sent with the next prompt (images.ts). */
const imageTray = new ImageTray(promptBox, (message) => {
  if (!state.view) return;
  notice(state.view, 'error', message);
  scheduleRender();
});
/** "/" at the start offers the server's commands (commands.ts). */
const commandMenu = new CommandMenu(promptBox, () => post({ type: 'list-commands' }));
/** "@" offers files, symbols, the selection, problems, terminal output, the git diff (mentions.ts). */
const mentionMenu = new MentionMenu(promptBox, post, (message) => {
  if (!state.view) return;
  notice(state.view, 'error', message);
  scheduleRender();
});
/** A selection from the editor as a chip, its session toggle and suggestions (selectionChip.ts). */
const selectionBar = new SelectionBar(promptBox, mentionMenu, post);
mentionMenu.chips.after(selectionBar.el);
promptBox.addEventListener('keydown', (e) => {
  if (commandMenu.onKey(e) || mentionMenu.onKey(e)) return;
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(e.altKey);
  }
});
modeButton.addEventListener('click', () => post({ type: 'set-mode', mode: state.view?.mode === 'plan' ? 'build' : 'plan' }));
promptBox.addEventListener('input', saveUi);
sendButton.addEventListener('click', () => send());
// "Run in background": the text only, as a new session in its own worktree (host.promptBackground).
backgroundButton.addEventListener('click', () => {
  const text = promptBox.value.trim();
  if (!text || state.connection !== 'running') return;
  post({ type: 'prompt-background', text });
  promptBox.value = '';
  promptBox.dispatchEvent(new Event('input'));
  promptBox.focus();
});
stopButton.addEventListener('click', () => post({ type: 'cancel' }));

// ---- messages from the extension --------------------------------------------------------

function onEvent(event: AgentEvent): void {
  if (event.type === 'review' && !event.parentSessionId) reviewList.set(event.sessionId, event.files);
  const view = state.view;
  if (!view || view.sessionId !== viewSessionOf(event)) return;
  applyEvent(view, event);
  scheduleRender();
  announcer.update(view);
  if (event.type === 'turn-end') post({ type: 'mcp-status' }); // servers start at a first turn
}

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const message = e.data;
  if (!message || typeof message !== 'object') return;
  switch (message.type) {
    case 'state':
      state = message.state;
      renderedSession = undefined; // a new view (e.g. reloaded after a Restore): its items are drawn anew
      renderAll();
      reviewList.showing(state.activeSessionId, state.connection === 'running');
      restore.showing(state.activeSessionId);
      announcer.prime(state.view);
      modelPicker.connected(state.connection === 'running');
      proposalList.set(state.proposals, state.activeSessionId);
      backgroundQuestions.set(state.backgroundQuestions);
      return;
    case 'event':
      onEvent(message.event);
      return;
    case 'prompt-sent': {
      if (!state.view || state.view.sessionId !== message.sessionId) {
        state.view = emptyView(message.sessionId);
        state.activeSessionId = message.sessionId;
      }
      promptSent(state.view, message.text, message.context, message.steer, message.images);
      restore.done(message.sessionId); // no redo past a new prompt
      scheduleRender();
      return;
    }
    case 'prompt-failed':
      if (state.view?.sessionId === message.sessionId) {
        promptFailed(state.view, message.text, message.message);
        scheduleRender();
      }
      return;
    case 'sessions':
      state.sessions = message.sessions;
      if (message.activeSessionId) state.activeSessionId = message.activeSessionId;
      renderSessions();
      proposalList.showing(state.activeSessionId);
      return;
    case 'proposals':
      proposalList.set(message.proposals);
      return;
    case 'background-questions':
      backgroundQuestions.set(message.questions);
      return;
    case 'proposal-hunks':
    case 'proposal-kept': {
      if (message.type === 'proposal-hunks') hunkCards.set(message.requestId, message.hunks);
      else hunkCards.setKept(message.requestId, message.kept, message.total);
      for (const item of state.view?.items ?? []) {
        if (item.kind === 'tool' && item.permission?.requestId === message.requestId) rerender(item);
      }
      return;
    }
    case 'add-selection':
      selectionBar.add(message.item, message.session);
      return;
    case 'focus-prompt':
      if (message.text) promptBox.value = message.text;
      promptBox.focus();
      return;
    case 'mcp':
      renderMcp(message.servers);
      return;
    case 'commands':
      commandMenu.setCommands(message.commands);
      return;
    case 'models':
      modelPicker.setModels(message.models, message.current, message.defaultModel);
      keyNotice.render(state.connection === 'running' ? modelPicker.missingKey() : undefined);
      return;
    case 'mention-results':
      mentionMenu.setResults(message.kind, message.query, message.items);
      return;
    case 'mention-item':
      mentionMenu.added(message.item, message.error);
      return;
    case 'session-search':
      history.setResults(message.query, message.sessions);
      return;
    case 'setup':
      state.setup = message.setup;
      renderBanner();
      return;
    case 'show-history':
      history.toggle();
      return;
    case 'revert-preview':
      restore.previewed(message);
      return;
    case 'reverted':
      restore.reverted(message);
      return;
    case 'unreverted':
      restore.unreverted(message.sessionId, message.error);
      return;
    case 'earlier-messages':
      earlier.loaded(message);
      return;
    case 'review-files':
      reviewList.set(message.sessionId, message.files);
      return;
    case 'background-diff':
      backgroundReview.diffed(message.sessionId, message.diff, message.error);
      return;
    case 'background-applied':
      backgroundReview.applied(message.sessionId, message.result, message.error, message.mergeEditor);
      return;
    case 'background-resolved':
      backgroundReview.resolved(message.sessionId, message.path, { how: message.how, note: message.note });
      return;
    case 'background-removed':
      backgroundReview.removedDone(message.sessionId, message.error);
      return;
    case 'code-context': // the workspace folder and the editor's colour theme (markdown.ts)
      setWorkspaceRoot(message.root);
      highlighter.setTheme(message.theme);
      renderedSession = undefined; // paths drawn before are shown relative now
      scheduleRender();
      return;
    case 'grammar':
      highlighter.addGrammar(message.lang, message.grammars);
      return;
  }
});

renderAll();
post({ type: 'ready' });
post({ type: 'mcp-status' });
