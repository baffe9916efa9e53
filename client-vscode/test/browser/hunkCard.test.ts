// A proposal of two hunks in the panel's card, in a real browser (Chromium) at 300 px: each hunk
// listed with its lines and Accept / Reject of its own (the same decision as the editor's lenses),
// a decided hunk says so and can be undone, and once answered the card says what was kept of each
// ("1 of 2 hunks kept") instead of the whole diff with "Allowed once".
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView, viewFromMessages } from '../../src/model/transcript';
import type { CardHunk } from '../../src/reviewHunks';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))("a proposal's hunks in its card (Chromium, 300 px)", () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const sessionId = 's';
  const requestId = 'perm_two';
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const clearPosted = (): Promise<void> => page.evaluate(() => void ((window as unknown as { __posted: PanelMessage[] }).__posted = []));
  const card = () => page.locator(`.tool[data-tool="edit"]`);
  const hunks = (states: CardHunk['state'][]): CardHunk[] => [
    { file: 0, hunk: 0, path: 'calc.py', where: 'line 3', removed: ['    """The arithmetic mean of a non-empty list."""'], added: ['    """Mean of a non-empty list."""'], state: states[0] },
    { file: 0, hunk: 1, path: 'calc.py', where: 'line 8', removed: ['    """The middle value."""'], added: ['    """Median."""'], state: states[1] },
  ];

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('lists each hunk with Accept / Reject of its own, which decide that hunk only', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: sessionId, view: emptyView(sessionId) } });
    const input = { path: 'calc.py' };
    await send({ type: 'event', event: { type: 'tool-call', sessionId, callId: 'c1', tool: 'edit', input, title: 'Edit calc.py' } });
    await send({
      type: 'event',
      event: {
        type: 'permission-request', sessionId, requestId, callId: 'c1', tool: 'edit', title: 'Edit calc.py', input,
        diff: '--- a/calc.py\n+++ b/calc.py\n@@ -3 +3 @@\n-old\n+new\n', edit: { changes: {} },
      },
    });
    await card().locator('.permission.pending').waitFor();
    await send({ type: 'proposal-hunks', requestId, hunks: hunks(['pending', 'pending']) });
    await expect.poll(() => card().locator('.hunk-row').count()).toBe(2);
    expect(await card().locator('.hunk-where').allTextContents()).toEqual(['line 3', 'line 8']);
    expect(await card().locator('.hunk-row').first().locator('.line.add').textContent()).toBe('+    """Mean of a non-empty list."""\n');
    // The whole-change buttons stay (Accept all / Reject all in effect).
    expect(await card().locator('button[data-decision="once"]').count()).toBe(1);
    for (const right of await card().locator('.hunk-row button').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right))) {
      expect(right).toBeLessThanOrEqual(300);
    }
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-hunk-card.png') });
    await clearPosted();
    await card().locator('.hunk-row').first().locator('.hunk-accept').click();
    expect(await posted()).toEqual([{ type: 'decide-hunk', requestId, file: 0, hunk: 0, state: 'accepted' }]);
  });

  it('shows a decided hunk as such, with Undo', async () => {
    await send({ type: 'proposal-hunks', requestId, hunks: hunks(['accepted', 'pending']) });
    await expect.poll(() => card().locator('.hunk-row').first().locator('.hunk-state').textContent()).toBe('accepted');
    await clearPosted();
    await card().locator('.hunk-row').first().locator('.hunk-undo').click();
    expect(await posted()).toEqual([{ type: 'decide-hunk', requestId, file: 0, hunk: 0, state: 'pending' }]);
    expect(await card().locator('.hunk-row').nth(1).locator('.hunk-reject').count()).toBe(1);
  });

  it('says "1 of 2 hunks kept" once answered, and what became of each hunk', async () => {
    await send({ type: 'proposal-hunks', requestId, hunks: hunks(['accepted', 'rejected']) });
    await send({ type: 'proposal-kept', requestId, kept: 1, total: 2 });
    await send({ type: 'event', event: { type: 'permission-resolved', sessionId, requestId, decision: 'once' } });
    await expect.poll(() => card().locator('.permission.resolved').textContent()).toBe('1 of 2 hunks kept');
    expect(await card().locator('.permission.resolved').textContent()).not.toContain('Allowed once');
    await card().locator('summary').first().click(); // open the collapsed card
    expect(await card().locator('.hunk-state').allTextContents()).toEqual(['kept', 'not kept']);
    expect(await card().locator('.hunk-row button').count()).toBe(0);
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-hunk-card-kept.png') });
    expect(errors).toEqual([]);
  });

  it('still says "1 of 2 hunks kept" after a window reload, from the stored call', async () => {
    // A reload: the panel starts over with the session's history (agent/getMessages), where the
    // call keeps what was kept of each hunk; the live answer and its hunks are gone.
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    const view = viewFromMessages(sessionId, [
      { id: 'm1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'shorten the docstrings' }] },
      {
        id: 'm2', role: 'assistant', createdAt: 2,
        parts: [{ type: 'tool', callId: 'c1', tool: 'edit', input: { path: 'calc.py' }, status: 'completed', output: 'Edited calc.py as the user accepted it.', title: 'Edit calc.py', keptHunks: [true, false] }],
      },
    ]);
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: sessionId, view } });
    await card().locator('summary').first().click();
    await expect.poll(() => card().locator('.hunks-kept').textContent()).toBe('1 of 2 hunks kept');
    expect(errors).toEqual([]);
  });
});
