// The extension's side of the panel's code blocks and path links (codeActions.ts, codeTheme.ts):
// Insert into the active editor, Apply as agent/proposeEdit in the session, open a path at a line
// only inside the workspace, the grammars on demand, the colour theme with its includes merged.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CodeActions, insideWorkspace, type CodeEditor } from '../../src/codeActions';
import { AgentHost } from '../../src/host';
import { isPanelMessage } from '../../src/model/messages';
import { findTheme, loadTheme } from '../../src/codeTheme';
import type { AgentConnection } from '../../src/hostTypes';
import type { CodeHostMessage, CodeTheme } from '../../src/model/codeBlocks';
import type { AgentRequests } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';

class FakeEditor implements CodeEditor {
  files = new Set(['/work/demo/calc.py', '/work/demo/src/app.py']);
  opened: { path: string; line?: number }[] = [];
  inserted: string[] = [];
  copied: string[] = [];
  infos: string[] = [];
  errors: string[] = [];
  hasEditor = true;
  root = (): string | undefined => '/work/demo';
  isFile = async (path: string): Promise<boolean> => this.files.has(path);
  open = async (path: string, line?: number): Promise<void> => void this.opened.push(line ? { path, line } : { path });
  insert = async (text: string): Promise<boolean> => {
    if (!this.hasEditor) return false;
    this.inserted.push(text);
    return true;
  };
  copy = async (text: string): Promise<void> => void this.copied.push(text);
  info = (message: string): void => void this.infos.push(message);
  error = (message: string): void => void this.errors.push(message);
  theme = async (): Promise<CodeTheme | undefined> => undefined;
  grammarFile = async (name: string): Promise<string | undefined> => {
    try {
      return readFileSync(join(extensionRoot, 'dist', 'grammars', `${name}.json`), 'utf8');
    } catch {
      return undefined;
    }
  };
}

class FakeServer implements AgentConnection {
  calls: { method: string; params: unknown }[] = [];
  answer: unknown = { decision: 'once', applied: true };
  failure?: Error;
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    return this.failure ? Promise.reject(this.failure) : Promise.resolve(this.answer as AgentRequests[M]['result']);
  }
}

describe('code block actions on the extension side', () => {
  let editor: FakeEditor;
  let server: FakeServer;
  let posted: CodeHostMessage[];
  let actions: CodeActions;

  beforeEach(() => {
    editor = new FakeEditor();
    server = new FakeServer();
    posted = [];
    actions = new CodeActions(editor, (m) => posted.push(m));
  });

  it('inserts into the active editor, and says so when there is none', async () => {
    await actions.handle({ type: 'insert-code', text: 'x = 1\n' }, server, 's');
    expect(editor.inserted).toEqual(['x = 1\n']);
    editor.hasEditor = false;
    await actions.handle({ type: 'insert-code', text: 'y = 2\n' }, server, 's');
    expect(editor.inserted).toEqual(['x = 1\n']);
    expect(editor.infos).toEqual(['agentls: open a file in the editor to insert the code at its cursor.']);
  });

  it('copies to the clipboard', async () => {
    await actions.handle({ type: 'copy-code', text: 'print(1)\n' }, server, 's');
    expect(editor.copied).toEqual(['print(1)\n']);
  });

  it('applies as a proposal of the server in the panel’s session, never as a write of its own', async () => {
    await actions.handle({ type: 'apply-code', sessionId: 's1', path: 'calc.py', text: 'new\n' }, server, 'other');
    await actions.handle({ type: 'apply-code', path: 'src/app.py', text: 'app\n' }, server, 'active');
    expect(server.calls).toEqual([
      { method: 'agent/proposeEdit', params: { sessionId: 's1', path: 'calc.py', text: 'new\n' } },
      { method: 'agent/proposeEdit', params: { sessionId: 'active', path: 'src/app.py', text: 'app\n' } },
    ]);
    expect(editor.inserted).toEqual([]);
    expect(editor.errors).toEqual([]);
  });

  it('does not apply outside the workspace, without a server or a session, and says why', async () => {
    await actions.handle({ type: 'apply-code', sessionId: 's', path: '../etc/passwd', text: 'x' }, server, 's');
    await actions.handle({ type: 'apply-code', sessionId: 's', path: 'calc.py', text: 'x' }, undefined, 's');
    await actions.handle({ type: 'apply-code', path: 'calc.py', text: 'x' }, server, undefined);
    expect(server.calls).toEqual([]);
    expect(editor.errors).toEqual([
      'agentls: cannot apply to ../etc/passwd: it is not inside the workspace.',
      'agentls: the server is not running; the code was not applied.',
      'agentls: open a session to apply code to a file.',
    ]);
  });

  it('tells the server’s refusal and an unchanged file', async () => {
    server.failure = new Error('Invalid params: path: .git/config is protected; agentls does not change it');
    await actions.handle({ type: 'apply-code', sessionId: 's', path: '.git/config', text: 'x' }, server, 's');
    server.failure = undefined;
    server.answer = { decision: 'unchanged', applied: false };
    await actions.handle({ type: 'apply-code', sessionId: 's', path: 'calc.py', text: 'x' }, server, 's');
    expect(editor.errors).toEqual(['agentls: applying to .git/config failed: Invalid params: path: .git/config is protected; agentls does not change it']);
    expect(editor.infos).toEqual(['agentls: calc.py already has this content.']);
  });

  it('opens a workspace file at the line; refuses paths outside it and missing files', async () => {
    await actions.handle({ type: 'open-path', path: 'calc.py', line: 12 }, server, 's');
    await actions.handle({ type: 'open-path', path: '/work/demo/src/app.py' }, server, 's');
    await actions.handle({ type: 'open-path', path: '../secrets.txt', line: 1 }, server, 's');
    await actions.handle({ type: 'open-path', path: 'gone.py' }, server, 's');
    expect(editor.opened).toEqual([{ path: '/work/demo/calc.py', line: 12 }, { path: '/work/demo/src/app.py' }]);
    expect(editor.infos).toEqual([
      'agentls: ../secrets.txt is not inside the workspace; only workspace files are opened.',
      'agentls: there is no file gone.py in the workspace.',
    ]);
  });

  it('answers a grammar by name or alias, and nothing for a language it lacks', async () => {
    await actions.handle({ type: 'load-grammar', lang: 'py' }, server, 's');
    await actions.handle({ type: 'load-grammar', lang: 'brainfuck' }, server, 's');
    const [python, none] = posted as Extract<CodeHostMessage, { type: 'grammar' }>[];
    expect(python.lang).toBe('py');
    expect((python.grammars.at(-1) as { name: string }).name).toBe('python');
    expect(none).toEqual({ type: 'grammar', lang: 'brainfuck', grammars: [] });
  });

  it('sends the workspace folder and the theme', async () => {
    editor.theme = async () => ({ name: 't', type: 'dark', colors: {}, tokenColors: [] });
    await actions.sendContext();
    expect(posted).toEqual([{ type: 'code-context', root: '/work/demo', theme: { name: 't', type: 'dark', colors: {}, tokenColors: [] } }]);
  });
});

describe('the host routes the panel’s code messages', () => {
  it('to the code actions, with its server and active session; the theme at ready', async () => {
    const editor = new FakeEditor();
    const server = new FakeServer();
    const posted: unknown[] = [];
    const values = new Map<string, unknown>([['agentls.activeSessionId', 'ses_1']]);
    const memory = { get: <T>(key: string) => values.get(key) as T | undefined, update: async (key: string, value: unknown) => void values.set(key, value) };
    const code = new CodeActions(editor, (m) => posted.push(m));
    const host = new AgentHost({ post: (m) => posted.push(m), showError: () => {}, openDiff: () => {}, openFile: () => {}, code }, memory);
    (host as unknown as { client: AgentConnection }).client = server; // as connected() leaves it
    const apply = { type: 'apply-code', path: 'calc.py', text: 'z\n' };
    expect(isPanelMessage(apply)).toBe(true);
    expect(isPanelMessage({ type: 'open-path', path: 'calc.py', line: 0 })).toBe(false);
    await host.handlePanelMessage(apply as never);
    await host.handlePanelMessage({ type: 'insert-code', text: 'i' });
    await host.handlePanelMessage({ type: 'ready' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(server.calls).toEqual([{ method: 'agent/proposeEdit', params: { sessionId: 'ses_1', path: 'calc.py', text: 'z\n' } }]);
    expect(editor.inserted).toEqual(['i']);
    expect(posted).toContainEqual({ type: 'code-context', root: '/work/demo' });
  });
});

describe('insideWorkspace', () => {
  it('keeps paths inside the folder only', () => {
    expect(insideWorkspace('/w', 'a/b.py')).toBe('/w/a/b.py');
    expect(insideWorkspace('/w/', '/w/a.py')).toBe('/w/a.py');
    expect(insideWorkspace('/w', 'a/../../x.py')).toBeUndefined();
    expect(insideWorkspace('/w', '/wx/a.py')).toBeUndefined();
    expect(insideWorkspace('/w', '/etc/passwd')).toBeUndefined();
  });
});

describe('the editor’s colour theme', () => {
  const files: Record<string, string> = {
    '/ext/themes/dark_modern.json': '{ "include": "./dark_plus.json", "colors": { "editor.background": "#1f1f1f" }, // comment\n "tokenColors": [{ "scope": "string", "settings": { "foreground": "#111111" } }], }',
    '/ext/themes/dark_plus.json': '{ "type": "dark", "colors": { "editor.background": "#1e1e1e", "editor.foreground": "#d4d4d4" }, "tokenColors": [{ "scope": "keyword", "settings": { "foreground": "#c586c0" } }] }',
  };
  const read = async (path: string): Promise<string> => {
    const text = files[path];
    if (text === undefined) throw new Error(`ENOENT ${path}`);
    return text;
  };

  it('merges a theme’s includes under its own colours and rules (JSON with comments)', async () => {
    const theme = await loadTheme('/ext/themes/dark_modern.json', read);
    expect(theme).toEqual({
      name: 'dark_modern',
      type: 'dark',
      colors: { 'editor.background': '#1f1f1f', 'editor.foreground': '#d4d4d4' },
      tokenColors: [
        { scope: 'keyword', settings: { foreground: '#c586c0' } },
        { scope: 'string', settings: { foreground: '#111111' } },
      ],
    });
  });

  it('is none when the file cannot be read; light from the contribution', async () => {
    expect(await loadTheme('/ext/missing.json', read)).toBeUndefined();
    files['/ext/light.json'] = '{ "tokenColors": [] }';
    expect((await loadTheme('/ext/light.json', read, 'vs'))?.type).toBe('light');
  });

  it('finds the contributed theme by id, else by label', () => {
    const themes = [
      { id: 'Default Dark Modern', label: '%darkModern%', path: './a.json' },
      { label: 'Solarized Light', path: './b.json' },
    ];
    expect(findTheme(themes, 'Default Dark Modern')?.path).toBe('./a.json');
    expect(findTheme(themes, 'Solarized Light')?.path).toBe('./b.json');
    expect(findTheme(themes, 'Nope')).toBeUndefined();
  });
});
