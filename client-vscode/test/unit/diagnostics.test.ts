import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DiagnosticsForwarder, toLspDiagnostic, type EditorDiagnostic } from '../../src/diagnostics';
import type { DiagnosticsParams } from '../../src/protocol/generated';

const uri = (s: string) => ({ scheme: s.split(':')[0], toString: () => s });

const pylance: EditorDiagnostic = {
  range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } },
  message: '"mediam" is not defined',
  severity: 0,
  source: 'Pylance',
  code: { value: 'reportUndefinedVariable' },
};
const own: EditorDiagnostic = { ...pylance, source: 'agentls', message: 'SyntaxError' };

describe('diagnostics forwarding', () => {
  let sent: DiagnosticsParams[];
  let diags: Map<string, EditorDiagnostic[]>;
  let forwarder: DiagnosticsForwarder<ReturnType<typeof uri>>;

  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    diags = new Map([['file:///w/calc.py', [pylance, own]]]);
    forwarder = new DiagnosticsForwarder(
      {
        get: (u) => diags.get(u.toString()) ?? [],
        all: () => [...diags.keys()].map((k) => [uri(k), diags.get(k)!] as const),
        version: (u) => (u.toString() === 'file:///w/calc.py' ? 12 : undefined),
        asProtocolUri: (u) => u.toString(),
      },
      (p) => sent.push(p),
    );
  });
  afterEach(() => vi.useRealTimers());

  it('converts VS Code diagnostics to LSP ones (severity 0-based to 1-based, code value)', () => {
    expect(toLspDiagnostic(pylance)).toEqual({
      range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } },
      message: '"mediam" is not defined',
      severity: 1,
      source: 'Pylance',
      code: 'reportUndefinedVariable',
    });
    expect(toLspDiagnostic({ ...pylance, severity: 3, code: 7, tags: [1] })).toMatchObject({ severity: 4, code: 7, tags: [1] });
  });

  it('pushes each changed file once per burst, with its version, minus our own', () => {
    forwarder.changed([uri('file:///w/calc.py')]);
    forwarder.changed([uri('file:///w/calc.py'), uri('untitled:Untitled-1'), uri('git:/w/calc.py')]);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(25);
    expect(sent).toEqual([{ uri: 'file:///w/calc.py', version: 12, diagnostics: [toLspDiagnostic(pylance)] }]);
  });

  it('pushes an empty list when a file’s problems are gone, without a version when it is closed', () => {
    diags.set('file:///w/other.py', []);
    forwarder.changed([uri('file:///w/other.py')]);
    vi.advanceTimersByTime(25);
    expect(sent).toEqual([{ uri: 'file:///w/other.py', diagnostics: [] }]);
  });

  it('pushes everything VS Code knows when the server (re)starts', () => {
    diags.set('file:///w/b.py', []);
    forwarder.pushAll();
    forwarder.flush();
    expect(sent.map((p) => p.uri)).toEqual(['file:///w/calc.py', 'file:///w/b.py']);
  });
});
