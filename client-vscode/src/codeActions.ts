// What the panel's code blocks and path links ask of the extension (model/codeBlocks.ts): copy,
// insert at the cursor, Apply (agent/proposeEdit: the block proposed as the file's new content,
// reviewed like the agent's own edits), open a path at a line (only inside the workspace), and
// the colour theme and grammars of the highlighting. VS Code is reached through CodeEditor
// (codeEditor.ts), so this is unit-tested without it.
import { posix } from 'node:path';
import type { AgentConnection } from './hostTypes';
import type { CodeHostMessage, CodeMessage, CodeTheme } from './model/codeBlocks';
import { insideFolders, type FolderRef } from './folders';

export interface CodeEditor {
  /** The workspace folder's path (none: no folder open). */
  root(): string | undefined;
  /** Every workspace folder, named as the server names them (folders.ts); none: root() alone. */
  folders?(): readonly FolderRef[];
  isFile(path: string): Promise<boolean>;
  /** Open the file (an absolute path) with the cursor at `line` (1-based). */
  open(path: string, line?: number): Promise<void>;
  /** Replace the active editor's selections with `text`; false if no text editor is active. */
  insert(text: string): Promise<boolean>;
  copy(text: string): Promise<void>;
  info(message: string): void;
  error(message: string): void;
  theme(): Promise<CodeTheme | undefined>;
  /** A file of dist/grammars (index.json, <name>.json), undefined if missing. */
  grammarFile(name: string): Promise<string | undefined>;
}

/** The absolute path of `path` (relative to the workspace folder, or absolute) if it lies inside
 * the folder; undefined for anything outside it ("..", another absolute path). */
export function insideWorkspace(root: string, path: string): string | undefined {
  const base = posix.normalize(root).replace(/\/+$/, '');
  const full = posix.normalize(path.startsWith('/') ? path : posix.join(base, path));
  return full.startsWith(base + '/') ? full : undefined;
}

export class CodeActions {
  private grammarIndex: Promise<Record<string, string>> | undefined;

  constructor(
    private readonly editor: CodeEditor,
    private readonly post: (message: CodeHostMessage) => void,
  ) {}

  /** The panel (re)loaded, or the colour theme changed: the folder and theme it colours with. */
  async sendContext(): Promise<void> {
    let theme: CodeTheme | undefined;
    try {
      theme = await this.editor.theme();
    } catch {
      theme = undefined; // plain code blocks
    }
    const root = this.editor.root();
    this.post({ type: 'code-context', ...(root ? { root } : {}), ...(theme ? { theme } : {}) });
  }

  async handle(message: CodeMessage, client: AgentConnection | undefined, activeSessionId: string | undefined): Promise<void> {
    switch (message.type) {
      case 'load-grammar':
        this.post({ type: 'grammar', lang: message.lang, grammars: await this.grammar(message.lang) });
        return;
      case 'copy-code':
        await this.editor.copy(message.text);
        return;
      case 'insert-code':
        if (!(await this.editor.insert(message.text))) this.editor.info('agentls: open a file in the editor to insert the code at its cursor.');
        return;
      case 'open-path':
        await this.openPath(message.path, message.line);
        return;
      case 'apply-code':
        await this.apply(client, message.sessionId ?? activeSessionId, message.path, message.text);
        return;
    }
  }

  /** The file `path` names inside the workspace ("lib/x.py" in the folder lib when there are
   * several), or undefined. */
  private inside(path: string): string | undefined {
    const folders = this.editor.folders?.();
    if (folders && folders.length > 1) return insideFolders(path, folders);
    const root = this.editor.root();
    return root ? insideWorkspace(root, path) : undefined;
  }

  private async openPath(path: string, line?: number): Promise<void> {
    const full = this.inside(path);
    if (!full) {
      this.editor.info(`agentls: ${path} is not inside the workspace; only workspace files are opened.`);
      return;
    }
    if (!(await this.editor.isFile(full))) {
      this.editor.info(`agentls: there is no file ${path} in the workspace.`);
      return;
    }
    await this.editor.open(full, line);
  }

  private async apply(client: AgentConnection | undefined, sessionId: string | undefined, path: string, text: string): Promise<void> {
    if (!this.inside(path)) {
      this.editor.error(`agentls: cannot apply to ${path}: it is not inside the workspace.`);
      return;
    }
    if (!client) {
      this.editor.error('agentls: the server is not running; the code was not applied.');
      return;
    }
    if (!sessionId) {
      this.editor.error('agentls: open a session to apply code to a file.');
      return;
    }
    try {
      // The server asks for it like an edit of the agent's (the diff to review, Accept / Reject).
      const result = await client.request('agent/proposeEdit', { sessionId, path, text });
      if (result.decision === 'unchanged') this.editor.info(`agentls: ${path} already has this content.`);
    } catch (err) {
      this.editor.error(`agentls: applying to ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async grammar(lang: string): Promise<unknown[]> {
    this.grammarIndex ??= this.editor.grammarFile('index').then((text) => (text ? (JSON.parse(text) as Record<string, string>) : {}));
    const name = (await this.grammarIndex)[lang.toLowerCase()];
    if (!name || !/^[\w-]+$/.test(name)) return [];
    const text = await this.editor.grammarFile(name);
    try {
      return text ? (JSON.parse(text) as unknown[]) : [];
    } catch {
      return [];
    }
  }
}
