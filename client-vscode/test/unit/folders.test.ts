import { describe, expect, it } from 'vitest';
import { CodeActions, type CodeEditor } from '../../src/codeActions';
import { agentPathToFile, nameFolders } from '../../src/folders';
import type { AgentConnection } from '../../src/hostTypes';
import type { AgentRequests } from '../../src/protocol/generated';

describe('workspace folders', () => {
  const two = nameFolders([
    { name: 'app', path: '/w/app' },
    { name: 'lib', path: '/w/lib' },
  ]);

  it('opens a path the agent names by folder in that folder', () => {
    expect(agentPathToFile('lib/util.py', two)).toBe('/w/lib/util.py');
    expect(agentPathToFile('app/src/main.py', two)).toBe('/w/app/src/main.py');
    expect(agentPathToFile('lib', two)).toBe('/w/lib');
    // A name that is no folder's is read in the first folder, as the server does.
    expect(agentPathToFile('src/x.py', two)).toBe('/w/app/src/x.py');
    expect(agentPathToFile('/etc/hosts', two)).toBe('/etc/hosts');
  });

  it('keeps a one-folder workspace as before: paths relative to it', () => {
    const one = nameFolders([{ name: 'lib', path: '/w/lib' }]);
    expect(agentPathToFile('lib/util.py', one)).toBe('/w/lib/lib/util.py');
    expect(agentPathToFile('x.py', [])).toBeUndefined();
  });

  it('names folders as the server does: unique, path-safe', () => {
    const named = nameFolders([
      { name: 'app', path: '/x/app' },
      { name: 'App', path: '/y/app' },
      { name: 'a/b', path: '/z/core' },
      { name: 'again', path: '/x/app' },
    ]);
    expect(named.map((f) => f.name)).toEqual(['app', 'App-2', 'core']);
  });
});

describe('code blocks in a workspace of several folders', () => {
  const folders = nameFolders([
    { name: 'app', path: '/w/app' },
    { name: 'lib', path: '/w/lib' },
  ]);
  const opened: string[] = [];
  const errors: string[] = [];
  const calls: unknown[] = [];
  const editor: CodeEditor = {
    root: () => '/w/app',
    folders: () => folders,
    isFile: async (path) => path === '/w/lib/util.py',
    open: async (path) => void opened.push(path),
    insert: async () => false,
    copy: async () => undefined,
    info: () => undefined,
    error: (message) => void errors.push(message),
    theme: async () => undefined,
    grammarFile: async () => undefined,
  };
  const server: AgentConnection = {
    request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
      calls.push({ method, params });
      return Promise.resolve({ decision: 'once', applied: true } as AgentRequests[M]['result']);
    },
  };

  it('opens and applies to a file of the second folder, never outside every folder', async () => {
    const actions = new CodeActions(editor, () => undefined);
    await actions.handle({ type: 'open-path', path: 'lib/util.py' }, server, 's');
    expect(opened).toEqual(['/w/lib/util.py']);
    await actions.handle({ type: 'apply-code', sessionId: 's', path: 'lib/util.py', text: 'x\n' }, server, 's');
    expect(calls).toEqual([{ method: 'agent/proposeEdit', params: { sessionId: 's', path: 'lib/util.py', text: 'x\n' } }]);
    await actions.handle({ type: 'apply-code', sessionId: 's', path: 'lib/../../etc/passwd', text: 'x' }, server, 's');
    expect(calls).toHaveLength(1);
    expect(errors).toEqual(['agentls: cannot apply to lib/../../etc/passwd: it is not inside the workspace.']);
  });
});
