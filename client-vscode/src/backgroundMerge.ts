// A background session's kept changes that clash with the user's text (agent/backgroundApply's
// conflicts with a `merge`), resolved in VS Code when the user asks from the review card:
// - in the merge editor (VS Code's `_open.mergeEditor`, as its git extension opens it): the
//   base is the file at the session's base, the inputs the user's text and the branch's
//   clashing changes (read-only versions, reviewAfter.ts), the output the user's own file. The
//   result is then reset to the automatic merge (each side's separate changes in, the clashing
//   lines left for the user), so the conflicts show as unhandled; the user resolves and saves
//   (the merge editor's Complete Merge button is the git extension's, for git's own conflicts
//   only). VS Code saves the file as it is when its merge editor opens (so that "Don't save"
//   brings that text back): the card says so first.
// - where there is no merge editor: the conflict written into the file's buffer between git's
//   conflict markers, not saved.
// Either is done only on the text the server merged: when the user typed in the file since,
// nothing is done (and the card says to bring the changes in again).
import * as vscode from 'vscode';
import type { BackgroundConflictUi } from './hostTypes';
import type { ConflictResolved } from './model/backgroundReview';
import type { ConflictMerge } from './protocol/generated';
import { MERGE_EDITOR_COMMAND, type ReviewViews } from './reviewAfter';

/** The merge editor's Reset (to the base with both sides' separate changes merged in). */
export const RESET_RESULT_COMMAND = 'mergeEditor.resetResultToBaseAndAutoMerge';
/** How long the merge editor may take to open and take the reset, in tries 100 ms apart. */
const TRIES = 50;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function nameOf(uri: vscode.Uri): string {
  return uri.path.split('/').pop() ?? uri.path;
}

/** The one edit turning `from` into `to`: the text between their shared start and end. */
function smallestEdit(doc: vscode.TextDocument, from: string, to: string): { range: vscode.Range; text: string } {
  let head = 0;
  while (head < from.length && head < to.length && from[head] === to[head]) head++;
  let tail = 0;
  while (tail < from.length - head && tail < to.length - head && from[from.length - 1 - tail] === to[to.length - 1 - tail]) tail++;
  const [start, end] = [doc.positionAt(head), doc.positionAt(from.length - tail)];
  return { range: new vscode.Range(start.line, start.character, end.line, end.character), text: to.slice(head, to.length - tail) };
}

export class BackgroundConflicts implements BackgroundConflictUi {
  constructor(
    private readonly views: Pick<ReviewViews, 'version'>,
    private readonly wait: (ms: number) => Promise<void> = pause,
  ) {}

  async mergeEditor(): Promise<boolean> {
    // Its id starts with "_": an internal command, listed only when internal ones are asked for.
    return (await vscode.commands.getCommands(false)).includes(MERGE_EDITOR_COMMAND);
  }

  async resolve(merge: ConflictMerge, branch: string, how: 'merge-editor' | 'markers'): Promise<ConflictResolved> {
    const uri = vscode.Uri.parse(merge.uri);
    const name = nameOf(uri);
    let doc: vscode.TextDocument;
    try {
      doc = await vscode.workspace.openTextDocument(uri);
    } catch (err) {
      return { how: 'failed', note: `${name} could not be opened: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (doc.getText() !== merge.yours) {
      return { how: 'changed', note: `${name} changed since the changes were brought in, so nothing was done: bring them in again.` };
    }
    if (how === 'merge-editor') {
      try {
        await vscode.commands.executeCommand(MERGE_EDITOR_COMMAND, {
          base: this.views.version(merge.uri, 'base', merge.base),
          input1: { uri: this.views.version(merge.uri, 'yours', merge.yours), title: 'Yours', description: 'your file as it is' },
          input2: { uri: this.views.version(merge.uri, 'theirs', merge.theirs), title: branch, description: "the session's clashing changes" },
          output: uri,
        });
      } catch (err) {
        return { how: 'failed', note: `The merge editor did not open on ${name}: ${err instanceof Error ? err.message : String(err)}` };
      }
      const reset = await this.resetToAutoMerge(uri, doc, merge.yours);
      return {
        how: 'merge-editor',
        note: reset
          ? `${name} is open in the merge editor: pick each conflict's side (or edit the result), then save it.`
          : `${name} is open in the merge editor, its result your text: take the branch's side where you want it, then save it.`,
      };
    }
    const { range, text } = smallestEdit(doc, merge.yours, merge.marked);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, range, text);
    if (!(await vscode.workspace.applyEdit(edit))) return { how: 'failed', note: `${name} could not be edited: nothing was changed.` };
    await vscode.window.showTextDocument(doc, { preview: false, selection: range });
    return { how: 'markers', note: `The conflict is marked in ${name} (not saved): keep the side you want between <<<<<<< and >>>>>>>, then save.` };
  }

  /** Once the merge editor on `uri` is the active tab, its result reset to the automatic merge
   * (the conflicts unhandled); false when it did not take (the result stays the user's text). */
  private async resetToAutoMerge(uri: vscode.Uri, doc: vscode.TextDocument, yours: string): Promise<boolean> {
    const ours = (): boolean => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { result?: vscode.Uri; input1?: unknown } | undefined;
      return !!input?.input1 && input.result?.toString() === uri.toString();
    };
    for (let i = 0; i < TRIES; i++) {
      if (doc.getText() !== yours) return true;
      if (ours()) await vscode.commands.executeCommand(RESET_RESULT_COMMAND);
      if (doc.getText() !== yours) return true;
      await this.wait(100);
    }
    return false;
  }
}
