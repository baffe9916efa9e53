// Session management in the panel, in a real browser (Chromium, as panel.test.ts): the search box
// asks the extension (debounced) and the list shows only the matches, Escape brings all back;
// Rename, Delete and Export post for the active session; an answer's Fork button posts its
// message; all under the panel's Content-Security-Policy.
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
  const options = (): Promise<string[]> => page.locator('#session option').allTextContents();

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('searches the list through the extension and clears with Escape', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: SESSIONS, activeSessionId: 's', view: emptyView('s') } });
    await expect.poll(options).toHaveLength(3);
    const search = page.getByRole('searchbox', { name: 'Search sessions by title and content' });
    await search.fill('notes');
    await expect.poll(posted).toContainEqual({ type: 'search-sessions', query: 'notes' });
    // A stale query's answer is dropped; the current one's shows (the active session stays listed).
    await send({ type: 'session-search', query: 'note', sessions: [SESSIONS[1]] });
    await send({ type: 'session-search', query: 'notes', sessions: [SESSIONS[2]] });
    await expect.poll(options).toEqual([expect.stringContaining('Parser work'), expect.stringContaining('Release notes')]);
    await search.press('Escape');
    await expect.poll(options).toHaveLength(3);
  });

  it('renames, deletes and exports the active session, and forks at an answer', async () => {
    await page.getByRole('button', { name: 'Rename session' }).click();
    await page.getByRole('button', { name: 'Delete session' }).click();
    await page.getByRole('button', { name: 'Export session as Markdown' }).click();
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'msg_1', prompt: 'hi' } });
    await send({ type: 'event', event: { type: 'text-delta', sessionId: 's', messageId: 'msg_2', delta: 'Hello.' } });
    const fork = page.getByRole('button', { name: 'Fork: a new session from here' });
    await expect.poll(() => fork.count()).toBe(1);
    await fork.click();
    const actions = (await posted()).filter((m) => m.type.endsWith('-session') && m.type !== 'new-session' && m.type !== 'select-session');
    expect(actions).toEqual([
      { type: 'rename-session', sessionId: 's' },
      { type: 'delete-session', sessionId: 's' },
      { type: 'export-session', sessionId: 's' },
      { type: 'fork-session', sessionId: 's', messageId: 'msg_2' },
    ]);
  });

  it('disables the actions while the server is not running', async () => {
    await send({ type: 'state', state: { connection: 'stopped', sessions: SESSIONS, activeSessionId: 's', view: emptyView('s') } });
    // The message is dispatched asynchronously: wait for the render, do not read right after posting.
    await expect.poll(() => page.getByRole('button', { name: 'Delete session' }).isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('searchbox').isDisabled()).toBe(true);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
