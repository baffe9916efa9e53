// @-mentions: what the prompt box completes (webview/mentions.ts), fuzzy file matching
// (mentionMatch.ts), the panel's mention messages answered through HostUi.mentions, and a prompt's
// mentions sent to agent/prompt as context items and labelled in the transcript.
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { PathIndex, rankPaths } from '../../src/mentionMatch';
import { FileIndex } from '../../src/mentions';
import { Uri, stub } from '../stubs/vscode';
import { isPanelMessage, type HostMessage, type MentionItem } from '../../src/model/messages';
import type { AgentRequests } from '../../src/protocol/generated';
import { locateTokens, mentionQuery, nameOf, parseQuery, tokenOf } from '../../src/webview/mentions';

describe('completion', () => {
  it('finds the mention being typed: an @ at the start or after a space, up to the caret', () => {
    expect(mentionQuery('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionQuery('fix @pro', 8)).toEqual({ start: 4, query: 'pro' });
    expect(mentionQuery('fix @file:src/ca', 16)).toEqual({ start: 4, query: 'file:src/ca' });
    expect(mentionQuery('fix @problems now', 17)).toBeUndefined(); // past it
    expect(mentionQuery('mail me@example.com', 19)).toBeUndefined();
    expect(mentionQuery('no mention', 10)).toBeUndefined();
  });

  it('searches files and symbols for any query, with the kinds that start with it; file: and symbol: search one', () => {
    const kinds = (q: string): string[] => parseQuery(q).kinds.map((k) => k.name);
    expect(kinds('')).toEqual(['selection', 'problems', 'terminal', 'git']);
    expect(kinds('s')).toEqual(['selection']);
    expect(kinds('P')).toEqual(['problems']);
    expect(kinds('calc')).toEqual([]);
    expect(parseQuery('calc')).toMatchObject({ text: 'calc', search: ['file', 'symbol'] });
    expect(parseQuery('file:calc')).toEqual({ search: ['file'], text: 'calc', kinds: [] });
    expect(parseQuery('symbol:')).toEqual({ search: ['symbol'], text: '', kinds: [] });
  });

  it("finds a chip's token where it stands alone, the longer of two that overlap", () => {
    const text = '@calc.py and @calc.pyc, not x@calc.py; @calc.py.';
    expect(locateTokens(text, ['@calc.py'])).toEqual([
      { start: 0, end: 8, token: 0 },
      { start: 39, end: 47, token: 0 }, // punctuation after it ends it
    ]);
    expect(locateTokens('see @calc.py', ['@calc', '@calc.py'])).toEqual([{ start: 4, end: 12, token: 1 }]);
    expect(locateTokens('nothing here', ['@calc.py'])).toEqual([]);
  });

  it("shows a mention as @label and says its name in the prompt's text", () => {
    const file = { label: 'calc.py', detail: 'src/calc.py', name: 'src/calc.py', ref: { uri: 'file:///w/src/calc.py' } };
    expect(tokenOf(file)).toBe('@calc.py');
    expect(nameOf(file)).toBe('src/calc.py');
    expect(tokenOf(PROBLEMS)).toBe('@problems');
    expect(nameOf(PROBLEMS)).toBe('@problems'); // the label of its context block
  });

  it('ranks files: a name starting with the query first (exact, shorter, shallower), then fuzzy', () => {
    const files = ['docs/cache/layout.md', 'a/recalc_all.py', 'src/deep/calculator.py', 'tests/test_calc.py', 'src/calc.py', 'README.md', 'lib/calc/index.ts', 'calc.py.orig'];
    expect(rankPaths(files, 'calc', 10)).toEqual([
      'src/calc.py', // the name less its extension is the query
      'calc.py.orig',
      'src/deep/calculator.py',
      'tests/test_calc.py', // the name holds it (the shorter name first)
      'a/recalc_all.py',
      'lib/calc/index.ts', // fuzzy from here: the query in the path
    ]);
    expect(rankPaths(files, 'CALC', 1)).toEqual(['src/calc.py']);
    expect(rankPaths(files, 'cal', 10).slice(0, 3)).toEqual(['src/calc.py', 'calc.py.orig', 'src/deep/calculator.py']);
    expect(rankPaths(files, 'cal', 10)).toContain('docs/cache/layout.md'); // c, a, l in order
    expect(rankPaths(files, 'src/ca', 10).slice(0, 2)).toEqual(['src/calc.py', 'src/deep/calculator.py']);
    expect(rankPaths(files, 'xyz', 10)).toEqual([]);
    expect(rankPaths(files, '', 10)).toEqual([]);
  });

  it('keeps its files current: added, deleted, a deleted folder', () => {
    const index = new PathIndex(['src/calc.py', 'src/util/helpers.py']);
    expect(index.search('help', 5)).toEqual(['src/util/helpers.py']);
    index.add('tests/helpers_test.py');
    expect(index.search('help', 5)).toEqual(['src/util/helpers.py', 'tests/helpers_test.py']);
    index.deleteUnder('src/util');
    expect(index.search('help', 5)).toEqual(['tests/helpers_test.py']);
    index.delete('tests/helpers_test.py');
    expect(index.search('help', 5)).toEqual([]);
    expect(index.size).toBe(1);
    // As the query grows only the last matches are looked at again: a file added between two
    // keystrokes is still found, and a shorter query looks at every file.
    expect(index.search('he', 5)).toEqual([]);
    index.add('docs/help.md');
    expect(index.search('hel', 5)).toEqual(['docs/help.md']);
    expect(index.search('c', 5)).toEqual(['src/calc.py', 'docs/help.md']);
  });
});

describe("the extension's file index", () => {
  it('lists the files once, leaves out node_modules and .git, and follows the file watcher', async () => {
    stub.reset();
    for (const path of ['src/calc.py', 'tests/test_calc.py', 'node_modules/calc/index.js', '.git/calc']) {
      stub.files.set(Uri.file(`/work/demo/${path}`).toString(), '');
    }
    const files = new FileIndex();
    const index = await files.get();
    expect(await files.get()).toBe(index); // listed once
    expect(index.search('calc', 10)).toEqual(['src/calc.py', 'tests/test_calc.py']);
    expect(files.uri('src/calc.py')?.toString()).toBe('file:///work/demo/src/calc.py');
    const [watcher] = stub.watchers;
    const created = Uri.file('/work/demo/src/calc_util.py');
    stub.files.set(created.toString(), '');
    watcher.created.fire(created);
    watcher.created.fire(Uri.file('/work/demo/node_modules/calc/more.js'));
    await expect.poll(() => index.search('calc', 10)).toEqual(['src/calc.py', 'src/calc_util.py', 'tests/test_calc.py']);
    watcher.deleted.fire(Uri.file('/work/demo/src')); // a folder
    expect(index.search('calc', 10)).toEqual(['tests/test_calc.py']);
    expect(files.uri('src/calc.py')).toBeUndefined();
    files.dispose();
  });
});

describe('panel messages', () => {
  it('accepts mention requests and prompts with context items, and nothing malformed', () => {
    expect(isPanelMessage({ type: 'mention-search', kind: 'file', query: 'ca' })).toBe(true);
    expect(isPanelMessage({ type: 'mention', kind: 'problems' })).toBe(true);
    expect(isPanelMessage({ type: 'mention', kind: 'secrets' })).toBe(false);
    expect(isPanelMessage({ type: 'mention-search', kind: 'file' })).toBe(false);
    const text = { type: 'text', label: '@git', text: 'diff' };
    expect(isPanelMessage({ type: 'prompt', text: 'x', context: [{ uri: 'file:///a.py' }, text] })).toBe(true);
    expect(isPanelMessage({ type: 'prompt', text: 'x', context: [{ type: 'text', text: 'no label' }] })).toBe(false);
    expect(isPanelMessage({ type: 'prompt', text: 'x', context: 'all' })).toBe(false);
  });
});

class Server implements AgentConnection {
  calls: { method: string; params: unknown }[] = [];
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const answers: Record<string, unknown> = {
      'agent/listSessions': { sessions: [] },
      'agent/newSession': { sessionId: 'ses_1' },
      'agent/prompt': { sessionId: 'ses_1', messageId: 'msg_1', finishReason: 'end_turn', text: 'ok' },
      'agent/getMessages': { messages: [] },
    };
    return Promise.resolve(answers[method] as AgentRequests[M]['result']);
  }
}

const PROBLEMS: MentionItem = { label: '@problems', detail: '1 in calc.py', ref: { type: 'text', label: '@problems', text: 'calc.py:2:5 error: wrong' } };

async function setup(mentions?: HostUi['mentions']): Promise<{ host: AgentHost; posted: HostMessage[]; server: Server }> {
  const posted: HostMessage[] = [];
  const ui: HostUi = { post: (m) => posted.push(m), showError: () => {}, openDiff: () => {}, openFile: () => {}, mentions };
  const store = new Map<string, unknown>();
  const host = new AgentHost(ui, { get: <T>(k: string) => store.get(k) as T, update: async (k, v) => void store.set(k, v) });
  const server = new Server();
  await host.connected(server);
  return { host, posted, server };
}

describe('the host', () => {
  it('answers searches and items through HostUi.mentions, and says why one is missing', async () => {
    const searched: string[] = [];
    const { host, posted } = await setup({
      search: async (kind, query) => {
        searched.push(`${kind}:${query}`);
        return [{ label: 'calc.py', detail: 'src/calc.py', ref: { uri: 'file:///w/src/calc.py' } }];
      },
      item: async (kind) => (kind === 'problems' ? PROBLEMS : 'There is no active terminal.'),
    });
    await host.handlePanelMessage({ type: 'mention-search', kind: 'file', query: 'calc' });
    await host.handlePanelMessage({ type: 'mention', kind: 'problems' });
    await host.handlePanelMessage({ type: 'mention', kind: 'terminal' });
    expect(searched).toEqual(['file:calc']);
    expect(posted.filter((m) => m.type.startsWith('mention'))).toEqual([
      { type: 'mention-results', kind: 'file', query: 'calc', items: [expect.objectContaining({ label: 'calc.py' })] },
      { type: 'mention-item', item: PROBLEMS },
      { type: 'mention-item', error: 'There is no active terminal.' },
    ]);
  });

  it('without a provider, offers nothing and says so', async () => {
    const { host, posted } = await setup();
    await host.handlePanelMessage({ type: 'mention-search', kind: 'symbol', query: 'add' });
    await host.handlePanelMessage({ type: 'mention', kind: 'git' });
    expect(posted.filter((m) => m.type.startsWith('mention'))).toEqual([
      { type: 'mention-results', kind: 'symbol', query: 'add', items: [] },
      { type: 'mention-item', error: '@git is not available here.' },
    ]);
  });

  it("sends a prompt's mentions as context items and labels them in the transcript", async () => {
    const { host, posted, server } = await setup();
    const file = { uri: 'file:///w/src/calc.py', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } };
    await host.handlePanelMessage({ type: 'prompt', text: 'fix it', context: [file, PROBLEMS.ref] });
    const prompt = server.calls.find((c) => c.method === 'agent/prompt');
    expect(prompt?.params).toEqual({ sessionId: 'ses_1', text: 'fix it', context: [file, PROBLEMS.ref] });
    expect(posted).toContainEqual(expect.objectContaining({ type: 'prompt-sent', context: ['calc.py:2-3', '@problems'] }));
  });
});
