// The VS Code side of the code blocks' actions (codeActions.ts): the clipboard, the active
// editor, opening a file at a line, the colour theme's file (codeTheme.ts) and the grammars the
// build wrote to dist/grammars (scripts/grammars.mjs).
import * as vscode from 'vscode';
import type { CodeEditor } from './codeActions';
import { findTheme, loadTheme, type ContributedTheme } from './codeTheme';
import type { CodeTheme } from './model/codeBlocks';
import { nameFolders } from './folders';

async function readText(uri: vscode.Uri): Promise<string> {
  return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
}

/** The theme workbench.colorTheme names, from the extension that contributes it. */
async function currentTheme(): Promise<CodeTheme | undefined> {
  const setting = vscode.workspace.getConfiguration('workbench').get<string>('colorTheme') ?? '';
  for (const extension of vscode.extensions.all) {
    const themes = (extension.packageJSON as { contributes?: { themes?: ContributedTheme[] } })?.contributes?.themes;
    if (!Array.isArray(themes)) continue;
    const found = findTheme(themes, setting);
    if (!found) continue;
    const file = vscode.Uri.joinPath(extension.extensionUri, found.path);
    return loadTheme(file.path, (path) => readText(file.with({ path })), found.uiTheme);
  }
  return undefined;
}

export function codeEditor(extensionUri: vscode.Uri): CodeEditor {
  return {
    root: () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    folders: () => nameFolders((vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: f.uri.fsPath }))),
    isFile: async (path) => {
      try {
        return (await vscode.workspace.fs.stat(vscode.Uri.file(path))).type === vscode.FileType.File;
      } catch {
        return false;
      }
    },
    open: async (path, line) => {
      const at = line ? new vscode.Position(Math.max(0, line - 1), 0) : undefined;
      await vscode.window.showTextDocument(vscode.Uri.file(path), {
        preview: true,
        ...(at ? { selection: new vscode.Range(at, at) } : {}),
      });
    },
    insert: async (text) => {
      const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
      if (!editor) return false;
      const done = await editor.edit((edit) => {
        for (const selection of editor.selections) edit.replace(selection, text);
      });
      if (done) await vscode.window.showTextDocument(editor.document, editor.viewColumn);
      return done;
    },
    copy: (text) => Promise.resolve(vscode.env.clipboard.writeText(text)),
    info: (message) => void vscode.window.showInformationMessage(message),
    error: (message) => void vscode.window.showErrorMessage(message),
    theme: currentTheme,
    grammarFile: async (name) => {
      try {
        return await readText(vscode.Uri.joinPath(extensionUri, 'dist', 'grammars', `${name}.json`));
      } catch {
        return undefined;
      }
    },
  };
}
