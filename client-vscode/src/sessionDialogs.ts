// VS Code's side of the panel's session management (sessions.ts): the title input box, the
// modal delete confirmation, and the save dialog of an export.
import * as vscode from 'vscode';
import type { SessionDialogs } from './sessions';

export const sessionDialogs: SessionDialogs = {
  async askTitle(current) {
    return vscode.window.showInputBox({
      title: 'Rename session',
      prompt: 'The session’s new title',
      value: current,
      validateInput: (value) => (value.trim() ? undefined : 'A title cannot be empty'),
    });
  },
  async confirmDelete(title) {
    const choice = await vscode.window.showWarningMessage(
      `Delete the session “${title}”?`,
      { modal: true, detail: 'Its messages and its sub-agents’ sessions are deleted from the store. This cannot be undone.' },
      'Delete',
    );
    return choice === 'Delete';
  },
  async saveMarkdown(suggestedName, markdown) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      title: 'Export session as Markdown',
      defaultUri: folder ? vscode.Uri.joinPath(folder, suggestedName) : undefined,
      filters: { Markdown: ['md'] },
    });
    if (!uri) return undefined;
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(markdown));
    return uri.fsPath;
  },
};
