// What the panel reads out of an answer and a tool call, without a browser: a fence's language
// and file, the paths that become links, and the calm tool-card wording (webview/codeblocks.ts,
// paths.ts, toolcards.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { parseInfo } from '../../src/webview/codeblocks';
import { lastPath, relativePaths, setWorkspaceRoot, wholePath } from '../../src/webview/paths';
import { foldsIntoTodoList, rejectionNote, subAgentResult, toolName, toolStatus, toolTitle } from '../../src/webview/toolcards';
import type { ToolItem } from '../../src/model/transcript';

const tool = (over: Partial<ToolItem>): ToolItem => ({ kind: 'tool', id: 't', rev: 0, callId: 'c', tool: 'read', title: 'read x', input: {}, status: 'completed', ...over });

afterEach(() => setWorkspaceRoot(undefined));

describe('a fence’s info string', () => {
  it.each([
    ['python', { lang: 'python', file: undefined }],
    ['python calc.py', { lang: 'python', file: { path: 'calc.py', line: undefined } }],
    ['py:src/calc.py', { lang: 'py', file: { path: 'src/calc.py', line: undefined } }],
    ['calc.py', { lang: 'py', file: { path: 'calc.py', line: undefined } }],
    ['ts title="src/app.ts"', { lang: 'ts', file: { path: 'src/app.ts', line: undefined } }],
    ['c++', { lang: 'c++', file: undefined }],
    ['', { lang: '', file: undefined }],
    ['sh {.line-numbers}', { lang: 'sh', file: undefined }],
  ])('%j', (info, expected) => {
    expect(parseInfo(info)).toEqual(expected);
  });
});

describe('paths', () => {
  it('takes a whole path with an optional line; not a domain, a version or a sentence', () => {
    expect(wholePath('calc.py:12')).toEqual({ path: 'calc.py', line: 12 });
    expect(wholePath('src/app.py')).toEqual({ path: 'src/app.py', line: undefined });
    expect(wholePath('src/app.py:3:7')).toEqual({ path: 'src/app.py', line: 3 });
    expect(wholePath('example.com')).toBeUndefined();
    expect(wholePath('add')).toBeUndefined();
    expect(wholePath('v1.2')).toBeUndefined();
    expect(wholePath('run calc.py')).toBeUndefined();
  });

  it('is relative to the workspace, and none for an absolute path outside it', () => {
    setWorkspaceRoot('/work/demo/');
    expect(wholePath('/work/demo/lib/util.py:7')).toEqual({ path: 'lib/util.py', line: 7 });
    expect(wholePath('/etc/passwd.txt')).toBeUndefined();
    expect(relativePaths('edit /work/demo/calc.py and /work/demo/x.py')).toBe('edit calc.py and x.py');
  });

  it('finds the last path a sentence names', () => {
    expect(lastPath('In calc.py, then in src/app.py:')).toEqual({ path: 'src/app.py', line: undefined });
    expect(lastPath('Nothing here:')).toBeUndefined();
  });
});

describe('tool cards', () => {
  it('say Rejected with the user’s note for a call turned down', () => {
    const rejected = tool({
      tool: 'edit', status: 'error', isError: true,
      permission: { requestId: 'r', state: 'reject', title: 'Edit calc.py', hasEdit: true },
      output: 'The user rejected this edit call (Edit calc.py). Nothing was done.\nTheir feedback: not like this',
    });
    expect(toolStatus(rejected)).toEqual({ text: 'Rejected', className: 'status-rejected' });
    expect(rejectionNote(rejected)).toBe('not like this');
    expect(toolStatus(tool({ status: 'error', isError: true }))).toEqual({ text: 'failed', className: 'status-error' });
    expect(rejectionNote(tool({ status: 'error', output: 'Their feedback: x' }))).toBeUndefined();
    // A session loaded from its history keeps no answers: the result says it.
    const loaded = tool({ tool: 'bash', status: 'error', isError: true, output: 'The user rejected this bash call (Run make). Nothing was done.\nTheir feedback: not now' });
    expect(toolStatus(loaded).text).toBe('Rejected');
    expect(rejectionNote(loaded)).toBe('not now');
  });

  it('title a call by its file, relative, and a sub-agent by its description', () => {
    setWorkspaceRoot('/work/demo');
    expect(toolTitle(tool({ tool: 'edit', title: 'edit /work/demo/calc.py' }))).toBe('calc.py');
    expect(toolTitle(tool({ tool: 'grep', title: 'grep: add' }))).toBe('add');
    const task = tool({ tool: 'task', title: 'task: find the tests', input: { description: 'find the tests', prompt: '…' }, agent: 'explorer' });
    expect(toolTitle(task)).toBe('find the tests');
    expect(toolName(task)).toBe('Sub-agent explorer');
    expect(toolTitle(tool({ tool: 'task', title: 'task: look around', input: {} }))).toBe('look around');
  });

  it('fold todo updates into the pinned list, unless one waits or failed', () => {
    expect(foldsIntoTodoList(tool({ tool: 'todowrite' }))).toBe(true);
    expect(foldsIntoTodoList(tool({ tool: 'todowrite', status: 'error' }))).toBe(false);
    expect(foldsIntoTodoList(tool({ tool: 'todowrite', permission: { requestId: 'r', state: 'pending', title: 't', hasEdit: false } }))).toBe(false);
    expect(foldsIntoTodoList(tool({ tool: 'read' }))).toBe(false);
  });

  it('show a sub-agent’s answer without the line naming its session', () => {
    expect(subAgentResult('The tests are in tests/.\n\n[sub-agent general, session ses_abc123: 2 tool calls (glob, read); read a.py]')).toBe('The tests are in tests/.');
    expect(subAgentResult('no summary line')).toBe('no summary line');
  });
});
