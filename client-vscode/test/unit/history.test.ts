// The session history's pure parts (webview/history.ts): how long ago, and the title filter.
import { describe, expect, it } from 'vitest';
import { backgroundLine, relativeTime, titleMatches } from '../../src/webview/history';
import type { SessionInfo } from '../../src/protocol/generated';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const MIN = 60_000;

describe('session history', () => {
  it('says how long ago a session was used', () => {
    expect(relativeTime(NOW - 20_000, NOW)).toBe('just now');
    expect(relativeTime(NOW - 5 * MIN, NOW)).toBe('5 min. ago');
    expect(relativeTime(NOW - 3 * 60 * MIN, NOW)).toBe('3 hr. ago');
    expect(relativeTime(NOW - 26 * 60 * MIN, NOW)).toBe('yesterday');
    expect(relativeTime(NOW - 9 * 24 * 60 * MIN, NOW)).toBe('last wk.');
  });

  it('keeps the sessions whose title has every word of the query', () => {
    const s = (title: string) => ({ sessionId: title, title }) as SessionInfo;
    const all = [s('Fix the parser'), s('Parser tests'), s('Docs')];
    expect(titleMatches(all, 'parser').map((x) => x.title)).toEqual(['Fix the parser', 'Parser tests']);
    expect(titleMatches(all, 'PARSER fix').map((x) => x.title)).toEqual(['Fix the parser']);
    expect(titleMatches(all, 'nothing')).toEqual([]);
  });

  it("says a background session's state, branch and changed files", () => {
    const base = { branch: 'agentls/fix-it', worktree: '/r/.git/agentls-worktrees/fix-it', base: 'abc' };
    const file = { path: 'a.py', added: 1, removed: 0 };
    expect(backgroundLine({ ...base, state: 'running', changedFiles: [] })).toBe('background · running · agentls/fix-it · 0 files changed');
    expect(backgroundLine({ ...base, state: 'done', changedFiles: [file] })).toBe('background · done · agentls/fix-it · 1 file changed');
    expect(backgroundLine({ ...base, state: 'failed', changedFiles: null })).toBe('background · failed · agentls/fix-it · worktree gone');
  });
});
