// A background session's question in the panel (Chromium, VS Code's sidebar width): while the
// panel shows another session, the question is a card above the prompt box labelled with the
// background session and its branch, answered with the same controls (Allow once / Reject; ask_user's
// choices); answered, it goes; "Open session" opens the session.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackgroundQuestion, HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

const EDIT: BackgroundQuestion = {
  sessionId: 'bg1',
  sessionTitle: 'rename the cache',
  branch: 'agentls/rename-the-cache',
  requestId: 'perm_bg1',
  tool: 'edit',
  title: 'edit cache.py',
  input: { path: 'cache.py' },
  diff: '-OLD = 1\n+NEW = 1\n',
};
const ASK: BackgroundQuestion = {
  sessionId: 'bg2',
  sessionTitle: 'pick a database',
  branch: 'agentls/pick-a-database',
  requestId: 'perm_bg2',
  tool: 'ask_user',
  title: 'Which database?',
  input: { question: 'Which database?', choices: ['SQLite', 'Postgres'] },
};

describe.skipIf(!existsSync(CHROMIUM))('questions from background sessions (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const cards = () => page.locator('.background-questions .background-question');

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 720 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows the question labelled with its session and branch, above the prompt box', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 'mine', view: emptyView('mine'), backgroundQuestions: [EDIT] } });
    await expect.poll(() => cards().count()).toBe(1);
    expect(await cards().locator('.background-question-label').textContent()).toBe('Background: rename the cache on agentls/rename-the-cache asks:');
    expect(await cards().locator('pre.diff').textContent()).toBe('-OLD = 1\n+NEW = 1\n');
    const card = await cards().boundingBox();
    const prompt = await page.locator('#prompt').boundingBox();
    expect(card && prompt && card.y + card.height <= prompt.y).toBe(true);
  });

  it('answers it for that session and the card goes', async () => {
    await cards().locator('button[data-action="allow-once"]').click();
    await expect.poll(async () => (await posted()).filter((m) => m.type === 'approve')).toEqual([
      { type: 'approve', sessionId: 'bg1', requestId: 'perm_bg1', decision: 'once' },
    ]);
    expect(await cards().count()).toBe(0);
    await send({ type: 'background-questions', questions: [] });
    expect(await page.locator('.background-questions').isHidden()).toBe(true);
  });

  it('asks an ask_user question with its choices, and opens the session', async () => {
    await send({ type: 'background-questions', questions: [{ ...ASK, sessionTitle: 'Pick a database.' }] });
    await expect.poll(() => cards().count()).toBe(1);
    // Said once who asks: the label, the title's end stop dropped, and no "agentls asks:" under it
    expect(await cards().locator('.background-question-label').textContent()).toBe('Background: Pick a database on agentls/pick-a-database asks:');
    expect(await cards().getByText('agentls asks:').count()).toBe(0);
    expect(await cards().locator('.question-text').textContent()).toBe('Which database?');
    await cards().locator('.background-question-open').click();
    await expect.poll(posted).toContainEqual({ type: 'select-session', sessionId: 'bg2' });
    await cards().locator('.question-choice', { hasText: 'Postgres' }).click();
    await expect.poll(async () => (await posted()).filter((m) => m.type === 'approve').at(-1)).toEqual({
      type: 'approve', sessionId: 'bg2', requestId: 'perm_bg2', decision: 'once', feedback: 'Postgres',
    });
    expect(await cards().count()).toBe(0);
  });

  it('keeps the prompt box in view under several questions with long diffs, the cards scrolled', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `-old line ${i}\n+new line ${i}\n`).join('');
    const many = [1, 2, 3].map((n) => ({ ...EDIT, sessionId: `bg${n}`, requestId: `perm_many${n}`, diff: long }));
    await send({ type: 'background-questions', questions: [...many, { ...ASK, requestId: 'perm_many4' }] });
    await expect.poll(() => cards().count()).toBe(4);
    const height = await page.evaluate(() => window.innerHeight);
    for (const id of ['#prompt', '#send', '#send-background']) {
      const box = await page.locator(id).boundingBox();
      expect(box && box.y >= 0 && box.y + box.height <= height, `${id} inside the view`).toBe(true);
    }
    // The last card is reached by scrolling the list of questions.
    const last = cards().last().locator('.question-choice', { hasText: 'Postgres' });
    await last.scrollIntoViewIfNeeded();
    await last.click();
    await expect.poll(async () => (await posted()).filter((m) => m.type === 'approve').at(-1)).toMatchObject({ requestId: 'perm_many4', feedback: 'Postgres' });
    expect(errors).toEqual([]);
  });
});
