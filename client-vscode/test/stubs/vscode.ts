// The few pieces of the vscode API the unit-tested modules touch, as small fakes that record what
// they are asked. vitest resolves `vscode` to this file (vitest.config.ts); `calls` and `stub` let a
// test see and steer them.

export const calls: { command: string; args: unknown[] }[] = [];

export const stub = {
  inputBoxAnswers: [] as (string | undefined)[],
  infoMessages: [] as string[],
  files: new Map<string, string>(),
  textDocuments: [] as { uri: Uri; getText(): string; version: number; isDirty: boolean; lineCount: number; positionAt?(offset: number): Position }[],
  /** The commands VS Code has (commands.getCommands). */
  commandIds: [] as string[],
  /** The edits workspace.applyEdit was given, and its answer. */
  appliedEdits: [] as WorkspaceEdit[],
  applyEditAnswer: true,
  closedTabs: [] as unknown[],
  tabs: [] as { input: unknown }[],
  activeTab: undefined as { input: unknown } | undefined,
  config: new Map<string, unknown>(),
  /** The active text editor (a document and a cursor), if a test sets one. */
  activeEditor: undefined as { document: { uri: Uri }; selection: { active: Position }; revealed?: Range } | undefined,
  /** The file system watchers made (workspace.createFileSystemWatcher): a test fires their events. */
  watchers: [] as { created: EventEmitter<Uri>; deleted: EventEmitter<Uri> }[],
  /** The visible text editors (decorations are recorded on them, by decoration type). */
  visibleEditors: [] as StubEditor[],
  /** languages.getDiagnostics, by uri. */
  diagnostics: new Map<string, unknown[]>(),
  reset(): void {
    calls.length = 0;
    this.visibleEditors = [];
    this.diagnostics.clear();
    this.inputBoxAnswers = [];
    this.infoMessages = [];
    this.files.clear();
    this.textDocuments = [];
    this.commandIds = [];
    this.appliedEdits = [];
    this.applyEditAnswer = true;
    this.closedTabs = [];
    this.tabs = [];
    this.activeTab = undefined;
    this.config.clear();
    this.activeEditor = undefined;
    this.watchers = [];
  },
};

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}

  static parse(value: string): Uri {
    const match = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!match) throw new Error(`bad uri ${value}`);
    return new Uri(match[1], match[2] ?? '', decodeURIComponent(match[3]), match[4] ?? '', match[5] ?? '');
  }

  static file(path: string): Uri {
    return new Uri('file', '', path, '', '');
  }

  static from(parts: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(parts.scheme, parts.authority ?? '', parts.path ?? '', parts.query ?? '', parts.fragment ?? '');
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return base.with({ path: [base.path.replace(/\/$/, ''), ...segments].join('/') });
  }

  get fsPath(): string {
    return this.path;
  }

  with(change: { scheme?: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(
      change.scheme ?? this.scheme,
      change.authority ?? this.authority,
      change.path ?? this.path,
      change.query ?? this.query,
      change.fragment ?? this.fragment,
    );
  }

  toString(): string {
    const slashes = this.authority || this.scheme === 'file' ? `//${this.authority}` : '';
    const path = encodeURI(this.path);
    return `${this.scheme}:${slashes}${path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
}

export class EventEmitter<T> {
  private listeners: ((value: T) => void)[] = [];
  readonly event = (listener: (value: T) => void): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
  union(other: Range): Range {
    const before = (a: Position, b: Position): boolean => a.line < b.line || (a.line === b.line && a.character <= b.character);
    const start = before(this.start, other.start) ? this.start : other.start;
    const end = before(this.end, other.end) ? other.end : this.end;
    return new Range(start.line, start.character, end.line, end.character);
  }
}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Source = new CodeActionKind('source');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
}

export class CodeAction {
  command?: { title: string; command: string; arguments?: unknown[] };
  diagnostics?: unknown[];
  constructor(
    readonly title: string,
    readonly kind?: CodeActionKind,
  ) {}
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export class Selection {
  constructor(
    readonly anchor: Position,
    readonly active: Position,
  ) {}
}

export enum TextEditorRevealType {
  InCenterIfOutsideViewport = 2,
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
}

export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

export enum FileType {
  File = 1,
}
export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}
export enum FilePermission {
  Readonly = 1,
}
export class FileSystemError extends Error {
  static FileNotFound(uri: Uri): FileSystemError {
    return new FileSystemError(`FileNotFound ${uri.toString()}`);
  }
  static NoPermissions(uri: Uri): FileSystemError {
    return new FileSystemError(`NoPermissions ${uri.toString()}`);
  }
}

/** A visible editor of a document's text: what setDecorations drew, by decoration type. */
export class StubEditor {
  readonly decorations = new Map<unknown, { range: Range; renderOptions?: { after?: { contentText?: string }; before?: { contentText?: string } } }[]>();
  readonly document: { uri: Uri; lineCount: number; languageId: string; lineAt(line: number): { range: Range } };
  /** No view column: a side of a diff editor. */
  readonly viewColumn: number | undefined;
  constructor(uri: Uri, text: string, sideOfDiff = false) {
    this.viewColumn = sideOfDiff ? undefined : 1;
    const lines = text.split('\n');
    this.document = { uri, lineCount: lines.length, languageId: 'python', lineAt: (line) => ({ range: new Range(line, 0, line, lines[line]?.length ?? 0) }) };
  }
  setDecorations(type: unknown, options: { range: Range }[]): void {
    this.decorations.set(type, options);
  }
}

export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}

export class MarkdownString {
  value = '';
  appendMarkdown(text: string): this {
    this.value += text;
    return this;
  }
  appendCodeblock(code: string, language = ''): this {
    this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`;
    return this;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

const disposable = { dispose: (): void => undefined };

export const commands = {
  executeCommand: async (command: string, ...args: unknown[]): Promise<unknown> => {
    calls.push({ command, args });
    return undefined;
  },
  registerCommand: () => disposable,
  getCommands: async (): Promise<string[]> => stub.commandIds,
};

/** The replacements asked for, in order. */
export class WorkspaceEdit {
  readonly replacements: { uri: Uri; range: Range; text: string }[] = [];
  replace(uri: Uri, range: Range, text: string): void {
    this.replacements.push({ uri, range, text });
  }
}

export const window = {
  showInputBox: async (): Promise<string | undefined> => stub.inputBoxAnswers.shift(),
  showInformationMessage: async (message: string): Promise<undefined> => {
    stub.infoMessages.push(message);
    return undefined;
  },
  showErrorMessage: async (message: string): Promise<undefined> => {
    stub.infoMessages.push(message);
    return undefined;
  },
  showWarningMessage: async (message: string): Promise<undefined> => {
    stub.infoMessages.push(message);
    return undefined;
  },
  get activeTextEditor() {
    const editor = stub.activeEditor;
    if (!editor) return undefined;
    return {
      document: editor.document,
      get selection() {
        return editor.selection;
      },
      set selection(selection: { active: Position }) {
        editor.selection = selection;
      },
      revealRange: (range: Range): void => {
        editor.revealed = range;
      },
    };
  },
  createTextEditorDecorationType: (options: unknown) => ({ options, dispose: (): void => undefined }),
  get visibleTextEditors() {
    return stub.visibleEditors;
  },
  onDidChangeVisibleTextEditors: () => disposable,
  showTextDocument: async (document: unknown, options?: unknown): Promise<void> => {
    calls.push({ command: 'showTextDocument', args: [document, options] });
  },
  tabGroups: {
    get all() {
      return [{ tabs: stub.tabs, viewColumn: 1, activeTab: stub.activeTab }];
    },
    get activeTabGroup() {
      return { activeTab: stub.activeTab };
    },
    onDidChangeTabs: () => disposable,
    close: async (tabs: unknown[]): Promise<boolean> => {
      stub.closedTabs.push(...tabs);
      return true;
    },
  },
};

export const workspace = {
  get textDocuments() {
    return stub.textDocuments;
  },
  get workspaceFolders() {
    return [{ uri: Uri.file('/work/demo') }];
  },
  /** Every file of stub.files (the workspace folder is /work/demo). */
  findFiles: async (): Promise<Uri[]> => [...stub.files.keys()].map((key) => Uri.parse(key)),
  asRelativePath: (uri: Uri): string => uri.path.replace(/^\/work\/demo\//, ''),
  createFileSystemWatcher: () => {
    const watcher = { created: new EventEmitter<Uri>(), deleted: new EventEmitter<Uri>() };
    stub.watchers.push(watcher);
    return { onDidCreate: watcher.created.event, onDidDelete: watcher.deleted.event, onDidChange: () => disposable, dispose: () => {} };
  },
  fs: {
    stat: async (uri: Uri): Promise<{ type: FileType }> => {
      if (!stub.files.has(uri.toString())) throw new Error(`ENOENT ${uri.toString()}`);
      return { type: FileType.File };
    },
    readFile: async (uri: Uri): Promise<Uint8Array> => {
      const text = stub.files.get(uri.toString());
      if (text === undefined) throw new Error(`ENOENT ${uri.toString()}`);
      return new TextEncoder().encode(text);
    },
  },
  registerTextDocumentContentProvider: () => disposable,
  /** A document of stub.textDocuments. */
  openTextDocument: async (uri: Uri) => {
    const doc = stub.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (!doc) throw new Error(`cannot open ${uri.toString()}`);
    return doc;
  },
  applyEdit: async (edit: WorkspaceEdit): Promise<boolean> => {
    stub.appliedEdits.push(edit);
    return stub.applyEditAnswer;
  },
  registerFileSystemProvider: () => disposable,
  onDidChangeTextDocument: () => disposable,
  getConfiguration: () => ({
    get: <T>(key: string, fallback?: T): T | undefined => (stub.config.has(key) ? (stub.config.get(key) as T) : fallback),
  }),
};

export const languages = {
  registerCodeLensProvider: () => disposable,
  /** A file's diagnostics: stub.diagnostics, by uri. */
  getDiagnostics: (uri: Uri): unknown[] => stub.diagnostics.get(uri.toString()) ?? [],
};
