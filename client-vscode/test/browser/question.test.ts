// ask_user's card in a real browser (Chromium, VS Code's sidebar width): the question with its
// choices as buttons and a field for the user's own words; a choice, the words typed (Enter) and
// Skip each answer with agent/approve (the answer in `feedback`); the closed card says how it
// ended, not "Allowed once".
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { AgentEvent } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))('ask_user in the panel (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const card = (callId: string) => page.locator(`details.tool[data-call-id="${callId}"]`);
  const approvals = async (): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === 'approve');

  async function ask(n: number, input: Record<string, unknown>): Promise<void> {
    await event({ type: 'tool-call', sessionId: 's', callId: `call_q${n}`, tool: 'ask_user', title: `Question: ${String(input.question)}`, input });
    await event({ type: 'permission-request', sessionId: 's', requestId: `perm_q${n}`, callId: `call_q${n}`, tool: 'ask_user', title: String(input.question), input });
  }

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 720 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows the question, a button per choice and a field for an own answer', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'set up the database' });
    await ask(1, { question: 'Which database should the cache use?', choices: ['SQLite', 'Postgres (the one in docker-compose.yml)'] });
    const open = card('call_q1');
    await expect.poll(() => open.locator('.question-text').textContent()).toBe('Which database should the cache use?');
    expect(await open.locator('.question-choice').allTextContents()).toEqual(['SQLite', 'Postgres (the one in docker-compose.yml)']);
    expect(await open.locator('input.question-answer').getAttribute('placeholder')).toBe('Or answer in your own words');
    expect(await open.locator('button[data-action="answer"]').isDisabled()).toBe(true); // nothing typed yet
    expect(await open.locator(':scope > summary .tool-status').textContent()).toBe('needs your answer');
    expect(await page.locator('.attention').textContent()).toBe('Waiting for your answer');
    // A choice looks like a button: it has a border the eye can see.
    const border = await open.locator('.question-choice').first().evaluate((b) => getComputedStyle(b).borderTopWidth);
    expect(border).toBe('1px');
    // Every choice fits the sidebar: no button wider than the card.
    const width = (await open.boundingBox())?.width ?? 0;
    for (const box of await open.locator('.question-choice').evaluateAll((bs) => bs.map((b) => b.getBoundingClientRect().width))) {
      expect(box).toBeLessThanOrEqual(width);
    }
    mkdirSync(join(extensionRoot, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'question.png') });
  });

  it('answers with a choice', async () => {
    await card('call_q1').locator('.question-choice', { hasText: 'SQLite' }).click();
    await expect.poll(approvals).toEqual([{ type: 'approve', sessionId: 's', requestId: 'perm_q1', decision: 'once', feedback: 'SQLite' }]);
    await event({ type: 'permission-resolved', sessionId: 's', requestId: 'perm_q1', decision: 'once' });
    await expect.poll(() => card('call_q1').locator('.permission.resolved').textContent()).toBe('Answered');
  });

  it('answers in the user\'s own words with Enter, and Skip declines', async () => {
    await ask(2, { question: 'What should the table be called?' });
    const field = card('call_q2').locator('input.question-answer');
    await expect.poll(() => field.getAttribute('placeholder')).toBe('Your answer');
    expect(await card('call_q2').locator('.question-choice').count()).toBe(0);
    await field.fill('cache_entries');
    await field.press('Enter');
    await expect.poll(async () => (await approvals()).at(-1)).toEqual({ type: 'approve', sessionId: 's', requestId: 'perm_q2', decision: 'once', feedback: 'cache_entries' });
    await event({ type: 'permission-resolved', sessionId: 's', requestId: 'perm_q2', decision: 'once' });

    await ask(3, { question: 'Drop the old table too?', choices: ['yes', 'no'] });
    await card('call_q3').locator('button[data-action="skip"]').click();
    await expect.poll(async () => (await approvals()).at(-1)).toEqual({ type: 'approve', sessionId: 's', requestId: 'perm_q3', decision: 'reject' });
    await event({ type: 'permission-resolved', sessionId: 's', requestId: 'perm_q3', decision: 'reject' });
    await expect.poll(() => card('call_q3').locator('.permission.resolved').textContent()).toBe('Skipped');
    expect(await card('call_q3').locator(':scope > summary .tool-status').textContent()).toBe('skipped');
    expect(errors).toEqual([]);
  });
});
