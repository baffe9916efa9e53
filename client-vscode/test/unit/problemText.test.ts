import { describe, expect, it } from 'vitest';
import { fixInstruction, MAX_PROBLEMS, problemLine, REPLACED_SERVER_ACTIONS } from '../../src/problemText';

describe('the prompt of a fix with the agent', () => {
  it('names each problem by its 1-based line, source, code, severity and message', () => {
    expect(problemLine({ line: 2, message: 'Cannot access attribute "totl"', source: 'Pylance', code: 'reportAttributeAccessIssue', severity: 'error' })).toBe(
      '- line 3 (Pylance reportAttributeAccessIssue, error): Cannot access attribute "totl"',
    );
    expect(problemLine({ line: 0, message: 'unused\n  import' })).toBe('- line 1: unused import');
    expect(problemLine({ line: 4, message: 'x', code: 7 })).toBe('- line 5 (7): x');
  });

  it('lists the problems in line order under the file, for the selection or the whole file', () => {
    const text = fixInstruction(
      [
        { line: 9, message: 'b', source: 'ruff', code: 'F401' },
        { line: 1, message: 'a', source: 'pyright' },
      ],
      false,
      'src/calc.py',
    );
    expect(text).toBe('Fix the problems the editor reports in the selected code of src/calc.py:\n- line 2 (pyright): a\n- line 10 (ruff F401): b');
    expect(fixInstruction([{ line: 0, message: 'a' }], true, 'src/calc.py').split('\n')[0]).toBe('Fix the problems the editor reports in src/calc.py:');
  });

  it('cuts a long list and says how many more there are', () => {
    const many = Array.from({ length: MAX_PROBLEMS + 3 }, (_, i) => ({ line: i, message: `p${i}` }));
    const lines = fixInstruction(many, true, 'a.py').split('\n');
    expect(lines).toHaveLength(MAX_PROBLEMS + 2);
    expect(lines[lines.length - 1]).toBe('(and 3 more)');
  });

  it('replaces only the server\'s ask and fix actions (refactor and plan stay)', () => {
    expect(REPLACED_SERVER_ACTIONS.has('Ask agent about this')).toBe(true);
    expect(REPLACED_SERVER_ACTIONS.has('Agent: fix the problems here')).toBe(true);
    expect(REPLACED_SERVER_ACTIONS.has('Agent: refactor this')).toBe(false);
    expect(REPLACED_SERVER_ACTIONS.has('Agent: plan a change here')).toBe(false);
  });
});
