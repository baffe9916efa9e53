// The `agentls-proposed` documents: the proposed side of a review's diff (writable: the user edits
// the proposal before accepting it) and, for a new or non-file document, the empty or current
// left side (read-only). A FileSystemProvider rather than a content provider, so VS Code opens the
// proposed side as an ordinary editable document; what the user saves lands here, what is unsaved
// is read from the open document (approvals.ts).
import * as vscode from 'vscode';

export const PROPOSED_SCHEME = 'agentls-proposed';

export class ProposedFiles implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly texts = new Map<string, { text: string; mtime: number; readonly: boolean }>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /** A proposed document was written (saved) by the user. */
  private readonly written = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidWrite = this.written.event;

  set(uri: vscode.Uri, text: string, readonly = false): void {
    const had = this.texts.has(uri.toString());
    this.texts.set(uri.toString(), { text, mtime: Date.now(), readonly });
    this.changed.fire([{ type: had ? vscode.FileChangeType.Changed : vscode.FileChangeType.Created, uri }]);
  }

  get(uri: vscode.Uri): string | undefined {
    return this.texts.get(uri.toString())?.text;
  }

  drop(uri: vscode.Uri): void {
    if (this.texts.delete(uri.toString())) this.changed.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
  }

  private entry(uri: vscode.Uri): { text: string; mtime: number; readonly: boolean } {
    const entry = this.texts.get(uri.toString());
    if (!entry) throw vscode.FileSystemError.FileNotFound(uri);
    return entry;
  }

  // ---- vscode.FileSystemProvider ---------------------------------------------------------

  watch(): vscode.Disposable {
    return { dispose: () => undefined };
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const entry = this.entry(uri);
    return {
      type: vscode.FileType.File,
      ctime: entry.mtime,
      mtime: entry.mtime,
      size: new TextEncoder().encode(entry.text).length,
      permissions: entry.readonly ? vscode.FilePermission.Readonly : undefined,
    };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return new TextEncoder().encode(this.entry(uri).text);
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const entry = this.entry(uri); // only the documents of a review: no new files here
    if (entry.readonly) throw vscode.FileSystemError.NoPermissions(uri);
    entry.text = new TextDecoder('utf-8').decode(content);
    entry.mtime = Math.max(Date.now(), entry.mtime + 1);
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    this.written.fire(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.texts.clear();
    this.changed.dispose();
    this.written.dispose();
  }
}
