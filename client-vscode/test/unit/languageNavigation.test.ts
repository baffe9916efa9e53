import { describe, expect, it } from 'vitest';
import { LanguageRequests, type CodeCallItem, type Pos } from '../../src/language';

// The requests behind agentls' navigation tools (type_definition, implementation, callees),
// answered from VS Code's own providers.

const r = (l1: number, c1: number, l2: number, c2: number) => ({
  start: { line: l1, character: c1 },
  end: { line: l2, character: c2 },
});
const uri = (s: string) => ({ toString: () => s });

function setup(results: Record<string, unknown>) {
  const executed: { command: string; args: unknown[] }[] = [];
  const requests = new LanguageRequests<{ toString(): string }, Pos>({
    execute: async (command, ...args) => {
      executed.push({ command, args });
      const result = results[command];
      return typeof result === 'function' ? (result as (...a: unknown[]) => unknown)(...args) : result;
    },
    open: async () => undefined,
    diagnostics: () => [],
    toCodeUri: (s) => uri(s),
    asUri: (u) => u.toString(),
    toCodePosition: (p) => ({ line: p.line, character: p.character }),
    toCodeRange: (range) => range,
  });
  return { requests, executed };
}

const position = { textDocument: { uri: 'file:///w/a.ts' }, position: { line: 4, character: 6 } };

describe('navigation requests', () => {
  it('asks the type definition and implementation providers at the position, answering Locations', async () => {
    const { requests, executed } = setup({
      'vscode.executeTypeDefinitionProvider': [{ uri: uri('file:///w/shape.ts'), range: r(0, 13, 0, 18) }],
      'vscode.executeImplementationProvider': [
        // A LocationLink: its target's selection is the place.
        { targetUri: uri('file:///w/square.ts'), targetRange: r(2, 0, 6, 1), targetSelectionRange: r(3, 2, 3, 6) },
      ],
    });
    const type = await requests.answer({ method: 'textDocument/typeDefinition', params: position });
    const impl = await requests.answer({ method: 'textDocument/implementation', params: position });
    expect(type).toEqual([{ uri: 'file:///w/shape.ts', range: r(0, 13, 0, 18) }]);
    expect(impl).toEqual([{ uri: 'file:///w/square.ts', range: r(3, 2, 3, 6) }]);
    expect(executed.map((e) => [e.command, String(e.args[0]), e.args[1]])).toEqual([
      ['vscode.executeTypeDefinitionProvider', 'file:///w/a.ts', { line: 4, character: 6 }],
      ['vscode.executeImplementationProvider', 'file:///w/a.ts', { line: 4, character: 6 }],
    ]);
  });

  it('answers outgoing calls for VS Code its own call hierarchy item, the callee as an LSP item', async () => {
    const report: CodeCallItem = { name: 'report', kind: 11, uri: uri('file:///w/a.ts'), range: r(4, 0, 8, 1), selectionRange: r(4, 9, 4, 15) };
    const area: CodeCallItem = { name: 'area', kind: 5, uri: uri('file:///w/square.ts'), range: r(3, 2, 5, 3), selectionRange: r(3, 2, 3, 6) };
    const { requests } = setup({
      'vscode.prepareCallHierarchy': [report],
      'vscode.provideOutgoingCalls': (item: unknown) => (item === report ? [{ to: area, fromRanges: [r(6, 9, 6, 13)] }] : []),
    });
    const [prepared] = (await requests.answer({ method: 'textDocument/prepareCallHierarchy', params: position })) as unknown[];
    const outgoing = await requests.answer({ method: 'callHierarchy/outgoingCalls', params: { item: prepared } });
    // VS Code's SymbolKind is 0-based, LSP's 1-based: Method (5) is 6.
    expect(outgoing).toEqual([
      { to: { name: 'area', kind: 6, uri: 'file:///w/square.ts', range: r(3, 2, 5, 3), selectionRange: r(3, 2, 3, 6) }, fromRanges: [r(6, 9, 6, 13)] },
    ]);
  });
});
