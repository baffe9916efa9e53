// Session management in the panel, in a real browser (Chromium, as panel.test.ts): an answer's
// Fork button posts its message; the history lists the sessions, the active one marked, their
// actions disabled while the server is down; all under the panel's Content-Security-Policy. The
// history's search, per-session actions and its fit at 300 px are in layout.test.ts.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';
import type { SessionInfo } from '../../src/protocol/generated';


const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
const info = (sessionId: string, title: string): SessionInfo => ({ sessionId, title, createdAt: 1, updatedAt: 1, busy: false, model: 'm', usage }) as SessionInfo;
const SESSIONS = [info('s', 'Parser work'), info('t', 'Docs'), info('u', 'Release notes')];

describe.skipIf(!existsSync(CHROMIUM))('session management in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it("forks at an answer with the answer's Fork button", async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: SESSIONS, activeSessionId: 's', view: emptyView('s') } });
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'msg_1', prompt: 'hi' } });
    await send({ type: 'event', event: { type: 'text-delta', sessionId: 's', messageId: 'msg_2', delta: 'Hello.' } });
    const fork = page.getByRole('button', { name: 'Fork: a new session from here' });
    await expect.poll(() => fork.count()).toBe(1);
    await fork.click();
    expect((await posted()).filter((m) => m.type === 'fork-session')).toEqual([{ type: 'fork-session', sessionId: 's', messageId: 'msg_2' }]);
  });

  it('lists the sessions in the history, the active one marked, and disables their actions while the server is down', async () => {
    await send({ type: 'show-history' });
    const items = page.locator('#history .history-item');
    await expect.poll(() => items.locator('.history-title').allTextContents()).toEqual(['Parser work', 'Docs', 'Release notes']);
    expect(await items.nth(0).locator('.history-open').getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('button', { name: 'Delete “Docs”' }).isEnabled()).toBe(true);
    await send({ type: 'state', state: { connection: 'stopped', sessions: SESSIONS, activeSessionId: 's', view: emptyView('s') } });
    // The message is dispatched asynchronously: wait for the render, do not read right after posting.
    await expect.poll(() => page.getByRole('button', { name: 'Delete “Docs”' }).isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('searchbox').isDisabled()).toBe(true);
  });

  it("shows a background session's state, branch and changed files in the history", async () => {
    const background = {
      ...info('b', 'Add pagination'),
      background: { state: 'failed', reason: 'interrupted', branch: 'agentls/add-pagination', worktree: '/r/wt', base: 'abc', changedFiles: [{ path: 'api.py', added: 3, removed: 1 }] },
    } as SessionInfo;
    await send({ type: 'state', state: { connection: 'running', sessions: [...SESSIONS, background], activeSessionId: 's', view: emptyView('s') } });
    const line = page.locator('#history .history-item[data-session-id="b"] .history-background');
    await expect.poll(() => line.textContent()).toBe('background · failed · agentls/add-pagination · 1 file changed');
    expect(await line.getAttribute('title')).toBe('/r/wt\ninterrupted');
    expect(await page.locator('#history .history-item[data-session-id="s"] .history-background').count()).toBe(0);
  });

  it('runs the prompt in the background with the Run in background button', async () => {
    if (await page.locator('#history').isVisible()) await page.getByRole('button', { name: 'Back to the conversation' }).click();
    await page.locator('#prompt').fill('add pagination');
    await page.getByRole('button', { name: 'Run in background' }).click();
    await expect.poll(async () => (await posted()).filter((m) => m.type === 'prompt-background')).toEqual([{ type: 'prompt-background', text: 'add pagination' }]);
    expect(await page.locator('#prompt').inputValue()).toBe('');
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
