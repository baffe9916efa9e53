import { describe, expect, it } from 'vitest';
import type { AgentEvent, MessageInfo } from '../../src/protocol/generated';
import { applyEvent, emptyView, viewFromMessages, type NoticeItem } from '../../src/model/transcript';

const failed: AgentEvent = {
  type: 'error',
  sessionId: 's',
  kind: 'rate_limit',
  message: "The API's rate limit was reached (HTTP 429) after 5 attempts.",
  nextStep: 'Wait a minute, then Retry (or choose another model).',
  retryable: true,
  details: 'The model request failed after 5 attempts; last error: HTTP 429: rate_limit_error: slow down',
};

const notices = (items: { kind: string }[]): NoticeItem[] => items.filter((i): i is NoticeItem => i.kind === 'notice');

describe('a failed turn in the transcript', () => {
  it('is one error notice holding the failure, without the generic end line', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'u1', prompt: 'go' });
    applyEvent(view, failed);
    applyEvent(view, { type: 'turn-end', sessionId: 's', finishReason: 'error' });
    const [notice] = notices(view.items);
    expect(notices(view.items)).toHaveLength(1);
    expect(notice.text).toBe("The API's rate limit was reached (HTTP 429) after 5 attempts.");
    expect(notice.failure).toEqual({
      kind: 'rate_limit',
      nextStep: 'Wait a minute, then Retry (or choose another model).',
      retryable: true,
      details: 'The model request failed after 5 attempts; last error: HTTP 429: rate_limit_error: slow down',
    });
  });

  it('is marked retried by the retried turn, which adds no prompt', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'u1', prompt: 'go' });
    applyEvent(view, failed);
    applyEvent(view, { type: 'turn-end', sessionId: 's', finishReason: 'error' });
    const rev = notices(view.items)[0].rev;
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'u1', prompt: 'go', retry: true });
    expect(view.busy).toBe(true);
    expect(view.items.filter((i) => i.kind === 'user')).toHaveLength(1);
    const [notice] = notices(view.items);
    expect(notice.failure?.retried).toBe(true);
    expect(notice.rev).toBeGreaterThan(rev); // drawn again, without its Retry
  });

  it('keeps a problem the turn goes on after as a plain notice', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'error', sessionId: 's', message: "MCP server 'web' failed to start" });
    expect(notices(view.items)[0].failure).toBeUndefined();
  });

  it('offers Retry for a loaded session whose last turn failed', () => {
    const messages: MessageInfo[] = [
      { id: 'u1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'go' }] },
      { id: 'a1', role: 'assistant', createdAt: 2, parts: [], finishReason: 'error' },
    ];
    const [notice] = notices(viewFromMessages('s', messages).items);
    expect(notice.failure?.retryable).toBe(true);
    const answered = viewFromMessages('s', [...messages, { id: 'a2', role: 'assistant', createdAt: 3, parts: [{ type: 'text', text: 'ok' }], finishReason: 'end_turn' }]);
    expect(notices(answered.items).every((n) => !n.failure)).toBe(true);
  });

  it('keeps the sub-agents\u2019 share of the usage', () => {
    const view = emptyView('s');
    const u = { inputTokens: 10, outputTokens: 5, costUsd: 0.1 };
    applyEvent(view, { type: 'usage', sessionId: 's', step: u, turn: u, session: u, subagents: { inputTokens: 4, costUsd: 0.04 } });
    expect(view.usage.subagents).toEqual({ inputTokens: 4, costUsd: 0.04 });
  });
});
