// The inline chat's widget in the editor (inlineChat.ts holds what it does): a comment thread of
// VS Code's comments API, the stable way to put an input into the editor at a range. The thread
// sits under the selection with a reply box (Enter sends, Shift+Enter a new line: package.json's
// keybindings), the question and the agent's progress and answer as its comments, and Stop and
// Close in its title. Opened by agentls.inlineChat (Ctrl+I on a selection, the code action
// "Agent: edit here…").
import * as vscode from 'vscode';
import type { AgentHost } from './host';
import { InlineChat, type InlineComment, type InlineThread } from './inlineChat';

export const INLINE_CONTROLLER_ID = 'agentls.inline';
const IDLE = 'agentls.inline.idle';
const RUNNING = 'agentls.inline.running';

class CommentThreadView implements InlineThread {
  constructor(
    readonly thread: vscode.CommentThread,
    private readonly agentIcon: vscode.Uri,
  ) {}

  show(comments: InlineComment[]): void {
    this.thread.comments = comments.map((c) => {
      const body = new vscode.MarkdownString(c.body);
      body.supportThemeIcons = false;
      return {
        body,
        mode: vscode.CommentMode.Preview,
        author: c.author === 'you' ? { name: 'You' } : { name: 'agentls', iconPath: this.agentIcon },
      };
    });
  }

  setRunning(running: boolean): void {
    this.thread.contextValue = running ? RUNNING : IDLE;
    this.thread.label = running ? 'agentls · working…' : 'agentls';
  }

  reveal(line: number, uri?: string): void {
    const at = new vscode.Range(line, 0, line, 0);
    if (uri) {
      // Another file than the selection's: opened (the proposal is drawn in its editor, not a diff).
      void vscode.window.showTextDocument(vscode.Uri.parse(uri), { selection: at, preserveFocus: true, preview: true }).then(undefined, () => undefined);
      return;
    }
    const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === this.thread.uri.toString());
    editor?.revealRange(at, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  dispose(): void {
    this.thread.dispose();
  }
}

/** Whether two ranges share a line. */
function linesOverlap(a: vscode.Range, b: vscode.Range): boolean {
  return a.start.line <= b.end.line && b.start.line <= a.end.line;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function threadOf(arg: unknown): vscode.CommentThread | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  return 'thread' in arg ? (arg as vscode.CommentReply).thread : 'uri' in arg && 'comments' in arg ? (arg as vscode.CommentThread) : undefined;
}

export class InlineChats implements vscode.Disposable {
  /** The selection offered as a commenting range while the inline chat opens. */
  private armed?: { uri: string; range: vscode.Range; offered: () => void };
  private readonly controller: vscode.CommentController;
  private readonly chats = new Map<vscode.CommentThread, InlineChat>();
  /** The sessions of the chats closed in this window. */
  private readonly sessions = new Set<string>();
  /** The chat last opened or written in (what Escape and a bare Close mean). */
  private last?: InlineChat;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly host: AgentHost,
    private readonly agentIcon: vscode.Uri,
  ) {
    this.controller = vscode.comments.createCommentController(INLINE_CONTROLLER_ID, 'agentls inline chat');
    this.controller.options = {
      prompt: 'Ask agentls about this code, or what to change',
      placeHolder: 'Ask agentls to change or explain the selected code (Enter sends, Shift+Enter: new line)',
    };
    this.disposables.push(
      this.controller,
      vscode.workspace.onDidCloseTextDocument((document) => {
        for (const [thread, chat] of this.chats) if (thread.uri.toString() === document.uri.toString()) void this.close(chat);
      }),
    );
  }

  /** Open the inline chat at a selection: the arguments (a code action's uri and range), else the
   * active editor's selection (its line when nothing is selected). The widget is VS Code's own new
   * comment (workbench.action.addComment on a commenting range offered only for this selection),
   * so its reply box has the focus at once; the chat starts when its first text is sent. */
  async open(uriArg?: unknown, rangeArg?: unknown): Promise<void> {
    const active = vscode.window.activeTextEditor;
    const document =
      uriArg instanceof vscode.Uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uriArg.toString()) : active?.document;
    if (!document || document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('agentls: open a file and select the code to ask about.');
      return;
    }
    let range: vscode.Range = rangeArg instanceof vscode.Range ? rangeArg : (active?.selection ?? new vscode.Range(0, 0, 0, 0));
    if (range.isEmpty) range = document.lineAt(range.start.line).range;
    // A chat already on these lines: one still working is shown again; answered ones make way
    // (VS Code's Add Comment would only fold a thread that is there).
    const here = [...this.chats].filter(([t]) => t.uri.toString() === document.uri.toString() && t.range && linesOverlap(t.range, range));
    const busy = here.find(([, chat]) => chat.running || chat.waiting);
    if (busy) {
      busy[0].collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      return;
    }
    for (const [, chat] of here) await this.close(chat);
    const editor = await vscode.window.showTextDocument(document, { selection: range, preserveFocus: false });
    editor.selection = new vscode.Selection(range.start, range.end);
    // Offer this selection (alone) as a commenting range, wait until VS Code has asked for it.
    const offered = new Promise<void>((resolve) => {
      this.armed = { uri: document.uri.toString(), range, offered: resolve };
    });
    this.controller.commentingRangeProvider = this.ranges; // assigned again: VS Code asks anew
    const asked = await Promise.race([offered.then(() => true), sleep(2000).then(() => false)]);
    if (asked) {
      await sleep(150); // the answer reaches the editor
      await vscode.commands.executeCommand('setContext', 'agentls.inlineChatNew', true);
      await vscode.commands.executeCommand('workbench.action.addComment');
    } else {
      // No new comment (commenting turned off?): a thread of our own, its reply box a click away.
      this.adopt(this.controller.createCommentThread(document.uri, range, []));
    }
    // Not asked anew now: a new comment off every commenting range loses its reply box. The
    // range stays offered until VS Code asks again (the document changes).
    this.armed = undefined;
  }

  private readonly ranges: vscode.CommentingRangeProvider = {
    provideCommentingRanges: (document: vscode.TextDocument): vscode.Range[] => {
      const armed = this.armed;
      if (!armed || armed.uri !== document.uri.toString()) return [];
      setTimeout(armed.offered, 0);
      return [armed.range];
    },
  };

  /** A thread becomes an inline chat: the new comment when its first text is sent. */
  private adopt(thread: vscode.CommentThread): InlineChat {
    thread.canReply = true;
    thread.contextValue = IDLE;
    thread.label = 'agentls';
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    const r = thread.range ?? new vscode.Range(0, 0, 0, 0);
    const wire = { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
    const chat = new InlineChat(this.host, new CommentThreadView(thread, this.agentIcon), { uri: thread.uri.toString(), range: wire });
    this.chats.set(thread, chat);
    this.last = chat;
    return chat;
  }

  private chatOf(arg: unknown): InlineChat | undefined {
    const thread = threadOf(arg);
    const chat = thread ? this.chats.get(thread) : undefined;
    return chat ?? (this.last && !this.last.isClosed ? this.last : undefined);
  }

  /** The reply box's Send (a CommentReply): the first text of a new comment starts its chat. */
  async submit(reply: unknown): Promise<void> {
    const thread = threadOf(reply);
    const text = typeof reply === 'object' && reply !== null && 'text' in reply ? String((reply as vscode.CommentReply).text) : '';
    if (!thread || !text.trim()) return;
    const chat = this.chats.get(thread) ?? this.adopt(thread);
    void vscode.commands.executeCommand('setContext', 'agentls.inlineChatNew', false);
    this.last = chat;
    // Not awaited: VS Code empties the reply box once this command returns, not at the turn's end.
    void chat.submit(text);
  }

  /** A proposal was answered hunk by hunk (approvals.ts): its chat says how many were kept. */
  kept(requestId: string, kept: number, total: number): void {
    for (const chat of this.chats.values()) chat.kept(requestId, kept, total);
  }

  async stop(arg: unknown): Promise<void> {
    await this.chatOf(arg)?.stop();
  }

  async closeCommand(arg: unknown): Promise<void> {
    const chat = this.chatOf(arg);
    if (chat) await this.close(chat);
    else threadOf(arg)?.dispose(); // a new comment not sent yet
  }

  /** Whether a session is an inline chat's, open or closed since: its proposals are drawn in
   * place (never in a diff editor), and deciding them leaves the focus in the editor. */
  owns(sessionId: string): boolean {
    return this.sessions.has(sessionId) || [...this.chats.values()].some((c) => c.sessionId === sessionId);
  }

  private async close(chat: InlineChat): Promise<void> {
    if (chat.sessionId) this.sessions.add(chat.sessionId);
    for (const [thread, c] of this.chats) if (c === chat) this.chats.delete(thread);
    if (this.last === chat) this.last = undefined;
    await chat.close();
  }

  dispose(): void {
    for (const chat of this.chats.values()) void chat.close();
    this.chats.clear();
    for (const d of this.disposables) d.dispose();
  }
}
