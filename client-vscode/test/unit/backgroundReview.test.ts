// The host side of a background session's review (backgroundReview.ts): each card message is one
// request to the server, its answer or its error posted back to the card; the panel's messages
// are checked before they reach it.
import { describe, expect, it } from 'vitest';
import { backgroundReview } from '../../src/backgroundReview';
import type { AgentConnection, HostUi } from '../../src/hostTypes';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import type { AgentRequests } from '../../src/protocol/generated';

type Method = keyof AgentRequests;

class Server implements AgentConnection {
  calls: { method: Method; params: unknown }[] = [];
  constructor(private readonly answer: (method: Method) => unknown) {}
  request<M extends Method>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    try {
      return Promise.resolve(this.answer(method) as AgentRequests[M]['result']);
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

function ui(): HostUi & { posted: HostMessage[]; errors: string[] } {
  const posted: HostMessage[] = [];
  const errors: string[] = [];
  return { posted, errors, post: (m) => posted.push(m), showError: (m) => errors.push(m), openDiff: () => {}, openFile: () => {} };
}

describe('background review in the extension', () => {
  it('asks agent/backgroundApply for exactly the kept hunks and posts its answer', async () => {
    const result = { applied: [{ path: 'app.txt', hunks: [1] }], conflicts: [] };
    const server = new Server(() => result);
    const u = ui();
    await backgroundReview(server, u, { type: 'background-apply', sessionId: 'b', keep: [{ path: 'app.txt', hunks: [1] }] });
    expect(server.calls).toEqual([{ method: 'agent/backgroundApply', params: { sessionId: 'b', keep: [{ path: 'app.txt', hunks: [1] }] } }]);
    expect(u.posted).toEqual([{ type: 'background-applied', sessionId: 'b', result, mergeEditor: false }]);
  });

  it("keeps a conflict's texts and hands them, with the branch, to the merge editor when the card asks", async () => {
    const merge = { uri: 'file:///r/app.txt', base: 'b\n', yours: 'y\n', theirs: 't\n', marked: 'm\n' };
    const answers: Record<string, unknown> = {
      'agent/backgroundDiff': { state: 'done', branch: 'agentls/edit', base: 'abc', files: [] },
      'agent/backgroundApply': { applied: [], conflicts: [{ path: 'app.txt', hunks: [0], reason: 'clash', merge }, { path: 'logo.bin', hunks: [0], reason: 'binary' }] },
    };
    const server = new Server((method) => answers[method]);
    const asked: unknown[] = [];
    const u = {
      ...ui(),
      backgroundConflicts: {
        mergeEditor: async () => true,
        resolve: async (...args: unknown[]) => {
          asked.push(args);
          return { how: 'merge-editor' as const, note: 'open' };
        },
      },
    };
    await backgroundReview(server, u, { type: 'background-diff', sessionId: 'c' });
    await backgroundReview(server, u, { type: 'background-apply', sessionId: 'c', keep: [{ path: 'app.txt' }] });
    expect(u.posted.at(-1)).toEqual({ type: 'background-applied', sessionId: 'c', result: answers['agent/backgroundApply'], mergeEditor: true });
    expect(asked).toEqual([]); // nothing opens until the card asks
    await backgroundReview(server, u, { type: 'background-resolve', sessionId: 'c', path: 'app.txt', how: 'merge-editor' });
    expect(asked).toEqual([[merge, 'agentls/edit', 'merge-editor']]);
    expect(u.posted.at(-1)).toEqual({ type: 'background-resolved', sessionId: 'c', path: 'app.txt', how: 'merge-editor', note: 'open' });
    // Once: the file's text has changed since; a file without texts has nothing to resolve.
    for (const path of ['app.txt', 'logo.bin']) {
      await backgroundReview(server, u, { type: 'background-resolve', sessionId: 'c', path, how: 'markers' });
      expect(u.posted.at(-1)).toMatchObject({ type: 'background-resolved', path, how: 'failed' });
    }
    expect(asked).toHaveLength(1);
  });

  it("posts the server's refusal to the card", async () => {
    const server = new Server(() => {
      throw new Error('Invalid params: force: agentls/x has work not merged');
    });
    const u = ui();
    await backgroundReview(server, u, { type: 'background-remove', sessionId: 'b', force: false });
    expect(server.calls[0]).toEqual({ method: 'agent/backgroundRemove', params: { sessionId: 'b', force: false } });
    expect(u.posted).toEqual([{ type: 'background-removed', sessionId: 'b', error: 'Invalid params: force: agentls/x has work not merged' }]);
  });

  it('says the server is not running when there is none', async () => {
    const u = ui();
    await backgroundReview(undefined, u, { type: 'background-diff', sessionId: 'b' });
    expect(u.errors).toEqual(['agentls: the server is not running.']);
    expect(u.posted).toEqual([]);
  });

  it("refuses the panel's malformed messages", () => {
    expect(isPanelMessage({ type: 'background-apply', sessionId: 'b', keep: [{ path: 'a', hunks: [0] }] })).toBe(true);
    expect(isPanelMessage({ type: 'background-apply', sessionId: 'b', keep: [{ path: 'a', hunks: [-1] }] })).toBe(false);
    expect(isPanelMessage({ type: 'background-apply', sessionId: 'b', keep: 'all' })).toBe(false);
    expect(isPanelMessage({ type: 'background-remove', sessionId: 'b' })).toBe(false);
    expect(isPanelMessage({ type: 'background-diff', sessionId: '' })).toBe(false);
    expect(isPanelMessage({ type: 'background-resolve', sessionId: 'b', path: 'a', how: 'merge-editor' })).toBe(true);
    expect(isPanelMessage({ type: 'background-resolve', sessionId: 'b', path: 'a', how: 'overwrite' })).toBe(false);
    expect(isPanelMessage({ type: 'background-resolve', sessionId: 'b', how: 'markers' })).toBe(false);
  });
});
