// The messages of the answers' code blocks and path links (webview/codeblocks.ts, paths.ts) and of
// their highlighting (webview/highlight.ts): the panel asks, the extension acts (codeActions.ts).
// No vscode or DOM import here.

/** The editor's colour theme as shiki loads it (a VS Code theme, its `include`s merged). */
export interface CodeTheme {
  name: string;
  type: 'dark' | 'light';
  colors?: Record<string, string>;
  tokenColors: unknown[];
}

/** Extension -> webview. */
export type CodeHostMessage =
  /** At `ready` and when the colour theme changes: the workspace folder (paths are shown relative
   * to it) and the theme the code blocks are coloured with (none: plain text). */
  | { type: 'code-context'; root?: string; theme?: CodeTheme }
  /** A language the panel asked for (load-grammar): its grammars, the languages it embeds first;
   * none for a language agentls does not highlight. */
  | { type: 'grammar'; lang: string; grammars: unknown[] };

/** Webview -> extension. */
export type CodeMessage =
  | { type: 'load-grammar'; lang: string }
  | { type: 'copy-code'; text: string }
  /** Into the active editor, replacing its selections (at the cursor when nothing is selected). */
  | { type: 'insert-code'; text: string }
  /** Proposed as the new content of `path` (workspace-relative), reviewed like the agent's edits. */
  | { type: 'apply-code'; sessionId?: string; path: string; text: string }
  /** A path in an answer or a tool card: opened at `line` (1-based), if inside the workspace. */
  | { type: 'open-path'; path: string; line?: number };

export function isCodeMessage(m: Record<string, unknown>): m is CodeMessage {
  switch (m.type) {
    case 'load-grammar':
      return typeof m.lang === 'string' && m.lang.length > 0 && m.lang.length < 64;
    case 'copy-code':
    case 'insert-code':
      return typeof m.text === 'string';
    case 'apply-code':
      return typeof m.path === 'string' && m.path.length > 0 && typeof m.text === 'string' && (m.sessionId === undefined || typeof m.sessionId === 'string');
    case 'open-path':
      return typeof m.path === 'string' && m.path.length > 0 && (m.line === undefined || (Number.isInteger(m.line) && (m.line as number) > 0));
    default:
      return false;
  }
}
