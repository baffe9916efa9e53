// Reviewing a proposed edit: a permission-request that carries an edit opens VS Code's diff editor
// (the file as it is now vs. the proposed result, a virtual document) with Accept / Always / Reject
// in the editor title and as CodeLenses at the change ("Always" lenses name what they allow, in the
// server's words, and only when the server offers "always"). Answers go to the server with agent/approve;
// the accepted edit then arrives as the server's workspace/applyEdit (so Ctrl+Z undoes it).
import * as vscode from 'vscode';
import type { AgentHost } from './host';
import type { PermissionRequestEvent } from './protocol/generated';
import { applyUnifiedDiff, fileChanges, firstChangedLine, proposedText } from './edits';

export const PROPOSED_SCHEME = 'agentls-proposed';

interface ReviewFile {
  /** The real file. */
  uri: vscode.Uri;
  /** The proposed content (right side of the diff). */
  proposed: vscode.Uri;
  /** Left side: the real file, or an empty virtual document when the edit creates the file. */
  original: vscode.Uri;
  line: number;
}

interface Review {
  requestId: string;
  sessionId: string;
  title: string;
  files: ReviewFile[];
  /** What "always" allows (the event's label); undefined: not offered. */
  always?: string;
}

export type Decision = 'once' | 'always' | 'reject';

/** The 0-based line where two texts first differ (where a file's diff is opened). */
export function firstDifferentLine(before: string, after: string): number {
  const a = before.split('\n');
  const b = after.split('\n');
  let line = 0;
  while (line < a.length && line < b.length && a[line] === b[line]) line += 1;
  return Math.min(line, Math.max(b.length - 1, 0));
}
export type Scope = 'session' | 'project';

export class ApprovalController
  implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable
{
  private readonly reviews = new Map<string, Review>();
  private readonly contents = new Map<string, string>();
  private readonly contentChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChange = this.contentChanged.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly host: AgentHost,
    /** A protocol uri (from the server) as a vscode.Uri. */
    private readonly asUri: (uri: string) => vscode.Uri,
    private readonly log: (message: string) => void,
  ) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this),
      vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: PROPOSED_SCHEME }], this),
      host.onEvent((event) => {
        if (event.type === 'permission-request') void this.requested(event);
        else if (event.type === 'permission-resolved') this.resolved(event.requestId);
        else if (event.type === 'turn-end') this.resolveSession(event.sessionId);
      }),
      host.onDidChange(() => {
        if (host.connection !== 'running') for (const id of [...this.reviews.keys()]) this.resolved(id);
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => this.updateContext()),
      this.contentChanged,
      this.lensesChanged,
    );
  }

  // ---- providers ----------------------------------------------------------------------

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    const key = document.uri.toString();
    for (const review of this.reviews.values()) {
      for (const file of review.files) {
        const onFile = file.uri.toString() === key;
        if (!onFile && file.proposed.toString() !== key) continue;
        const line = Math.min(file.line, Math.max(document.lineCount - 1, 0));
        const range = new vscode.Range(line, 0, line, 0);
        lenses.push(
          new vscode.CodeLens(range, {
            title: `agentls: ${review.title}`,
            command: 'agentls.showEditDiff',
            arguments: [review.requestId],
            tooltip: 'Show the proposed change side by side',
          }),
        );
        const answers: vscode.Command[] = [{ title: '$(check) Accept', command: 'agentls.acceptEdit' }];
        if (review.always) {
          answers.push(
            { title: `$(check-all) ${review.always}`, command: 'agentls.acceptEditAlways', tooltip: `${review.always}, for the rest of this session` },
            { title: '$(check-all) … in this project', command: 'agentls.acceptEditAlwaysProject', tooltip: `${review.always}, in every session of this project` },
          );
        }
        answers.push({ title: '$(close) Reject', command: 'agentls.rejectEdit' });
        for (const answer of answers) lenses.push(new vscode.CodeLens(range, { ...answer, arguments: [review.requestId] }));
      }
    }
    return lenses;
  }

  // ---- requests -----------------------------------------------------------------------

  private async requested(event: PermissionRequestEvent): Promise<void> {
    try {
      const review = await this.buildReview(event);
      if (!review) return;
      // Resolved while we read the file?
      const found = this.host.findPermission(event.requestId);
      if (found && found.item.permission?.state !== 'pending') return;
      this.reviews.set(review.requestId, review);
      this.lensesChanged.fire();
      this.updateContext();
      if (vscode.workspace.getConfiguration('agentls').get<boolean>('approvals.openDiff', true)) {
        await this.openDiff(review.requestId, true);
      }
    } catch (err) {
      this.log(`agentls: could not prepare the diff for ${event.title}: ${String(err)}`);
    }
  }

  private async currentText(uri: vscode.Uri): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) return open.getText();
    try {
      return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return undefined;
    }
  }

  private async buildReview(event: PermissionRequestEvent): Promise<Review | undefined> {
    const files: ReviewFile[] = [];
    const query = `request=${encodeURIComponent(event.requestId)}`;
    const add = (uri: vscode.Uri, original: string | undefined, proposed: string, line: number): void => {
      const proposedUri = uri.with({ scheme: PROPOSED_SCHEME, query, fragment: '' });
      this.contents.set(proposedUri.toString(), proposed);
      let originalUri = uri;
      if (original === undefined || uri.scheme !== 'file') {
        originalUri = uri.with({ scheme: PROPOSED_SCHEME, query: `${query}&side=original`, fragment: '' });
        this.contents.set(originalUri.toString(), original ?? '');
      }
      files.push({ uri, proposed: proposedUri, original: originalUri, line });
      this.contentChanged.fire(proposedUri);
    };
    if (event.changes?.length) {
      // A change to several files (a rename): each file's text before and after, one diff each.
      for (const change of event.changes) {
        const uri = vscode.Uri.file(change.path);
        const current = change.oldText === null || change.oldText === undefined ? undefined : await this.currentText(uri);
        add(uri, current, change.newText, firstDifferentLine(current ?? '', change.newText));
      }
    } else if (event.edit) {
      for (const change of fileChanges(event.edit)) {
        const uri = this.asUri(change.uri);
        const current = await this.currentText(uri);
        add(uri, change.created ? current : (current ?? ''), proposedText(current, change), firstChangedLine(change));
      }
    } else if (event.diff && typeof event.input.path === 'string') {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const path = event.input.path;
      const uri = path.startsWith('/') || !folder ? vscode.Uri.file(path) : vscode.Uri.joinPath(folder, path);
      const current = await this.currentText(uri);
      const proposed = applyUnifiedDiff(current ?? '', event.diff);
      if (proposed === undefined) return undefined;
      const hunk = /^@@ -(\d+)/m.exec(event.diff);
      add(uri, current, proposed, hunk ? Math.max(Number(hunk[1]) - 1, 0) : 0);
    }
    if (!files.length) return undefined;
    return { requestId: event.requestId, sessionId: event.sessionId, title: event.title, files, always: event.always ?? undefined };
  }

  private resolved(requestId: string): void {
    const review = this.reviews.get(requestId);
    if (!review) return;
    this.reviews.delete(requestId);
    const uris = new Set(review.files.flatMap((f) => [f.proposed.toString(), f.original.toString()]));
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && uris.has(tab.input.modified.toString()));
    if (tabs.length) void vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
    for (const uri of uris) this.contents.delete(uri);
    this.lensesChanged.fire();
    this.updateContext();
  }

  private resolveSession(sessionId: string): void {
    for (const review of [...this.reviews.values()]) {
      if (review.sessionId === sessionId) this.resolved(review.requestId);
    }
  }

  // ---- commands -----------------------------------------------------------------------

  get pendingCount(): number {
    return this.reviews.size;
  }

  /** The request a command means: an id, a proposed document's uri, the active diff, or the only one. */
  requestFor(arg: unknown): string | undefined {
    if (typeof arg === 'string' && this.reviews.has(arg)) return arg;
    const fromUri = (uri: vscode.Uri | undefined): string | undefined => {
      if (!uri) return undefined;
      if (uri.scheme === PROPOSED_SCHEME) {
        const match = /(?:^|&)request=([^&]+)/.exec(uri.query);
        return match ? decodeURIComponent(match[1]) : undefined;
      }
      for (const review of this.reviews.values()) {
        if (review.files.some((f) => f.uri.toString() === uri.toString())) return review.requestId;
      }
      return undefined;
    };
    if (arg instanceof vscode.Uri) {
      const id = fromUri(arg);
      if (id) return id;
    }
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff) {
      const id = fromUri(input.modified);
      if (id) return id;
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    const id = fromUri(active);
    if (id) return id;
    if (this.reviews.size === 1) return [...this.reviews.keys()][0];
    return undefined;
  }

  async decide(arg: unknown, decision: Decision, scope: Scope = 'session'): Promise<void> {
    const requestId = this.requestFor(arg);
    const found = requestId ? this.host.findPermission(requestId) : undefined;
    if (!requestId || !found) {
      void vscode.window.showInformationMessage('agentls: no proposed edit is waiting for an answer.');
      return;
    }
    if (decision === 'always' && !found.item.permission?.always) {
      void vscode.window.showInformationMessage('agentls: "always" is not offered for this edit; accept it once or reject it.');
      return;
    }
    let feedback: string | undefined;
    if (decision === 'reject') {
      const answer = await vscode.window.showInputBox({
        title: `Reject: ${found.item.permission?.title ?? found.item.title}`,
        prompt: 'Tell the agent why, or what to do instead (optional). Escape keeps the edit waiting.',
        placeHolder: 'e.g. keep the old name, change the caller instead',
        ignoreFocusOut: true,
      });
      if (answer === undefined) return;
      feedback = answer.trim() || undefined;
    }
    await this.host.approve(found.view.sessionId, requestId, decision, feedback, decision === 'always' ? scope : undefined);
  }

  async openDiff(arg: unknown, preserveFocus = false): Promise<void> {
    const requestId = this.requestFor(arg);
    const review = requestId ? this.reviews.get(requestId) : undefined;
    if (!review) {
      void vscode.window.showInformationMessage('agentls: this request has no diff to show (it was answered, or it is not an edit).');
      return;
    }
    // Every file's diff (a rename changes several), each in its own tab; the first one last, so it
    // is the one showing.
    const several = review.files.length > 1;
    for (const file of [...review.files].reverse()) {
      const name = file.uri.path.slice(file.uri.path.lastIndexOf('/') + 1);
      await vscode.commands.executeCommand(
        'vscode.diff',
        file.original,
        file.proposed,
        `${name} ↔ proposed by agentls`,
        { preview: !several, preserveFocus, selection: new vscode.Range(file.line, 0, file.line, 0) },
      );
    }
    this.updateContext();
  }

  private updateContext(): void {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const reviewing =
      input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME && !!this.requestFor(input.modified);
    void vscode.commands.executeCommand('setContext', 'agentls.reviewingEdit', reviewing);
    void vscode.commands.executeCommand('setContext', 'agentls.pendingEdits', this.reviews.size > 0);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.reviews.clear();
    this.contents.clear();
  }
}
