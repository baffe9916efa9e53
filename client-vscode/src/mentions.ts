// What the panel's @-mentions attach, gathered from VS Code: files (the workspace's files, listed
// once and kept current by a file watcher, matched in memory at each keystroke: mentionMatch.ts),
// @symbol (the workspace symbol providers), @selection, @problems (diagnostics of the active
// file, else of the workspace), @terminal (the active terminal's recent output, through the
// shell integration API when this VS Code has it), @git (the working tree's diff).
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import * as vscode from 'vscode';
import { PathIndex } from './mentionMatch';
import type { MentionItem, MentionKind, MentionSearchKind } from './model/messages';
import { contextLabel } from './model/transcript';

const LIMIT = 30;
const FILE_LIMIT = 12; // files offered at a keystroke
const MAX_FILES = 500_000; // files indexed
const TERMINAL_KEEP = 20_000; // characters of output kept per terminal
const SKIPPED = ['node_modules', '.git', '.venv', '__pycache__', 'dist', 'out'];
const EXCLUDE = `**/{${SKIPPED.join(',')}}/**`;

/** The workspace's files, listed once (workspace.findFiles) at the first search and kept current
 * by a file watcher; searched in memory. */
export class FileIndex implements vscode.Disposable {
  private built: Promise<PathIndex> | undefined;
  private readonly uris = new Map<string, vscode.Uri>();
  private watcher: vscode.FileSystemWatcher | undefined;

  get(): Promise<PathIndex> {
    this.built ??= this.build();
    return this.built;
  }

  uri(path: string): vscode.Uri | undefined {
    return this.uris.get(path);
  }

  dispose(): void {
    this.watcher?.dispose();
  }

  private async build(): Promise<PathIndex> {
    const index = new PathIndex();
    // Watching first: a file created while the list is made is not missed.
    this.watcher = vscode.workspace.createFileSystemWatcher('**/*');
    this.watcher.onDidCreate(async (uri) => {
      const path = this.relative(uri);
      if (path === undefined) return;
      const stat = await Promise.resolve(vscode.workspace.fs.stat(uri)).catch(() => undefined);
      if (stat && stat.type & vscode.FileType.File) this.put(index, path, uri);
    });
    this.watcher.onDidDelete((uri) => {
      const path = this.relative(uri);
      if (path === undefined) return;
      index.delete(path);
      index.deleteUnder(path);
      for (const known of [...this.uris.keys()]) if (known === path || known.startsWith(`${path}/`)) this.uris.delete(known);
    });
    for (const uri of await vscode.workspace.findFiles('**/*', EXCLUDE, MAX_FILES)) {
      const path = this.relative(uri);
      if (path !== undefined) this.put(index, path, uri);
    }
    return index;
  }

  private put(index: PathIndex, path: string, uri: vscode.Uri): void {
    index.add(path);
    this.uris.set(path, uri);
  }

  /** The workspace-relative path, or undefined for one left out (node_modules, .git, ...). */
  private relative(uri: vscode.Uri): string | undefined {
    const path = vscode.workspace.asRelativePath(uri, false);
    return path.split('/').some((part) => SKIPPED.includes(part)) ? undefined : path;
  }
}

// The shell integration API (VS Code 1.93+), typed here: the extension's engine is older.
interface ShellExecution {
  read(): AsyncIterable<string>;
}
interface ShellExecutionStart {
  terminal: vscode.Terminal;
  execution: ShellExecution;
}
type ShellWindow = { onDidStartTerminalShellExecution?: vscode.Event<ShellExecutionStart> };

export class Mentions implements vscode.Disposable {
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly output = new Map<vscode.Terminal, string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly shell = (vscode.window as unknown as ShellWindow).onDidStartTerminalShellExecution;
  private readonly index = new FileIndex();

  constructor() {
    // The panel takes the focus from the editor: remember the last one for @selection/@problems.
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor) this.lastEditor = editor;
      }),
      vscode.window.onDidCloseTerminal((terminal) => this.output.delete(terminal)),
      this.index,
    );
    if (this.shell) this.disposables.push(this.shell((start) => void this.record(start)));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  private async record({ terminal, execution }: ShellExecutionStart): Promise<void> {
    for await (const chunk of execution.read()) {
      const kept = (this.output.get(terminal) ?? '') + chunk;
      this.output.set(terminal, kept.slice(-TERMINAL_KEEP));
    }
  }

  async search(kind: MentionSearchKind, query: string): Promise<MentionItem[]> {
    return kind === 'file' ? this.files(query) : this.symbols(query);
  }

  /** The files matching `query`; for no query, the files open in editors. */
  private async files(query: string): Promise<MentionItem[]> {
    if (!query.trim()) {
      const open = vscode.window.visibleTextEditors.map((e) => e.document.uri).filter((uri) => uri.scheme === 'file');
      const seen = new Set<string>();
      return open
        .filter((uri) => !seen.has(uri.toString()) && seen.add(uri.toString()))
        .slice(0, FILE_LIMIT)
        .map((uri) => fileItem(vscode.workspace.asRelativePath(uri, false), uri));
    }
    const index = await this.index.get();
    return index.search(query, FILE_LIMIT).flatMap((path) => {
      const uri = this.index.uri(path);
      return uri ? [fileItem(path, uri)] : [];
    });
  }

  private async symbols(query: string): Promise<MentionItem[]> {
    const found =
      (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query)) ??
      [];
    return found.slice(0, LIMIT).map((symbol) => {
      const { uri, range } = symbol.location;
      return {
        label: symbol.name,
        detail: `${vscode.workspace.asRelativePath(uri, false)}:${range.start.line + 1}`,
        name: symbol.name,
        ref: { uri: uri.toString(), range: wireRange(range) },
      };
    });
  }

  /** One item, or why there is none. */
  async item(kind: MentionKind): Promise<MentionItem | string> {
    switch (kind) {
      case 'selection':
        return this.selection();
      case 'problems':
        return this.problems();
      case 'terminal':
        return this.terminal();
      case 'git':
        return this.git();
    }
  }

  private selection(): MentionItem | string {
    const editor = this.lastEditor;
    if (!editor || editor.selection.isEmpty) return 'Select some code in an editor first.';
    const uri = editor.document.uri.toString();
    const range = wireRange(editor.selection);
    const label = contextLabel(uri, range); // calc.py:3-7
    const name = vscode.workspace.asRelativePath(editor.document.uri, false) + label.slice(label.lastIndexOf(':')); // src/calc.py:3-7
    return { label, detail: name, name, ref: { uri, range } };
  }

  private problems(): MentionItem {
    const editor = this.lastEditor;
    const mine = editor ? vscode.languages.getDiagnostics(editor.document.uri) : [];
    const all: [vscode.Uri, readonly vscode.Diagnostic[]][] = mine.length
      ? [[(editor as vscode.TextEditor).document.uri, mine]]
      : vscode.languages.getDiagnostics();
    const lines = all.flatMap(([uri, diagnostics]) =>
      diagnostics.map((d) => formatProblem(vscode.workspace.asRelativePath(uri, false), d)),
    );
    const text = lines.length ? lines.join('\n') : 'No problems reported.';
    const where = mine.length ? contextLabel(editor?.document.uri.toString() ?? '') : 'workspace';
    return { label: '@problems', detail: `${lines.length} in ${where}`, ref: { type: 'text', label: '@problems', text } };
  }

  private terminal(): MentionItem | string {
    if (!this.shell) return '@terminal needs VS Code 1.93 or later (its terminal shell integration API).';
    const terminal = vscode.window.activeTerminal;
    if (!terminal) return 'There is no active terminal.';
    const text = this.output.get(terminal);
    if (!text) return `No output recorded from the terminal "${terminal.name}" (shell integration must be on; commands run from now on are recorded).`;
    return { label: '@terminal', detail: terminal.name, ref: { type: 'text', label: '@terminal', text: stripAnsi(text) } };
  }

  private async git(): Promise<MentionItem | string> {
    if (!vscode.workspace.isTrusted) return '@git runs git, which this untrusted workspace does not allow.';
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) return 'Open a folder first.';
    const diff = await gitDiff(folder);
    if (diff instanceof Error) return `git diff failed: ${diff.message}`;
    if (!diff.trim()) return 'The working tree has no changes.';
    return { label: '@git', detail: 'git diff HEAD', ref: { type: 'text', label: '@git', text: diff } };
  }
}

function fileItem(path: string, uri: vscode.Uri): MentionItem {
  return { label: contextLabel(path), detail: path, name: path, ref: { uri: uri.toString() } };
}

function runGit(args: string[], cwd: string): Promise<string | Error> {
  return new Promise((resolve) =>
    execFile('git', args, { cwd, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve(err ? new Error(stderr.trim() || err.message) : stdout),
    ),
  );
}

/** `git diff HEAD` in `folder` with every program a hostile repository's config could name for
 * it turned off: fsmonitor, external diff, textconv, pager, the clean filters and long-running
 * filter processes its .gitattributes point at (git runs them to hash the working tree), and
 * every transport (a partial clone fetches missing objects through ssh or ext::). */
export async function gitDiff(folder: string): Promise<string | Error> {
  const foreign = await foreignRepository(folder);
  if (foreign) return new Error(foreign);
  const names = await runGit(['config', '-z', '--name-only', '--list'], folder);
  if (names instanceof Error) return names;
  const off = ['-c', 'core.fsmonitor=false', '-c', 'diff.external=', '-c', 'protocol.allow=never'];
  for (const name of names.split('\0')) {
    // `git -c` splits at the first "=": a name with one could not be overridden.
    if (/^(filter|protocol)\./.test(name) && name.includes('=')) return new Error(`the repository's config has a key git -c cannot turn off: ${JSON.stringify(name)}`);
    const filter = /^filter\.(.*)\.[^.]+$/s.exec(name);
    if (filter) off.push('-c', `filter.${filter[1]}.clean=`, '-c', `filter.${filter[1]}.process=`);
    else if (/^protocol\..*\.allow$/s.test(name)) off.push('-c', `${name}=never`);
  }
  return runGit([...off, '--no-pager', 'diff', '--no-ext-diff', '--no-textconv', 'HEAD'], folder);
}

/** Why the repository of `folder` is not this folder's own, or undefined. A hostile one can make
 * `git diff HEAD` read another place: core.worktree naming another directory (~/.ssh: its files
 * would be the "changes"), or a .git file naming another repository's git directory (every file
 * of that one's HEAD would show as deleted, in full). Linked worktrees and submodules, whose git
 * directories point back here, are this folder's own. */
async function foreignRepository(folder: string): Promise<string | undefined> {
  const info = await runGit(['rev-parse', '--show-toplevel', '--absolute-git-dir'], folder);
  if (info instanceof Error) return info.message;
  const [top, gitDir] = info.trim().split('\n').map((line) => realOf(line));
  const here = realOf(folder);
  if (!top || !gitDir) return 'git named no work tree';
  const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
  if (!within(here, top)) return `the repository's work tree is ${top}, not this folder`;
  if (dirname(gitDir) === top) return undefined; // the usual layout (this folder may be a subfolder)
  const back = readText(join(gitDir, 'gitdir')); // a linked worktree's: its .git file
  if (back !== undefined && realOf(back.trim()) === realOf(join(top, '.git'))) return undefined;
  const worktree = await runGit(['config', '--get', 'core.worktree'], folder); // a submodule's
  if (top === here && !(worktree instanceof Error) && worktree.trim()) return undefined;
  return `the repository's git directory ${gitDir} and work tree ${top} are not this folder's own`;
}

function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function formatProblem(path: string, d: vscode.Diagnostic): string {
  const severity = ['error', 'warning', 'info', 'hint'][d.severity] ?? 'error';
  const source = d.source ? ` [${d.source}]` : '';
  return `${path}:${d.range.start.line + 1}:${d.range.start.character + 1} ${severity}: ${d.message}${source}`;
}

function wireRange(range: vscode.Range): { start: { line: number; character: number }; end: { line: number; character: number } } {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '');
}
