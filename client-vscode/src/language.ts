// agent/languageRequest: the server asks VS Code's own language features (the TypeScript server,
// Pylance, rust-analyzer, ... whatever the user runs) for a standard LSP result. Each method maps to
// one of VS Code's provider commands (vscode.executeReferenceProvider, ...); the document is opened
// first so its language server knows it, and VS Code's objects come back as plain LSP shapes. The
// answer never comes from agentls itself: agentls provides none of these features.
//
// No vscode import here (the extension passes the few functions it needs), so the conversions are
// unit-tested directly.
import { toLspDiagnostic, type EditorDiagnostic } from './diagnostics';
import type { LanguageRequestParams } from './protocol/generated';
import { LANGUAGE_METHODS as ALL_METHODS } from './protocol/languageMethods';

export type LanguageMethod = LanguageRequestParams['method'];

/** Every method this client answers (declared in capabilities.experimental.agent.languageRequests):
 * all of those `make schemas` generates but workspace/executeCommand. VS Code runs a language
 * server's command only through vscode.commands.executeCommand, which applies the edits the server
 * sends back (workspace/applyEdit) at once; the agent must get them as a proposal, so commands are
 * left to the headless servers agentls runs itself, where it captures them. Code actions come with
 * their edits resolved (executeCodeActionProvider's itemResolveCount), so codeAction/resolve
 * returns the action it is given. */
export const LANGUAGE_METHODS: readonly LanguageMethod[] = ALL_METHODS.filter((m) => m !== 'workspace/executeCommand');
// How many of a request's code actions VS Code resolves (fills in their edit) before answering.
const RESOLVE_ACTIONS = 100;

// ---- the shapes: VS Code's (structurally, as far as they are read) and LSP's ----------------

export interface Pos {
  line: number;
  character: number;
}
export interface Rng {
  start: Pos;
  end: Pos;
}
export interface CodeUri {
  toString(): string;
}
export interface CodeLocation {
  uri: CodeUri;
  range: Rng;
}
export interface CodeLocationLink {
  targetUri: CodeUri;
  targetRange: Rng;
  targetSelectionRange?: Rng;
}
export type MarkedText = string | { value: string; language?: string };
export interface CodeHover {
  contents: MarkedText[];
  range?: Rng;
}
export interface CodeSymbol {
  name: string;
  kind: number; // vscode.SymbolKind: 0-based (LSP's is 1-based)
  detail?: string;
  containerName?: string;
  range?: Rng;
  selectionRange?: Rng;
  children?: CodeSymbol[];
  location?: CodeLocation;
  tags?: readonly number[];
}
export interface CodeCallItem {
  name: string;
  kind: number;
  detail?: string;
  uri: CodeUri;
  range: Rng;
  selectionRange: Rng;
  tags?: readonly number[];
}
export interface CodeTextEdit {
  range: Rng;
  newText: string;
}
export interface CodeWorkspaceEdit {
  entries(): [CodeUri, CodeTextEdit[]][];
}
export interface CodeCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}
/** vscode.CodeAction (or a bare vscode.Command, which has `command` as a string). */
export interface CodeCodeAction {
  title: string;
  kind?: { value: string };
  isPreferred?: boolean;
  disabled?: { reason: string };
  diagnostics?: readonly EditorDiagnostic[];
  edit?: CodeWorkspaceEdit;
  command?: CodeCommand | string;
  arguments?: unknown[];
}
export interface LspCodeAction {
  title: string;
  kind?: string;
  isPreferred?: boolean;
  disabled?: { reason: string };
  diagnostics?: Record<string, unknown>[];
  edit?: { changes: Record<string, CodeTextEdit[]> };
  command?: CodeCommand;
}

export interface LspLocation {
  uri: string;
  range: Rng;
}
export interface LspSymbol {
  name: string;
  kind: number;
  detail?: string;
  range: Rng;
  selectionRange: Rng;
  children?: LspSymbol[];
  tags?: number[];
}
export interface LspSymbolInformation {
  name: string;
  kind: number;
  containerName?: string;
  location: LspLocation;
  tags?: number[];
}
export interface LspCallItem {
  name: string;
  kind: number;
  detail?: string;
  uri: string;
  range: Rng;
  selectionRange: Rng;
  tags?: number[];
}

/** What answering needs from VS Code. */
export interface LanguageDeps<U = unknown, P = unknown> {
  /** vscode.commands.executeCommand. */
  execute(command: string, ...args: unknown[]): PromiseLike<unknown>;
  /** Open (load) a document, so its language server has it. */
  open(uri: U): PromiseLike<unknown>;
  /** vscode.languages.getDiagnostics(uri). */
  diagnostics(uri: U): readonly EditorDiagnostic[];
  /** A protocol uri as VS Code's Uri, and VS Code's as a protocol uri. */
  toCodeUri(uri: string): U;
  asUri(uri: CodeUri): string;
  toCodePosition(position: Pos): P;
  /** A protocol range as VS Code's Range. */
  toCodeRange(range: Rng): unknown;
}

// ---- conversions ------------------------------------------------------------------------

const OWN_SOURCE = 'agentls';

const range = (r: Rng): Rng => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

const tagsOf = (tags: readonly number[] | undefined): { tags?: number[] } =>
  tags && tags.length ? { tags: [...tags] } : {};

/** Locations and links (definition, typeDefinition, implementation, references) as Location[]. */
export function toLocations(items: readonly (CodeLocation | CodeLocationLink)[] | undefined, asUri: (u: CodeUri) => string): LspLocation[] {
  return (items ?? []).map((item) =>
    'targetUri' in item
      ? { uri: asUri(item.targetUri), range: range(item.targetSelectionRange ?? item.targetRange) }
      : { uri: asUri(item.uri), range: range(item.range) },
  );
}

/** VS Code's hovers (one per provider) as one LSP Hover with markdown contents, or null. */
export function toHover(hovers: readonly CodeHover[] | undefined): { contents: { kind: 'markdown'; value: string }; range?: Rng } | null {
  const parts: string[] = [];
  let first: Rng | undefined;
  for (const hover of hovers ?? []) {
    first ??= hover.range;
    for (const content of hover.contents) {
      const text =
        typeof content === 'string'
          ? content
          : content.language
            ? '```' + content.language + '\n' + content.value + '\n```'
            : content.value;
      if (text.trim()) parts.push(text);
    }
  }
  if (!parts.length) return null;
  return { contents: { kind: 'markdown', value: parts.join('\n\n---\n\n') }, ...(first ? { range: range(first) } : {}) };
}

/** Document symbols: DocumentSymbol[] when VS Code has the tree, else SymbolInformation[]. */
export function toDocumentSymbols(items: readonly CodeSymbol[] | undefined, asUri: (u: CodeUri) => string): LspSymbol[] | LspSymbolInformation[] {
  const list = items ?? [];
  if (list.every((s) => s.range && s.selectionRange)) return list.map(toDocumentSymbol);
  return toSymbolInformation(list, asUri);
}

function toDocumentSymbol(symbol: CodeSymbol): LspSymbol {
  const full = symbol.range ?? symbol.location?.range;
  if (!full) throw new Error(`symbol ${symbol.name} has no range`);
  return {
    name: symbol.name,
    kind: symbol.kind + 1,
    ...(symbol.detail ? { detail: symbol.detail } : {}),
    range: range(full),
    selectionRange: range(symbol.selectionRange ?? full),
    ...tagsOf(symbol.tags),
    ...(symbol.children?.length ? { children: symbol.children.map(toDocumentSymbol) } : {}),
  };
}

/** Workspace symbols (vscode.SymbolInformation) as LSP SymbolInformation. */
export function toSymbolInformation(items: readonly CodeSymbol[] | undefined, asUri: (u: CodeUri) => string): LspSymbolInformation[] {
  return (items ?? [])
    .filter((s): s is CodeSymbol & { location: CodeLocation } => s.location !== undefined)
    .map((s) => ({
      name: s.name,
      kind: s.kind + 1,
      ...(s.containerName ? { containerName: s.containerName } : {}),
      location: { uri: asUri(s.location.uri), range: range(s.location.range) },
      ...tagsOf(s.tags),
    }));
}

export function toCallItem(item: CodeCallItem, asUri: (u: CodeUri) => string): LspCallItem {
  return {
    name: item.name,
    kind: item.kind + 1,
    ...(item.detail ? { detail: item.detail } : {}),
    uri: asUri(item.uri),
    range: range(item.range),
    selectionRange: range(item.selectionRange),
    ...tagsOf(item.tags),
  };
}

/** A WorkspaceEdit (rename) as an LSP WorkspaceEdit with `changes`, or null when empty. */
export function toWorkspaceEdit(edit: CodeWorkspaceEdit | undefined, asUri: (u: CodeUri) => string): { changes: Record<string, CodeTextEdit[]> } | null {
  if (!edit) return null;
  const changes: Record<string, CodeTextEdit[]> = {};
  for (const [uri, edits] of edit.entries()) {
    if (!edits.length) continue;
    const key = asUri(uri);
    changes[key] = [...(changes[key] ?? []), ...edits.map((e) => ({ range: range(e.range), newText: e.newText }))];
  }
  return Object.keys(changes).length ? { changes } : null;
}

/** VS Code's code actions as LSP CodeActions (a bare Command becomes an action that runs it); an
 * action's edit is given as `changes`, its command as it is (the server decides whether to run it). */
export function toCodeActions(items: readonly CodeCodeAction[] | undefined, asUri: (u: CodeUri) => string): LspCodeAction[] {
  return (items ?? []).map((item) => {
    if (typeof item.command === 'string') {
      return { title: item.title, command: { title: item.title, command: item.command, ...(item.arguments ? { arguments: item.arguments } : {}) } };
    }
    const edit = toWorkspaceEdit(item.edit, asUri);
    const command = item.command;
    return {
      title: item.title,
      ...(item.kind?.value ? { kind: item.kind.value } : {}),
      ...(item.isPreferred ? { isPreferred: true } : {}),
      ...(item.disabled ? { disabled: { reason: item.disabled.reason } } : {}),
      ...(item.diagnostics?.length ? { diagnostics: item.diagnostics.map(toLspDiagnostic) } : {}),
      ...(edit ? { edit } : {}),
      ...(command ? { command: { title: command.title, command: command.command, ...(command.arguments ? { arguments: command.arguments } : {}) } } : {}),
    };
  });
}

/** textDocument/diagnostic: a full report of what VS Code's language servers say about the file
 * (agentls' own published diagnostics left out: the answer never comes from agentls). */
export function toDiagnosticReport(diagnostics: readonly EditorDiagnostic[]): { kind: 'full'; items: Record<string, unknown>[] } {
  return { kind: 'full', items: diagnostics.filter((d) => d.source !== OWN_SOURCE).map(toLspDiagnostic) };
}

// ---- answering --------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field<T>(params: Record<string, unknown>, name: string, check: (v: unknown) => v is T, what: string): T {
  const value = params[name];
  if (!check(value)) throw new Error(`agent/languageRequest: params.${name} must be ${what}`);
  return value;
}

const isPos = (v: unknown): v is Pos => isRecord(v) && Number.isInteger(v.line) && Number.isInteger(v.character);
const isRng = (v: unknown): v is Rng => isRecord(v) && isPos(v.start) && isPos(v.end);
const isDocument = (v: unknown): v is { uri: string } => isRecord(v) && typeof v.uri === 'string';
const isString = (v: unknown): v is string => typeof v === 'string';
const isCallItem = (v: unknown): v is LspCallItem =>
  isRecord(v) && typeof v.uri === 'string' && typeof v.name === 'string' && isRng(v.range) && isRng(v.selectionRange);

const samePos = (a: Pos, b: Pos): boolean => a.line === b.line && a.character === b.character;

export class LanguageRequests<U = unknown, P = unknown> {
  constructor(private readonly deps: LanguageDeps<U, P>) {}

  /** The LSP result of `method`, or null; throws (a JSON-RPC error to the server) on bad params. */
  async answer(request: unknown): Promise<unknown> {
    if (!isRecord(request) || typeof request.method !== 'string' || !isRecord(request.params)) {
      throw new Error('agent/languageRequest: expected {method, params} with params an object');
    }
    const method = request.method as LanguageMethod;
    const params = request.params;
    const deps = this.deps;
    const asUri = (u: CodeUri): string => deps.asUri(u);
    if (method === 'workspace/symbol') {
      const query = field(params, 'query', isString, 'a string');
      return toSymbolInformation((await deps.execute('vscode.executeWorkspaceSymbolProvider', query)) as CodeSymbol[], asUri);
    }
    if (method === 'callHierarchy/incomingCalls' || method === 'callHierarchy/outgoingCalls') {
      const item = field(params, 'item', isCallItem, 'a CallHierarchyItem');
      const codeItem = await this.callItem(item);
      if (!codeItem) return null;
      if (method === 'callHierarchy/incomingCalls') {
        const calls = (await deps.execute('vscode.provideIncomingCalls', codeItem)) as { from: CodeCallItem; fromRanges: Rng[] }[] | undefined;
        return (calls ?? []).map((c) => ({ from: toCallItem(c.from, asUri), fromRanges: c.fromRanges.map(range) }));
      }
      const calls = (await deps.execute('vscode.provideOutgoingCalls', codeItem)) as { to: CodeCallItem; fromRanges: Rng[] }[] | undefined;
      return (calls ?? []).map((c) => ({ to: toCallItem(c.to, asUri), fromRanges: c.fromRanges.map(range) }));
    }
    if (method === 'codeAction/resolve') {
      // Resolved already (textDocument/codeAction asks VS Code for the edits): the action as given.
      if (typeof params.title !== 'string') throw new Error('agent/languageRequest: params.title must be a string');
      return params;
    }
    if (!LANGUAGE_METHODS.includes(method)) {
      throw new Error(`agent/languageRequest: ${String(request.method)} is not a method this client answers`);
    }
    const uri = deps.toCodeUri(field(params, 'textDocument', isDocument, 'a TextDocumentIdentifier').uri);
    await deps.open(uri);
    if (method === 'textDocument/documentSymbol') {
      return toDocumentSymbols((await deps.execute('vscode.executeDocumentSymbolProvider', uri)) as CodeSymbol[], asUri);
    }
    if (method === 'textDocument/diagnostic') {
      return toDiagnosticReport(deps.diagnostics(uri));
    }
    if (method === 'textDocument/codeAction') {
      const codeRange = deps.toCodeRange(field(params, 'range', isRng, 'a Range'));
      const context = isRecord(params.context) ? params.context : {};
      const only = Array.isArray(context.only) && typeof context.only[0] === 'string' ? context.only[0] : undefined;
      const actions = (await deps.execute('vscode.executeCodeActionProvider', uri, codeRange, only, RESOLVE_ACTIONS)) as CodeCodeAction[] | undefined;
      return toCodeActions(actions, asUri);
    }
    const position = deps.toCodePosition(field(params, 'position', isPos, 'a Position'));
    switch (method) {
      case 'textDocument/definition':
        return toLocations((await deps.execute('vscode.executeDefinitionProvider', uri, position)) as CodeLocation[], asUri);
      case 'textDocument/typeDefinition':
        return toLocations((await deps.execute('vscode.executeTypeDefinitionProvider', uri, position)) as CodeLocation[], asUri);
      case 'textDocument/implementation':
        return toLocations((await deps.execute('vscode.executeImplementationProvider', uri, position)) as CodeLocation[], asUri);
      case 'textDocument/references':
        return toLocations((await deps.execute('vscode.executeReferenceProvider', uri, position)) as CodeLocation[], asUri);
      case 'textDocument/hover':
        return toHover((await deps.execute('vscode.executeHoverProvider', uri, position)) as CodeHover[]);
      case 'textDocument/prepareRename': {
        const prepared = (await deps.execute('vscode.prepareRename', uri, position)) as { range: Rng; placeholder: string } | undefined;
        return prepared ? { range: range(prepared.range), placeholder: prepared.placeholder } : null;
      }
      case 'textDocument/rename': {
        const newName = field(params, 'newName', isString, 'a string');
        return toWorkspaceEdit((await deps.execute('vscode.executeDocumentRenameProvider', uri, position, newName)) as CodeWorkspaceEdit, asUri);
      }
      case 'textDocument/prepareCallHierarchy': {
        const items = (await deps.execute('vscode.prepareCallHierarchy', uri, position)) as CodeCallItem[] | undefined;
        return items?.length ? items.map((i) => toCallItem(i, asUri)) : null;
      }
      default:
        throw new Error(`agent/languageRequest: ${method} is not a method this client answers`);
    }
  }

  /** VS Code's own CallHierarchyItem for an LSP one: its provider only takes items it made, so
   * prepare again at the item's selection and take the one that matches. */
  private async callItem(item: LspCallItem): Promise<CodeCallItem | undefined> {
    const deps = this.deps;
    const uri = deps.toCodeUri(item.uri);
    await deps.open(uri);
    const items = (await deps.execute('vscode.prepareCallHierarchy', uri, deps.toCodePosition(item.selectionRange.start))) as
      | CodeCallItem[]
      | undefined;
    const list = items ?? [];
    return (
      list.find((i) => i.name === item.name && samePos(i.selectionRange.start, item.selectionRange.start)) ??
      list.find((i) => i.name === item.name) ??
      list[0]
    );
  }
}
