// Which pending questions become the panel's background cards: those of background sessions the
// panel does not show, each labelled with its session's title and branch.
import { describe, expect, it } from 'vitest';
import { backgroundQuestions } from '../../src/model/backgroundQuestions';
import { applyEvent, emptyView, type SessionView } from '../../src/model/transcript';
import type { SessionInfo } from '../../src/protocol/generated';

function session(sessionId: string, background: boolean): SessionInfo {
  return {
    sessionId,
    title: `title of ${sessionId}`,
    busy: true,
    createdAt: 0,
    updatedAt: 0,
    model: 'm',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    background: background ? { state: 'waiting', branch: `agentls/${sessionId}`, worktree: '/wt', base: 'abc' } : null,
  };
}

function asking(sessionId: string): SessionView {
  const view = emptyView(sessionId);
  const input = { path: 'app.py', old_string: 'X = 1', new_string: 'X = 2' };
  applyEvent(view, { type: 'tool-call', sessionId, callId: 'c1', tool: 'edit', title: 'edit app.py', input });
  applyEvent(view, { type: 'permission-request', sessionId, requestId: `r-${sessionId}`, callId: 'c1', tool: 'edit', title: 'edit app.py', input, diff: '-X = 1\n+X = 2\n' });
  return view;
}

describe('background questions', () => {
  it('lists the pending question of a background session the panel does not show', () => {
    const views = [asking('bg'), asking('fg')];
    const found = backgroundQuestions(views, [session('bg', true), session('fg', false)], 'fg');
    expect(found).toEqual([
      expect.objectContaining({ sessionId: 'bg', sessionTitle: 'title of bg', branch: 'agentls/bg', requestId: 'r-bg', tool: 'edit', diff: '-X = 1\n+X = 2\n' }),
    ]);
  });

  it('leaves out the open session, a foreground session and an answered question', () => {
    const answered = asking('done');
    applyEvent(answered, { type: 'permission-resolved', sessionId: 'done', requestId: 'r-done', decision: 'once' });
    const sessions = [session('bg', true), session('fg', false), session('done', true)];
    expect(backgroundQuestions([asking('bg'), asking('fg'), answered], sessions, 'bg')).toEqual([]);
  });

  it("lists a detached run's questions from its session entry, even for the open session", () => {
    const detached = session('cli', true);
    detached.background!.questions = [
      { requestId: 'q1', tool: 'ask_user', title: 'ask the user', input: { question: 'Which database?' } },
      { requestId: 'q2', tool: 'write', title: 'Create notes.txt', input: { path: 'notes.txt' }, diff: '+hi\n' },
    ];
    expect(backgroundQuestions([], [detached], 'cli')).toEqual([
      { sessionId: 'cli', sessionTitle: 'title of cli', branch: 'agentls/cli', requestId: 'q1', tool: 'ask_user', title: 'ask the user', input: { question: 'Which database?' }, diff: undefined },
      { sessionId: 'cli', sessionTitle: 'title of cli', branch: 'agentls/cli', requestId: 'q2', tool: 'write', title: 'Create notes.txt', input: { path: 'notes.txt' }, diff: '+hi\n' },
    ]);
  });
});
