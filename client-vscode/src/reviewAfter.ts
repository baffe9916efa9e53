// VS Code's side of Restore and review "after" (ReviewUi, used by checkpoints.ts): a conflict
// (a file the user changed after the agent's edit, never overwritten) opens in the merge editor
// with the version before the agent as the base, the agent's and the user's as the two inputs and
// the real file as the output; a reviewed file opens as a diff of its base against the file now.
// The versions that are not the file are read-only virtual documents (scheme agentls-version).
import * as vscode from 'vscode';
import type { ReviewUi } from './hostTypes';
import type { ReviewFile, RevertConflict } from './protocol/generated';

export const VERSION_SCHEME = 'agentls-version';
/** VS Code's command behind "Resolve in Merge Editor" (mergeEditor's OpenMergeEditor action). */
export const MERGE_EDITOR_COMMAND = '_open.mergeEditor';
/** How the server marks a conflict's `current` when the path is no longer a file of its own
 * (session/revert.py NOT_ITS_OWN: a link, a directory or a device). */
export const NOT_A_FILE = '\0';
/** Versions kept for the virtual documents; the oldest go first. */
const MAX_VERSIONS = 200;

export class ReviewViews implements ReviewUi, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly versions = new Map<string, string>();
  private next = 0;
  private readonly registration: vscode.Disposable;

  constructor(private readonly root: () => vscode.Uri | undefined = () => vscode.workspace.workspaceFolders?.[0]?.uri) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(VERSION_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.versions.get(uri.query) ?? '';
  }

  /** The file a server path names: a uri (agent/revert's), or a path, absolute or
   * workspace-relative (agent/review's). */
  fileUri(path: string): vscode.Uri {
    if (/^[a-zA-Z][\w+.-]+:/.test(path)) return vscode.Uri.parse(path);
    const folder = this.root();
    return path.startsWith('/') || !folder ? vscode.Uri.file(path) : vscode.Uri.joinPath(folder, path);
  }

  /** A read-only document holding `text`, named like the file (so it gets its language). */
  version(path: string, label: string, text: string | null): vscode.Uri {
    const key = `v${this.next++}`;
    this.versions.set(key, text ?? '');
    if (this.versions.size > MAX_VERSIONS) this.versions.delete(this.versions.keys().next().value as string);
    return this.fileUri(path).with({ scheme: VERSION_SCHEME, query: key, fragment: label });
  }

  async openConflict(conflict: RevertConflict): Promise<void> {
    const output = this.fileUri(conflict.path);
    const name = output.path.split('/').pop() ?? conflict.path;
    const agent = this.version(conflict.path, 'agent', conflict.agent);
    if (conflict.current?.startsWith(NOT_A_FILE)) {
      // A link, a directory or a device now: nothing opens on the real path (a merge result or an
      // editor there would write through it); the agent's change shows against what was before.
      const before = this.version(conflict.path, 'before', conflict.before);
      await vscode.commands.executeCommand('vscode.diff', before, agent, `${name}: the agent's change (not restored)`);
      void vscode.window.showWarningMessage(
        `agentls: ${name} is no longer a file of its own (a link, a directory or a device), so nothing was written through it.`,
      );
      return;
    }
    const note = `agentls: you changed ${name} after the agent's edit, so it was not overwritten.`;
    if (conflict.current != null) {
      try {
        await vscode.commands.executeCommand(MERGE_EDITOR_COMMAND, {
          base: this.version(conflict.path, 'before', conflict.before),
          input1: { uri: agent, title: "agentls's version", description: 'as the agent left it' },
          input2: { uri: this.version(conflict.path, 'current', conflict.current), title: 'Your version', description: 'as it is now' },
          output,
        });
        void vscode.window.showInformationMessage(`${note} Merge the versions in the merge editor (the result is the file).`);
        return;
      } catch {
        // no merge editor here: the diff below
      }
    }
    const current = conflict.current == null ? this.version(conflict.path, 'current', '') : output;
    await vscode.commands.executeCommand('vscode.diff', agent, current, `${name}: agentls's version ↔ yours (not restored)`);
    void vscode.window.showInformationMessage(`${note} The diff shows the agent's version against yours; edit the file as you want it.`);
  }

  async openReviewDiff(file: ReviewFile): Promise<void> {
    const uri = this.fileUri(file.path);
    const name = uri.path.split('/').pop() ?? file.path;
    const base = this.version(file.path, 'base', file.base);
    await vscode.commands.executeCommand('vscode.diff', base, uri, `${name}: the agent's changes under review`);
  }

  dispose(): void {
    this.registration.dispose();
    this.versions.clear();
  }
}
