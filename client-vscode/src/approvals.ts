// Reviewing a proposed edit: a permission-request that carries an edit opens VS Code's diff editor
// (the file as it is now vs. the proposed result, a writable virtual document: reviewFs.ts) with
// Accept / Always / Reject in the editor title and as CodeLenses at the change ("Always" lenses name
// what they allow, in the server's words, and only when the server offers "always"). A proposal of
// several hunks also gets Accept hunk / Reject hunk lenses on each one (reviewHunks.ts): the answer
// goes once every hunk is decided, with the accepted ones as the `edit`; a proposal the user edited
// goes back as the user's text ("Accept my version"). Answers go to the server with agent/approve;
// the accepted edit then arrives as the server's workspace/applyEdit (so Ctrl+Z undoes it).
import * as vscode from 'vscode';
import type { AgentHost } from './host';
import type { PermissionRequestEvent, ProposalRebasedEvent } from './protocol/generated';
import { applyUnifiedDiff, fileChanges, firstChangedLine, proposedText } from './edits';
import { PROPOSED_SCHEME, ProposedFiles } from './reviewFs';
import { addedLines, cardHunks, hunkAtLine, hunkMarks, outcome, proposalHunks, replacementEdit, subsetEdit, type HunkState, type ProposalHunk } from './reviewHunks';
import type { HostMessage } from './model/messages';

export { PROPOSED_SCHEME } from './reviewFs';

interface ReviewFile {
  /** The real file. */
  uri: vscode.Uri;
  /** The proposed content (right side of the diff). */
  proposed: vscode.Uri;
  /** Left side: the real file, or an empty virtual document when the edit creates the file. */
  original: vscode.Uri;
  line: number;
  /** The file's text when the proposal came ('' for a new file), and the proposed text. */
  base: string;
  proposedText: string;
  /** The file's uri in the request's WorkspaceEdit; undefined: no edit (a rename's changes, a diff). */
  editUri?: string;
  /** Its hunks (the edit's TextEdits) and what the user decided for each. */
  hunks: ProposalHunk[];
  states: HunkState[];
}

interface Review {
  requestId: string;
  sessionId: string;
  title: string;
  files: ReviewFile[];
  /** What "always" allows (the event's label); undefined: not offered. */
  always?: string;
  /** The request's WorkspaceEdit (what a partial accept is cut from). */
  edit?: unknown;
  /** The permission-request, redrawn from when the user types in the file (proposal-rebased). */
  event?: PermissionRequestEvent;
  /** Lines the user changed that the proposal changes too ("line 4 of app.py"): not acceptable. */
  conflict?: string;
}

/** A hunk as a lens command names it. */
export interface HunkRef {
  requestId: string;
  file: number;
  hunk: number;
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

/** How many answered proposals' kept hunks are remembered for the panel's cards. */
const MAX_KEPT = 200;

/** How a hunk's added text looks in the file's editor (after or before a line). */
const ADDED_STYLE: vscode.ThemableDecorationAttachmentRenderOptions = {
  color: new vscode.ThemeColor('gitDecoration.addedResourceForeground'),
  backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
  fontStyle: 'italic',
  margin: '0 0 0 1.5em',
};

/** The first line of the file a hunk's marks are on (its lenses go above it). */
function hunkLine(hunk: ProposalHunk): number {
  const marks = hunkMarks(hunk);
  return Math.min(...marks.removed, ...marks.added.map((a) => a.line), hunk.oldStart);
}

export class ApprovalController implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly reviews = new Map<string, Review>();
  private readonly files = new ProposedFiles();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly answered = new vscode.EventEmitter<string>();
  /** A proposal was answered from a command or a lens (its request id). */
  readonly onDidAnswer = this.answered.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** A waiting hunk in the file's own editor: its removed lines marked, its added lines as text
   * after them (reviewHunks.ts hunkMarks); no diff editor needed. */
  private readonly removedLines = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly addedText = vscode.window.createTextEditorDecorationType({});
  /** Whether a session's proposals stay in the file's editor, never in a diff (inline chat's). */
  drawnInPlace?: (sessionId: string) => boolean;

  constructor(
    private readonly host: AgentHost,
    /** A protocol uri (from the server) as a vscode.Uri. */
    private readonly asUri: (uri: string) => vscode.Uri,
    private readonly log: (message: string) => void,
    /** To the panel: a proposal's hunks for its card, and how many were kept (webview/proposals.ts). */
    private readonly post: (message: HostMessage) => void = () => undefined,
  ) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this.files, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: PROPOSED_SCHEME }], this),
      host.onEvent((event) => {
        if (event.type === 'permission-request') void this.requested(event);
        else if (event.type === 'proposal-rebased') void this.rebased(event);
        else if (event.type === 'permission-resolved') this.resolved(event.requestId);
        else if (event.type === 'turn-end') this.resolveSession(event.sessionId);
      }),
      host.onDidChange(() => {
        if (host.connection !== 'running') for (const id of [...this.reviews.keys()]) this.resolved(id);
      }),
      // An edit of a proposal turns its hunk lenses into "Accept my version".
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === PROPOSED_SCHEME) this.lensesChanged.fire();
      }),
      this.files.onDidWrite(() => this.lensesChanged.fire()),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.updateContext();
        this.decorate();
      }),
      this.lensesChanged.event(() => {
        this.decorate();
        this.postHunks();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      this.removedLines,
      this.addedText,
      this.files,
      this.lensesChanged,
      this.answered,
    );
  }

  // ---- providers ----------------------------------------------------------------------

  /** A review document's text (the proposal as the server sent it or as the user saved it). */
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.files.get(uri) ?? '';
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    const key = document.uri.toString();
    const at = (line: number): vscode.Range => {
      const clamped = Math.min(Math.max(line, 0), Math.max(document.lineCount - 1, 0));
      return new vscode.Range(clamped, 0, clamped, 0);
    };
    for (const review of this.reviews.values()) {
      review.files.forEach((file, fileIndex) => {
        const onFile = file.uri.toString() === key;
        const onProposal = file.proposed.toString() === key;
        if (!onFile && !onProposal) return;
        if (review.conflict) {
          // The user changed lines the proposal changes too: it can only be rejected (or the typing undone).
          const top = at(0);
          lenses.push(new vscode.CodeLens(top, { title: `agentls: conflict, you changed ${review.conflict}`, command: 'agentls.showEditDiff', arguments: [review.requestId], tooltip: 'The proposal changes these lines too; accepting would write over your text' }));
          lenses.push(new vscode.CodeLens(top, { title: '$(close) Reject', command: 'agentls.rejectEdit', arguments: [review.requestId] }));
          return;
        }
        const edited = this.isEdited(file);
        const perHunk = !edited && this.hunkCount(review) > 1;
        const first = file.hunks[0];
        // In the file's own editor: Accept all / Reject all at the top of the file, each hunk's
        // own lenses above its first line (drawn in place: hunkMarks).
        const range = at(onProposal && first ? first.newStart : onFile && file.hunks.length ? 0 : file.line);
        const lens = (command: vscode.Command): void => {
          lenses.push(new vscode.CodeLens(range, command));
        };
        lens({ title: `agentls: ${review.title}`, command: 'agentls.showEditDiff', arguments: [review.requestId], tooltip: 'Show the proposed change side by side' });
        const args = [review.requestId];
        if (edited) {
          lens({ title: '$(check) Accept my version', command: 'agentls.acceptEdit', arguments: args, tooltip: 'Accept the proposal as you edited it' });
        } else {
          lens({ title: perHunk ? '$(check) Accept all' : '$(check) Accept', command: 'agentls.acceptEdit', arguments: args });
          if (review.always) {
            lens({ title: `$(check-all) ${review.always}`, command: 'agentls.acceptEditAlways', arguments: args, tooltip: `${review.always}, for the rest of this session` });
            lens({ title: '$(check-all) … in this project', command: 'agentls.acceptEditAlwaysProject', arguments: args, tooltip: `${review.always}, in every session of this project` });
          }
        }
        lens({ title: perHunk ? '$(close) Reject all' : '$(close) Reject', command: 'agentls.rejectEdit', arguments: args });
        if (!perHunk) {
          // One hunk: its Accept / Reject also right above it in the file.
          const only = file.hunks[0];
          if (onFile && only && !edited && hunkLine(only) > 0) {
            const where = at(hunkLine(only));
            lenses.push(new vscode.CodeLens(where, { title: '$(check) Accept', command: 'agentls.acceptEdit', arguments: args }));
            lenses.push(new vscode.CodeLens(where, { title: '$(close) Reject', command: 'agentls.rejectEdit', arguments: args }));
          }
          return;
        }
        file.hunks.forEach((hunk, hunkIndex) => {
          const where = at(onProposal ? hunk.newStart : hunkLine(hunk));
          const ref: HunkRef = { requestId: review.requestId, file: fileIndex, hunk: hunkIndex };
          const state = file.states[hunkIndex];
          const name = `hunk ${hunkIndex + 1}/${file.hunks.length}`;
          const commands: vscode.Command[] =
            state === 'pending'
              ? [
                  { title: `$(check) Accept ${name}`, command: 'agentls.acceptHunk', arguments: [ref] },
                  { title: `$(close) Reject ${name}`, command: 'agentls.rejectHunk', arguments: [ref] },
                ]
              : [
                  {
                    title: state === 'accepted' ? `$(pass-filled) ${name} accepted` : `$(circle-slash) ${name} rejected`,
                    command: 'agentls.resetHunk',
                    arguments: [ref],
                    tooltip: 'Undecide this hunk',
                  },
                ];
          for (const command of commands) lenses.push(new vscode.CodeLens(where, command));
        });
      });
    }
    return lenses;
  }

  /** Draw each waiting proposal's undecided and accepted hunks in the file's own editors (not in
   * a diff editor, which shows them itself). */
  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const removed: vscode.DecorationOptions[] = [];
      const added: vscode.DecorationOptions[] = [];
      const found = editor.document.uri.scheme === 'file' && !this.inDiff(editor) ? this.fileOf(editor.document.uri) : undefined;
      if (found && found.side === 'old' && !this.isEdited(found.file)) {
        const { file } = found;
        const last = Math.max(editor.document.lineCount - 1, 0);
        file.hunks.forEach((hunk, i) => {
          if (file.states[i] === 'rejected') return;
          const marks = hunkMarks(hunk);
          const hover = new vscode.MarkdownString();
          hover.appendMarkdown(`**agentls proposes** (hunk ${i + 1}/${file.hunks.length}${file.states[i] === 'accepted' ? ', accepted' : ''}):\n\n`);
          hover.appendCodeblock(addedLines(hunk).join('\n') || '(these lines removed)', editor.document.languageId);
          for (const line of marks.removed) {
            if (line <= last) removed.push({ range: new vscode.Range(line, 0, line, 0), hoverMessage: hover });
          }
          for (const mark of marks.added) {
            if (mark.line > last) continue;
            const text = { contentText: `${mark.before ? '' : '→ '}${mark.text}${mark.before ? '  ↓' : ''}`, ...ADDED_STYLE };
            const end = editor.document.lineAt(mark.line).range.end.character;
            added.push({
              range: mark.before ? new vscode.Range(mark.line, 0, mark.line, 0) : new vscode.Range(mark.line, end, mark.line, end),
              hoverMessage: hover,
              renderOptions: mark.before ? { before: text } : { after: text },
            });
          }
        });
      }
      editor.setDecorations(this.removedLines, removed);
      editor.setDecorations(this.addedText, added);
    }
  }

  /** What was kept of the proposals answered hunk by hunk (the panel asks again when it reloads). */
  private readonly keptCounts = new Map<string, { kept: number; total: number; hunks: ReturnType<typeof cardHunks> }>();

  /** The panel (re)loaded: the waiting proposals' hunks and what was kept of the answered ones. */
  repost(): void {
    for (const [requestId, k] of this.keptCounts) {
      this.post({ type: 'proposal-hunks', requestId, hunks: k.hunks });
      this.post({ type: 'proposal-kept', requestId, kept: k.kept, total: k.total });
    }
    this.postHunks();
  }

  private cardOf(review: Review): ReturnType<typeof cardHunks> {
    return cardHunks(review.files.map((f) => ({ ...f, path: vscode.workspace.asRelativePath(f.uri, false) })));
  }

  /** Each waiting proposal of several hunks to the panel's card, with what is decided so far. */
  private postHunks(): void {
    for (const review of this.reviews.values()) {
      if (this.hunkCount(review) < 2 || review.files.some((f) => this.isEdited(f))) continue;
      this.post({ type: 'proposal-hunks', requestId: review.requestId, hunks: this.cardOf(review) });
    }
  }

  /** An editor that is a side of a diff editor (or in no editor group). */
  private inDiff(editor: vscode.TextEditor): boolean {
    if (editor.viewColumn === undefined) return true;
    const group = vscode.window.tabGroups.all.find((g) => g.viewColumn === editor.viewColumn);
    return group?.activeTab?.input instanceof vscode.TabInputTextDiff;
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
      const inPlace = this.drawnInPlace?.(review.sessionId) ?? false; // an inline chat's: in its editor
      // A background session's edit is in its worktree: asked in the panel's labelled card, never
      // a diff editor opened over what the user is working on.
      if (!inPlace && !this.host.isBackground(review.sessionId) && vscode.workspace.getConfiguration('agentls').get<boolean>('approvals.openDiff', false)) {
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
    const add = (uri: vscode.Uri, original: string | undefined, proposed: string, line: number, extra?: Pick<ReviewFile, 'editUri' | 'hunks'>): void => {
      const proposedUri = uri.with({ scheme: PROPOSED_SCHEME, query, fragment: '' });
      this.files.set(proposedUri, proposed);
      let originalUri = uri;
      if (original === undefined || uri.scheme !== 'file') {
        originalUri = uri.with({ scheme: PROPOSED_SCHEME, query: `${query}&side=original`, fragment: '' });
        this.files.set(originalUri, original ?? '', true);
      }
      const hunks = extra?.hunks ?? [];
      files.push({
        uri,
        proposed: proposedUri,
        original: originalUri,
        line,
        base: original ?? '',
        proposedText: proposed,
        editUri: extra?.editUri,
        hunks,
        states: hunks.map((): HunkState => 'pending'),
      });
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
        const hunks = change.deleted ? [] : proposalHunks(change);
        add(uri, change.created ? current : (current ?? ''), proposedText(current, change), firstChangedLine(change), { editUri: change.uri, hunks });
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
    return {
      requestId: event.requestId,
      sessionId: event.sessionId,
      title: event.title,
      files,
      always: event.always ?? undefined,
      edit: event.edit ?? undefined,
      event,
    };
  }

  /** The user typed in a file of a waiting proposal: the server merged it into their text and
   * sends its edit on the document now (redrawn), or says the same lines changed (a conflict). */
  private async rebased(event: ProposalRebasedEvent): Promise<void> {
    const review = this.reviews.get(event.requestId);
    if (!review?.event) return;
    if (event.conflict) {
      const where = `${event.lines ?? 'lines'} of ${event.path}`;
      const told = review.conflict !== undefined;
      review.conflict = where;
      for (const file of review.files) {
        file.hunks = [];
        file.states = [];
      }
      this.lensesChanged.fire();
      if (!told) {
        void vscode.window.showWarningMessage(
          `agentls: you changed ${where} while the agent's proposal waited, lines it changes too: it cannot be accepted. Reject it, or undo your change there.`,
        );
      }
      return;
    }
    const rebuilt = await this.buildReview({ ...review.event, edit: event.edit ?? review.event.edit, diff: event.diff ?? review.event.diff });
    if (!rebuilt || !this.reviews.has(event.requestId)) return; // answered meanwhile
    this.reviews.set(event.requestId, rebuilt);
    this.lensesChanged.fire();
    this.updateContext();
  }

  private resolved(requestId: string): void {
    const review = this.reviews.get(requestId);
    if (!review) return;
    this.reviews.delete(requestId);
    const uris = new Set(review.files.flatMap((f) => [f.proposed.toString(), f.original.toString()]));
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && uris.has(tab.input.modified.toString()));
    const drop = (): void => {
      for (const file of review.files) {
        this.files.drop(file.proposed);
        this.files.drop(file.original);
      }
    };
    const close = (): Thenable<unknown> => (tabs.length ? vscode.window.tabGroups.close(tabs, true) : Promise.resolve());
    // An edited, unsaved proposal is saved (into the review's own documents) first: closing it would ask.
    const dirty = review.files.map((f) => this.openDocument(f.proposed)).filter((d) => d?.isDirty);
    if (dirty.length) {
      void this.saveEdits(review).then(close).then(drop, drop);
    } else {
      void Promise.resolve(close()).then(undefined, () => undefined);
      drop();
    }
    this.lensesChanged.fire();
    this.updateContext();
  }

  private resolveSession(sessionId: string): void {
    for (const review of [...this.reviews.values()]) {
      if (review.sessionId === sessionId) this.resolved(review.requestId);
    }
  }

  // ---- the user's version -------------------------------------------------------------

  private openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  }

  /** The proposal as the user has it: the open (maybe unsaved) document, else what was saved. */
  private userText(file: ReviewFile): string {
    return this.openDocument(file.proposed)?.getText() ?? this.files.get(file.proposed) ?? file.proposedText;
  }

  private isEdited(file: ReviewFile): boolean {
    return this.userText(file) !== file.proposedText;
  }

  private async saveEdits(review: Review): Promise<void> {
    for (const file of review.files) {
      const doc = this.openDocument(file.proposed);
      if (doc?.isDirty) await doc.save();
    }
  }

  /** The edit to send with an accept: undefined (the proposal as it is) unless the user edited it. */
  private acceptedEdit(review: Review): Record<string, unknown> | undefined {
    let edit: unknown = review.edit;
    let changed = false;
    for (const file of review.files) {
      if (!file.editUri || !this.isEdited(file)) continue;
      edit = replacementEdit(edit, file.editUri, file.base, this.userText(file));
      changed = true;
    }
    return changed && typeof edit === 'object' && edit !== null ? (edit as Record<string, unknown>) : undefined;
  }

  /** The user's version of a proposal they edited (undefined: not edited, or no such proposal). */
  editedProposal(requestId: string): Record<string, unknown> | undefined {
    const review = this.reviews.get(requestId);
    return review ? this.acceptedEdit(review) : undefined;
  }

  // ---- hunks --------------------------------------------------------------------------

  private hunkCount(review: Review): number {
    return review.files.reduce((n, f) => n + f.hunks.length, 0);
  }

  /** The hunk a command means: its lens's reference, else the one at (or after) the cursor. */
  private hunkFor(arg: unknown): { review: Review; file: ReviewFile; hunk: number } | undefined {
    if (typeof arg === 'object' && arg !== null && 'requestId' in arg) {
      const ref = arg as HunkRef;
      const review = this.reviews.get(ref.requestId);
      const file = review?.files[ref.file];
      if (review && file && ref.hunk >= 0 && ref.hunk < file.hunks.length) return { review, file, hunk: ref.hunk };
      return undefined;
    }
    const editor = vscode.window.activeTextEditor;
    const found = editor ? this.fileOf(editor.document.uri) : undefined;
    if (!editor || !found || !found.file.hunks.length) return undefined;
    const { review, file, side } = found;
    const line = editor.selection.active.line;
    const under = hunkAtLine(file.hunks, line, side);
    if (under) return { review, file, hunk: file.hunks.indexOf(under) };
    const start = (h: ProposalHunk): number => (side === 'old' ? h.oldStart : h.newStart);
    const pending = file.hunks.map((h, i) => ({ h, i })).filter(({ i }) => file.states[i] === 'pending');
    const next = pending.find(({ h }) => start(h) >= line) ?? pending[0];
    return next ? { review, file, hunk: next.i } : undefined;
  }

  private fileOf(uri: vscode.Uri): { review: Review; file: ReviewFile; side: 'old' | 'new' } | undefined {
    for (const review of this.reviews.values()) {
      for (const file of review.files) {
        if (file.proposed.toString() === uri.toString()) return { review, file, side: 'new' };
        if (file.uri.toString() === uri.toString()) return { review, file, side: 'old' };
      }
    }
    return undefined;
  }

  /** Accept or reject one hunk (or undecide it: 'pending'); the answer goes once all are decided. */
  async decideHunk(arg: unknown, state: HunkState): Promise<void> {
    const target = this.hunkFor(arg);
    if (!target) {
      void vscode.window.showInformationMessage('agentls: no hunk of a proposed edit here.');
      return;
    }
    target.file.states[target.hunk] = state;
    this.lensesChanged.fire();
    if (state === 'pending') return;
    const states = target.review.files.flatMap((f) => f.states);
    if (outcome(states) === undefined) {
      this.moveToNext(target.review);
      return;
    }
    await this.answerHunks(target.review);
  }

  /** Every hunk decided: all accepted is a plain accept, none a reject, some an accept of those. */
  private async answerHunks(review: Review): Promise<void> {
    const found = this.host.findPermission(review.requestId);
    if (!found) return;
    const states = review.files.flatMap((f) => f.states);
    const result = outcome(states);
    const kept = (): void => {
      const counts = { kept: states.filter((s) => s === 'accepted').length, total: states.length };
      this.keptCounts.set(review.requestId, { ...counts, hunks: this.cardOf(review) });
      if (this.keptCounts.size > MAX_KEPT) this.keptCounts.delete(this.keptCounts.keys().next().value as string);
      this.post({ type: 'proposal-kept', requestId: review.requestId, ...counts });
    };
    if (result === 'all') {
      kept();
      await this.answer(review.sessionId, review.requestId, 'once');
      return;
    }
    if (result === 'none') {
      const answers = this.answers;
      await this.decide(review.requestId, 'reject');
      if (this.answers > answers) kept(); // not when Escape kept it waiting
      return;
    }
    const accepted = states.filter((s) => s === 'accepted').length;
    const answer = await vscode.window.showInputBox({
      title: `Accept ${accepted} of ${states.length} hunks: ${review.title}`,
      prompt: 'Tell the agent why you rejected the others (optional). Escape keeps the edit waiting.',
      ignoreFocusOut: true,
    });
    if (answer === undefined) return;
    const state = (uri: string, index: number): HunkState | undefined => {
      const file = review.files.find((f) => f.editUri === uri);
      const at = file?.hunks.findIndex((h) => h.index === index) ?? -1;
      return file && at >= 0 ? file.states[at] : undefined;
    };
    const edit = subsetEdit(review.edit, (uri, index) => state(uri, index) === 'accepted');
    kept();
    await this.answer(review.sessionId, review.requestId, 'once', answer.trim() || undefined, undefined, edit);
  }

  /** Put the cursor on the next undecided hunk of the active editor (after a hunk is decided). */
  private moveToNext(review: Review): void {
    const editor = vscode.window.activeTextEditor;
    const found = editor ? this.fileOf(editor.document.uri) : undefined;
    if (!editor || !found || found.review !== review) return;
    const { file, side } = found;
    const line = editor.selection.active.line;
    const start = (h: ProposalHunk): number => (side === 'old' ? h.oldStart : h.newStart);
    const pending = file.hunks.filter((_, i) => file.states[i] === 'pending');
    const next = pending.find((h) => start(h) > line) ?? pending[0];
    if (next) this.reveal(editor, start(next));
  }

  private reveal(editor: vscode.TextEditor, line: number): void {
    const position = new vscode.Position(line, 0);
    editor.selection = new vscode.Selection(position, position);
    editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** The cursor to the next hunk of the proposal in the active editor (from the last: the first). */
  async nextHunk(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const found = editor ? this.fileOf(editor.document.uri) : undefined;
    if (!editor || !found) {
      const first = this.requestFor(undefined) ?? [...this.reviews.keys()][0];
      if (first) await this.openDiff(first);
      else void vscode.window.showInformationMessage('agentls: no proposed edit is waiting for review.');
      return;
    }
    const { file, side } = found;
    const starts = file.hunks.map((h) => (side === 'old' ? h.oldStart : h.newStart));
    if (!starts.length) starts.push(file.line);
    const line = editor.selection.active.line;
    this.reveal(editor, starts.find((s) => s > line) ?? starts[0]);
  }

  // ---- commands -----------------------------------------------------------------------

  get pendingCount(): number {
    return this.reviews.size;
  }

  /** Whether a proposal other than `requestId` is still waiting for its answer. */
  waitingBesides(requestId: string): boolean {
    return [...this.reviews.keys()].some((id) => id !== requestId);
  }

  /** Every answer these commands and lenses give goes here; onDidAnswer tells the extension
   * (which then returns the focus to the prompt box). */
  private answers = 0;
  private async answer(...args: Parameters<AgentHost['approve']>): Promise<void> {
    this.answers += 1;
    await this.host.approve(...args);
    this.answered.fire(args[1]);
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
    const review = this.reviews.get(requestId);
    const edit = review && decision !== 'reject' ? this.acceptedEdit(review) : undefined;
    if (edit && decision === 'always') {
      // "Always" allows the agent's edits; the user's own version is accepted once.
      void vscode.window.showInformationMessage('agentls: you edited this proposal: accept your version once (Accept my version), or undo your changes first.');
      return;
    }
    await this.answer(found.view.sessionId, requestId, decision, feedback, decision === 'always' ? scope : undefined, edit);
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
  }
}
