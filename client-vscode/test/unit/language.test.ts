import { describe, expect, it } from 'vitest';
import {
  LanguageRequests,
  toDocumentSymbols,
  toHover,
  toLocations,
  toWorkspaceEdit,
  type CodeCallItem,
  type Pos,
} from '../../src/language';

const r = (l1: number, c1: number, l2: number, c2: number) => ({
  start: { line: l1, character: c1 },
  end: { line: l2, character: c2 },
});
const uri = (s: string) => ({ toString: () => s });
const asUri = (u: { toString(): string }) => u.toString();

function setup(results: Record<string, unknown>, diagnostics: unknown[] = []) {
  const executed: { command: string; args: unknown[] }[] = [];
  const opened: string[] = [];
  const requests = new LanguageRequests<{ toString(): string }, Pos>({
    execute: async (command, ...args) => {
      executed.push({ command, args });
      const result = results[command];
      return typeof result === 'function' ? (result as (...a: unknown[]) => unknown)(...args) : result;
    },
    open: async (u) => opened.push(u.toString()),
    diagnostics: () => diagnostics as never,
    toCodeUri: (s) => uri(s),
    asUri,
    toCodePosition: (p) => ({ line: p.line, character: p.character }),
    toCodeRange: (range) => range,
  });
  return { requests, executed, opened };
}

const position = { textDocument: { uri: 'file:///w/a.ts' }, position: { line: 2, character: 9 } };

describe('conversions to LSP shapes', () => {
  it('turns locations and location links into Location[] (the link at its selection)', () => {
    expect(
      toLocations(
        [
          { uri: uri('file:///w/a.ts'), range: r(1, 2, 1, 5) },
          { targetUri: uri('file:///w/b.ts'), targetRange: r(0, 0, 9, 1), targetSelectionRange: r(0, 16, 0, 19) },
          { targetUri: uri('file:///w/c.ts'), targetRange: r(4, 0, 4, 8) },
        ],
        asUri,
      ),
    ).toEqual([
      { uri: 'file:///w/a.ts', range: r(1, 2, 1, 5) },
      { uri: 'file:///w/b.ts', range: r(0, 16, 0, 19) },
      { uri: 'file:///w/c.ts', range: r(4, 0, 4, 8) },
    ]);
    expect(toLocations(undefined, asUri)).toEqual([]);
  });

  it('merges every provider hover into one markdown Hover, fencing code blocks; none is null', () => {
    expect(
      toHover([
        { contents: [{ value: 'function add(a: number): number', language: 'typescript' }], range: r(2, 9, 2, 12) },
        { contents: ['', { value: 'Adds **one**.' }] },
      ]),
    ).toEqual({
      contents: { kind: 'markdown', value: '```typescript\nfunction add(a: number): number\n```\n\n---\n\nAdds **one**.' },
      range: r(2, 9, 2, 12),
    });
    expect(toHover([{ contents: [' '] }])).toBeNull();
    expect(toHover(undefined)).toBeNull();
  });

  it('keeps the document symbol tree with 1-based kinds, or falls back to SymbolInformation', () => {
    const tree = toDocumentSymbols(
      [
        {
          name: 'Box',
          kind: 4, // vscode.SymbolKind.Class
          range: r(0, 0, 5, 1),
          selectionRange: r(0, 13, 0, 16),
          children: [{ name: 'open', kind: 5, range: r(1, 2, 3, 3), selectionRange: r(1, 2, 1, 6), children: [] }],
        },
      ],
      asUri,
    );
    expect(tree).toEqual([
      {
        name: 'Box',
        kind: 5, // LSP SymbolKind.Class
        range: r(0, 0, 5, 1),
        selectionRange: r(0, 13, 0, 16),
        children: [{ name: 'open', kind: 6, range: r(1, 2, 3, 3), selectionRange: r(1, 2, 1, 6) }],
      },
    ]);
    const flat = toDocumentSymbols(
      [{ name: 'x', kind: 12, containerName: 'm', location: { uri: uri('file:///w/m.py'), range: r(3, 0, 3, 1) } }],
      asUri,
    );
    expect(flat).toEqual([{ name: 'x', kind: 13, containerName: 'm', location: { uri: 'file:///w/m.py', range: r(3, 0, 3, 1) } }]);
  });

  it('turns a rename WorkspaceEdit into changes per uri, and an empty one into null', () => {
    const edit = {
      entries: () =>
        [
          [uri('file:///w/a.ts'), [{ range: r(0, 16, 0, 19), newText: 'sum' }]],
          [uri('file:///w/b.ts'), [{ range: r(0, 9, 0, 12), newText: 'sum' }, { range: r(2, 7, 2, 10), newText: 'sum' }]],
          [uri('file:///w/c.ts'), []],
        ] as [{ toString(): string }, { range: ReturnType<typeof r>; newText: string }[]][],
    };
    expect(toWorkspaceEdit(edit, asUri)).toEqual({
      changes: {
        'file:///w/a.ts': [{ range: r(0, 16, 0, 19), newText: 'sum' }],
        'file:///w/b.ts': [
          { range: r(0, 9, 0, 12), newText: 'sum' },
          { range: r(2, 7, 2, 10), newText: 'sum' },
        ],
      },
    });
    expect(toWorkspaceEdit({ entries: () => [] }, asUri)).toBeNull();
    expect(toWorkspaceEdit(undefined, asUri)).toBeNull();
  });
});

describe('LanguageRequests.answer', () => {
  it('opens the document, then asks the reference provider at the position', async () => {
    const { requests, executed, opened } = setup({
      'vscode.executeReferenceProvider': [{ uri: uri('file:///w/b.ts'), range: r(0, 9, 0, 12) }],
    });
    const result = await requests.answer({ method: 'textDocument/references', params: { ...position, context: { includeDeclaration: true } } });
    expect(opened).toEqual(['file:///w/a.ts']);
    expect(executed.map((e) => [e.command, String(e.args[0]), e.args[1]])).toEqual([
      ['vscode.executeReferenceProvider', 'file:///w/a.ts', { line: 2, character: 9 }],
    ]);
    expect(result).toEqual([{ uri: 'file:///w/b.ts', range: r(0, 9, 0, 12) }]);
  });

  it('renames with the new name; prepareRename gives range and placeholder or null', async () => {
    const { requests, executed } = setup({
      'vscode.executeDocumentRenameProvider': {
        entries: () => [[uri('file:///w/a.ts'), [{ range: r(2, 9, 2, 12), newText: 'sum' }]]],
      },
      'vscode.prepareRename': { range: r(2, 9, 2, 12), placeholder: 'add' },
    });
    expect(await requests.answer({ method: 'textDocument/rename', params: { ...position, newName: 'sum' } })).toEqual({
      changes: { 'file:///w/a.ts': [{ range: r(2, 9, 2, 12), newText: 'sum' }] },
    });
    expect(executed[0].args[2]).toBe('sum');
    expect(await requests.answer({ method: 'textDocument/prepareRename', params: position })).toEqual({
      range: r(2, 9, 2, 12),
      placeholder: 'add',
    });
    await expect(requests.answer({ method: 'textDocument/rename', params: position })).rejects.toThrow(
      'params.newName must be a string',
    );
  });

  it('answers textDocument/codeAction with resolved edits, kinds and commands; resolve returns the action', async () => {
    const { requests, executed } = setup({
      'vscode.executeCodeActionProvider': [
        {
          title: 'Organize imports',
          kind: { value: 'source.organizeImports' },
          isPreferred: true,
          edit: { entries: () => [[uri('file:///w/a.ts'), [{ range: r(0, 0, 2, 0), newText: 'import a\n' }]]] },
        },
        { title: 'Create stub', kind: { value: 'quickfix' }, command: { title: 'Create stub', command: 'x.createStub', arguments: ['a'] } },
        { title: 'Legacy', command: 'x.legacy', arguments: [1] },
      ],
    });
    const params = { textDocument: { uri: 'file:///w/a.ts' }, range: r(0, 0, 3, 4), context: { diagnostics: [], only: ['source'] } };
    const actions = await requests.answer({ method: 'textDocument/codeAction', params });
    expect(executed[0].command).toBe('vscode.executeCodeActionProvider');
    // The range as given, the kind asked for, and every action's edit resolved.
    expect(executed[0].args.slice(1, 3)).toEqual([r(0, 0, 3, 4), 'source']);
    expect(executed[0].args[3]).toBeGreaterThan(0);
    expect(actions).toEqual([
      {
        title: 'Organize imports',
        kind: 'source.organizeImports',
        isPreferred: true,
        edit: { changes: { 'file:///w/a.ts': [{ range: r(0, 0, 2, 0), newText: 'import a\n' }] } },
      },
      { title: 'Create stub', kind: 'quickfix', command: { title: 'Create stub', command: 'x.createStub', arguments: ['a'] } },
      { title: 'Legacy', command: { title: 'Legacy', command: 'x.legacy', arguments: [1] } },
    ]);
    const first = (actions as unknown[])[0];
    expect(await requests.answer({ method: 'codeAction/resolve', params: first })).toEqual(first);
  });

  it('does not run language server commands (VS Code would apply their edits directly)', async () => {
    const { requests, executed } = setup({});
    await expect(requests.answer({ method: 'workspace/executeCommand', params: { command: 'x.createStub' } })).rejects.toThrow(
      'not a method this client answers',
    );
    expect(executed).toEqual([]);
  });

  it('answers textDocument/diagnostic with a full report, without agentls own diagnostics', async () => {
    const { requests } = setup({}, [
      { range: r(1, 0, 1, 4), message: "Cannot find name 'ad'.", severity: 0, source: 'ts', code: { value: 2304 } },
      { range: r(0, 0, 0, 1), message: 'own check', severity: 0, source: 'agentls' },
    ]);
    expect(await requests.answer({ method: 'textDocument/diagnostic', params: { textDocument: { uri: 'file:///w/a.ts' } } })).toEqual({
      kind: 'full',
      items: [{ range: r(1, 0, 1, 4), message: "Cannot find name 'ad'.", severity: 1, source: 'ts', code: 2304 }],
    });
  });

  it('finds VS Code its own call hierarchy item again for incoming calls', async () => {
    const made: CodeCallItem = { name: 'add', kind: 11, uri: uri('file:///w/a.ts'), range: r(0, 0, 2, 1), selectionRange: r(0, 16, 0, 19) };
    const other: CodeCallItem = { ...made, name: 'other', selectionRange: r(5, 0, 5, 5) };
    const caller: CodeCallItem = { name: 'main', kind: 11, uri: uri('file:///w/b.ts'), range: r(2, 0, 4, 1), selectionRange: r(2, 9, 2, 13) };
    const { requests, executed } = setup({
      'vscode.prepareCallHierarchy': [other, made],
      'vscode.provideIncomingCalls': (item: unknown) => (item === made ? [{ from: caller, fromRanges: [r(3, 2, 3, 5)] }] : []),
    });
    const prepared = (await requests.answer({ method: 'textDocument/prepareCallHierarchy', params: position })) as { name: string }[];
    expect(prepared.map((p) => p.name)).toEqual(['other', 'add']);
    const incoming = await requests.answer({ method: 'callHierarchy/incomingCalls', params: { item: prepared[1] } });
    expect(incoming).toEqual([
      {
        from: { name: 'main', kind: 12, uri: 'file:///w/b.ts', range: r(2, 0, 4, 1), selectionRange: r(2, 9, 2, 13) },
        fromRanges: [r(3, 2, 3, 5)],
      },
    ]);
    expect(executed.at(-2)?.args[1]).toEqual({ line: 0, character: 16 });
  });

  it('refuses malformed requests with a message naming what is wrong', async () => {
    const { requests } = setup({});
    await expect(requests.answer({ method: 'textDocument/references' })).rejects.toThrow('params an object');
    await expect(requests.answer({ method: 'textDocument/completion', params: position })).rejects.toThrow(
      'textDocument/completion is not a method this client answers',
    );
    await expect(requests.answer({ method: 'textDocument/hover', params: { textDocument: { uri: 'file:///w/a.ts' } } })).rejects.toThrow(
      'params.position must be a Position',
    );
    await expect(requests.answer({ method: 'workspace/symbol', params: {} })).rejects.toThrow('params.query must be a string');
  });
});
