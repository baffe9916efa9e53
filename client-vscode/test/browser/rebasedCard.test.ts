// A proposal the user typed under, in the panel's card in a real browser (Chromium): redrawn on
// the server's proposal-rebased event (its new diff), then marked as a conflict when the user
// changed lines it changes too (the lines named, Accept gone, Reject kept), and back to Accept
// once the overlap is undone.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))('a proposal the user typed under, in its card (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const sessionId = 's';
  const requestId = 'perm_typed';
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const card = () => page.locator('.tool[data-tool="write"]');
  const rebased = (extra: Record<string, unknown>): Promise<void> =>
    send({ type: 'event', event: { type: 'proposal-rebased', sessionId, requestId, path: 'app.py', ...extra } as never });

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows the redrawn diff, then the conflict with only Reject, then Accept again', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: sessionId, view: emptyView(sessionId) } });
    const input = { path: 'app.py' };
    await send({ type: 'event', event: { type: 'tool-call', sessionId, callId: 'c1', tool: 'write', input, title: 'Overwrite app.py' } });
    await send({
      type: 'event',
      event: {
        type: 'permission-request', sessionId, requestId, callId: 'c1', tool: 'write', title: 'Overwrite app.py', input,
        diff: '--- a/app.py\n+++ b/app.py\n@@ -10 +10 @@\n-    return 3\n+    return 30\n', edit: { changes: {} },
      },
    });
    await card().locator('.permission.pending').waitFor();
    await rebased({ diff: '--- a/app.py\n+++ b/app.py\n@@ -11 +11 @@\n-    return 3\n+    return 30\n', edit: { changes: {} } });
    await expect.poll(() => card().innerText()).toContain('@@ -11 +11 @@');
    expect(await card().locator('button[data-decision="once"]').count()).toBe(1);

    await rebased({ conflict: true, lines: 'line 11' });
    await expect.poll(() => card().locator('.permission-conflict').count()).toBe(1);
    expect(await card().locator('.permission-conflict').innerText()).toContain('You changed line 11 of app.py while this waited');
    expect(await card().locator('button[data-decision="once"]').count()).toBe(0);
    expect(await card().locator('button[data-decision="reject"]').count()).toBe(1);
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-proposal-conflict.png') });

    await rebased({ diff: '--- a/app.py\n+++ b/app.py\n@@ -11 +11 @@\n-    return 3\n+    return 30\n', edit: { changes: {} } });
    await expect.poll(() => card().locator('.permission-conflict').count()).toBe(0);
    expect(await card().locator('button[data-decision="once"]').count()).toBe(1);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
