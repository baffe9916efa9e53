// The editor's colour theme for the panel's code blocks (webview/highlight.ts colours them with
// shiki): the theme file of the extension contributing the theme named by workbench.colorTheme,
// read as VS Code reads it (JSON with comments, `include` merged under its own rules). No vscode
// import here: `read` gives a file's text.
import { parse, type ParseError } from 'jsonc-parser';
import { posix } from 'node:path';
import type { CodeTheme } from './model/codeBlocks';

export interface ContributedTheme {
  id?: string;
  label?: string;
  uiTheme?: string;
  path: string;
}

/** The contributed theme VS Code's setting names (by id, else label). */
export function findTheme(themes: ContributedTheme[], setting: string): ContributedTheme | undefined {
  return themes.find((t) => t.id === setting) ?? themes.find((t) => t.label === setting);
}

interface ThemeFile {
  include?: string;
  type?: string;
  colors?: Record<string, string>;
  tokenColors?: unknown;
}

/** The theme at `path` with its includes (at most `depth` deep), or undefined if it cannot be read. */
export async function loadTheme(
  path: string,
  read: (path: string) => Promise<string>,
  uiTheme?: string,
  depth = 5,
): Promise<CodeTheme | undefined> {
  const file = await readThemeFile(path, read, depth);
  if (!file) return undefined;
  const type = file.type === 'light' || file.type === 'hcLight' || uiTheme === 'vs' || uiTheme === 'hc-light' ? 'light' : 'dark';
  return { name: posix.basename(path, '.json'), type, colors: file.colors ?? {}, tokenColors: Array.isArray(file.tokenColors) ? file.tokenColors : [] };
}

async function readThemeFile(path: string, read: (path: string) => Promise<string>, depth: number): Promise<ThemeFile | undefined> {
  let text: string;
  try {
    text = await read(path);
  } catch {
    return undefined;
  }
  const errors: ParseError[] = [];
  const own = parse(text, errors, { allowTrailingComma: true }) as ThemeFile | undefined;
  if (!own || typeof own !== 'object') return undefined;
  if (!own.include || depth <= 0) return own;
  const base = await readThemeFile(posix.join(posix.dirname(path), own.include), read, depth - 1);
  if (!base) return own;
  // A tmTheme (a string) cannot be merged: its rules are left out, the JSON ones kept.
  const rules = (t: ThemeFile): unknown[] => (Array.isArray(t.tokenColors) ? t.tokenColors : []);
  return {
    type: own.type ?? base.type,
    colors: { ...base.colors, ...own.colors },
    tokenColors: [...rules(base), ...rules(own)],
  };
}
