import { describe, expect, it } from 'vitest';
import {
  applyTextEdits,
  applyUnifiedDiff,
  fileChanges,
  firstChangedLine,
  offsetAt,
  proposedText,
} from '../../src/edits';
import { loadFixture } from '../support/fixture';

const range = (sl: number, sc: number, el: number, ec: number) => ({
  start: { line: sl, character: sc },
  end: { line: el, character: ec },
});

describe('applyTextEdits', () => {
  it('applies edits that all refer to the original text, in any order', () => {
    const text = 'one\ntwo\nthree\n';
    const out = applyTextEdits(text, [
      { range: range(2, 0, 2, 5), newText: 'THREE' },
      { range: range(0, 0, 0, 3), newText: '1' },
      { range: range(1, 3, 1, 3), newText: '!' },
    ]);
    expect(out).toBe('1\ntwo!\nTHREE\n');
  });

  it('counts characters in UTF-16 code units, like LSP and JS strings', () => {
    const text = 'a😀b\n';
    expect(applyTextEdits(text, [{ range: range(0, 3, 0, 4), newText: 'B' }])).toBe('a😀B\n');
  });

  it('clamps positions past a line end to the end of that line (CRLF too)', () => {
    expect(offsetAt('ab\r\ncd', { line: 0, character: 99 })).toBe(2);
    expect(offsetAt('ab\ncd', { line: 9, character: 0 })).toBe(5);
    expect(applyTextEdits('ab\r\ncd', [{ range: range(0, 2, 0, 50), newText: 'X' }])).toBe('abX\r\ncd');
  });

  it('keeps the order of inserts at the same place and refuses overlaps', () => {
    expect(
      applyTextEdits('x', [
        { range: range(0, 0, 0, 0), newText: 'a' },
        { range: range(0, 0, 0, 0), newText: 'b' },
      ]),
    ).toBe('abx');
    expect(() =>
      applyTextEdits('abcdef', [
        { range: range(0, 0, 0, 4), newText: '' },
        { range: range(0, 2, 0, 5), newText: '' },
      ]),
    ).toThrow(/overlapping/);
  });
});

describe('fileChanges', () => {
  it('reads documentChanges with a create, and the changes map', () => {
    const edit = {
      documentChanges: [
        { kind: 'create', uri: 'file:///w/new.py', options: { overwrite: false } },
        { textDocument: { uri: 'file:///w/new.py', version: null }, edits: [{ range: range(0, 0, 0, 0), newText: 'X = 1\n' }] },
        { kind: 'delete', uri: 'file:///w/old.py' },
      ],
      changes: { 'file:///w/a.py': [{ range: range(3, 0, 3, 1), newText: 'y' }] },
    };
    const changes = fileChanges(edit);
    expect(changes.map((c) => [c.uri, c.created, c.deleted, c.edits.length])).toEqual([
      ['file:///w/new.py', true, false, 1],
      ['file:///w/old.py', false, true, 0],
      ['file:///w/a.py', false, false, 1],
    ]);
    expect(proposedText(undefined, changes[0])).toBe('X = 1\n');
    expect(proposedText('gone', changes[1])).toBe('');
    expect(firstChangedLine(changes[2])).toBe(3);
  });

  it('ignores what is not an edit', () => {
    expect(fileChanges(null)).toEqual([]);
    expect(fileChanges({ documentChanges: [42, { textDocument: {} }], changes: { 'file:///x': [{ bad: 1 }] } })).toEqual([
      { uri: 'file:///x', edits: [], created: false, deleted: false },
    ]);
  });

  it('turns the recorded edit request into the fixed file', () => {
    const fixture = loadFixture();
    const request = fixture.events.find((e) => e.type === 'permission-request' && e.tool === 'edit');
    if (request?.type !== 'permission-request') throw new Error('no edit request in the fixture');
    const before = [
      '"""Small statistics helpers for the agentls demo project."""',
      '',
      '',
      'def mean(values: list[float]) -> float:',
      '    """The arithmetic mean of a non-empty list."""',
      '    return sum(values) / len(values)',
      '',
      '',
      'def median(values: list[float]) -> float:',
      '    """The middle value (the mean of the two middle values for an even count)."""',
      '    ordered = sorted(values)',
      '    middle = len(ordered) // 2',
      '    if len(ordered) % 2:',
      '        return ordered[middle]',
      '    return (ordered[middle] + ordered[middle + 1]) / 2',
      '',
    ].join('\n');
    const [change] = fileChanges(request.edit);
    const after = proposedText(before, change);
    expect(after).toContain('    return (ordered[middle - 1] + ordered[middle]) / 2\n');
    expect(after.split('\n')).toHaveLength(before.split('\n').length);
    // The diff of the same request gives the same result.
    expect(applyUnifiedDiff(before, request.diff ?? '')).toBe(after);
  });
});

describe('applyUnifiedDiff', () => {
  it('finds a hunk by its context even when lines moved', () => {
    const diff = '--- a/x\n+++ b/x\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n';
    expect(applyUnifiedDiff('a\nb\nc\nd\n', diff)).toBe('a\nb\nC\nd\n');
    expect(applyUnifiedDiff('new\nlines\na\nb\nc\nd\n', diff)).toBe('new\nlines\na\nb\nC\nd\n');
    expect(applyUnifiedDiff('nothing like it', diff)).toBeUndefined();
    expect(applyUnifiedDiff('a', 'not a diff')).toBeUndefined();
  });
});
