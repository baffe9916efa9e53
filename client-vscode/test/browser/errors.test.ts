// Errors a person can act on and the true cost, in a real browser (Chromium) at VS Code's default
// sidebar width: a failed turn is a card with the server's sentence, the next step, Retry (which
// asks for agent/retry and goes once the retried turn starts) and the details behind a
// disclosure; a refused request offers no Retry; hovering or focusing the session's total shows
// its breakdown (model, input, output, cache, sub-agents), inside the view.
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { AgentEvent, SessionInfo } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

const WIDTH = 300;
const info: SessionInfo = {
  sessionId: 's',
  title: 'fix add',
  createdAt: 1,
  updatedAt: 1,
  busy: false,
  model: 'claude-sonnet-5-5',
  usage: { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 9000, cacheWriteTokens: 800, costUsd: 0.0123 },
};

describe.skipIf(!existsSync(CHROMIUM))('error cards and the cost breakdown (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const cards = () => page.locator('#transcript .notice.failure');
  /** The element's box lies inside the view (nothing cut off at the panel's width). */
  const inside = async (selector: string): Promise<void> => {
    const box = await page.locator(selector).first().boundingBox();
    expect(box, selector).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(WIDTH);
  };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    mkdirSync(join(extensionRoot, 'test-artifacts'), { recursive: true });
    ({ browser, page, http } = await openPanel({ viewport: { width: WIDTH, height: 640 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows a failed turn as its sentence, the next step, Retry and the details', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [info], activeSessionId: 's', view: emptyView('s') } });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'fix add' });
    await event({ type: 'text-delta', sessionId: 's', delta: 'Looking at calc.py', messageId: 'a1' });
    await event({
      type: 'error',
      sessionId: 's',
      kind: 'network',
      message: "The model's API could not be reached: the connection was refused after 5 attempts.",
      nextStep: "Check your network connection (and the provider's baseUrl if you set one), then Retry.",
      retryable: true,
      details: 'The model request failed after 5 attempts; last error: connection failed: ConnectionRefusedError: [Errno 111] Connection refused',
    });
    await event({ type: 'turn-end', sessionId: 's', finishReason: 'error', messageId: 'a1' });
    await expect.poll(() => cards().count()).toBe(1);
    const card = cards().first();
    expect(await card.getAttribute('role')).toBe('alert');
    expect(await card.locator('.failure-message').textContent()).toBe(
      "The model's API could not be reached: the connection was refused after 5 attempts.",
    );
    expect(await card.locator('.failure-kind').textContent()).toBe('Network');
    expect(await card.locator('.failure-next').textContent()).toContain('Check your network connection');
    // The exception is not shown until asked for, and no generic "ended with an error" line doubles it.
    const details = card.locator('details.failure-details');
    expect(await details.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await details.locator('pre').isVisible()).toBe(false);
    expect(await page.locator('#transcript').textContent()).not.toContain('The turn ended with an error.');
    await details.locator('summary').click();
    expect(await details.locator('pre').textContent()).toContain('ConnectionRefusedError');
    for (const part of ['.failure-message', '.failure-next', 'button.retry', 'details.failure-details pre']) await inside(`#transcript .notice.failure ${part}`);
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts/error-card-300.png') });

    await card.locator('button.retry').click();
    await expect.poll(posted).toContainEqual({ type: 'retry' });
    expect(await card.locator('button.retry').isDisabled()).toBe(true);
  });

  it('keeps the card but no Retry once the retried turn starts, and the turn goes on', async () => {
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'fix add', retry: true });
    await event({ type: 'text-delta', sessionId: 's', delta: 'add returns a - b; it should be a + b.', messageId: 'a2' });
    await event({ type: 'turn-end', sessionId: 's', finishReason: 'end_turn', messageId: 'a2' });
    await expect.poll(() => page.locator('#transcript').textContent()).toContain('it should be a + b.');
    expect(await cards().count()).toBe(1);
    expect(await cards().first().locator('button.retry').count()).toBe(0);
    // The retry added no second prompt to the transcript.
    expect(await page.locator('#transcript .message.user').count()).toBe(1);
  });

  it('offers no Retry for a request the API refused, and says what to do instead', async () => {
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm3', prompt: 'go on' });
    await event({
      type: 'error',
      sessionId: 's',
      kind: 'context_too_long',
      message: "The conversation is too long for the model's context window.",
      nextStep: 'Run /compact to summarize the conversation, or start a new session; Retry as it is would fail again.',
      retryable: false,
      details: 'The model request failed: HTTP 400: invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum',
    });
    await event({ type: 'turn-end', sessionId: 's', finishReason: 'error' });
    await expect.poll(() => cards().count()).toBe(2);
    const card = cards().nth(1);
    expect(await card.locator('.failure-kind').textContent()).toBe('Context too long');
    expect(await card.locator('.failure-next').textContent()).toContain('/compact');
    expect(await card.locator('button.retry').count()).toBe(0);
  });

  it('offers Set API key on a key problem and Show log on a bug, beside Retry', async () => {
    const cases = [
      ['auth', 'The API refused the API key (HTTP 401).', 'Set API key', 'set-api-key'],
      ['internal', 'agentls failed with an internal error (RuntimeError); this is a bug.', 'Show log', 'show-log'],
    ] as const;
    for (const [n, [kind, message, label, type]] of cases.entries()) {
      await event({ type: 'turn-start', sessionId: 's', messageId: `m-${kind}`, prompt: `try ${kind}` });
      await event({ type: 'error', sessionId: 's', kind, message, nextStep: 'Do the next thing, then Retry.', retryable: true, details: 'x' });
      await event({ type: 'turn-end', sessionId: 's', finishReason: 'error' });
      await expect.poll(() => cards().count()).toBe(3 + n);
      const card = cards().last();
      expect(await card.locator('.failure-actions button').allInnerTexts()).toEqual([label, 'Retry']);
      await inside('#transcript .notice.failure:last-of-type .failure-actions button.retry');
      await card.locator('button', { hasText: label }).click();
      await expect.poll(posted).toContainEqual({ type });
    }
  });

  it('shows the session total, and its breakdown on hover and on focus, inside the view', async () => {
    const sub = { inputTokens: 5000, outputTokens: 900, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0285 };
    const session = { inputTokens: 6200, outputTokens: 1200, cacheReadTokens: 9000, cacheWriteTokens: 800, costUsd: 0.0408, estimated: true };
    await event({ type: 'usage', sessionId: 's', step: session, turn: session, session, subagents: sub });
    const total = page.locator('#usage .cost-total');
    await expect.poll(() => total.textContent()).toBe('~$0.04 · 17k tokens');
    const tip = page.locator('#usage .cost-tip');
    expect(await tip.isVisible()).toBe(false);
    await page.locator('#usage').hover();
    await expect.poll(() => tip.isVisible()).toBe(true);
    const rows = await tip.locator('tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent]));
    expect(rows).toEqual([
      ['Model', 'claude-sonnet-5-5'],
      ['Input', '6,200'],
      ['Output', '1,200'],
      ['Cache read', '9,000'],
      ['Cache write', '800'],
      ['Sub-agents', '$0.03 · 5.9k tokens'],
      ['Last turn', '~$0.04'],
      ['Session', '~$0.04'],
    ]);
    expect(await tip.locator('.cost-note').textContent()).toContain('estimate');
    await inside('#usage .cost-tip');
    const box = await tip.boundingBox();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts/cost-breakdown-300.png') });
    // By keyboard too: the total takes focus and says what describes it.
    await page.mouse.move(0, 0);
    await expect.poll(() => tip.isVisible()).toBe(false);
    await page.locator('#usage').focus();
    await expect.poll(() => tip.isVisible()).toBe(true);
    expect(await page.locator('#usage').getAttribute('aria-describedby')).toBe('cost-breakdown');
    expect(errors).toEqual([]);
  });
});
