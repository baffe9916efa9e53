// Review "after" in the panel, in a real browser (Chromium, as panel.test.ts): the panel asks for
// the active session's pending review when it loads, lists each file with its hunks' diffs, posts
// Keep / Undo for a file or one hunk and waits for the server's list, follows the `review` event
// (and ignores another session's), opens a file's diff, and hides the section when nothing is
// pending.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';
import type { ReviewFile } from '../../src/protocol/generated';


const CALC: ReviewFile = {
  path: '/w/calc.py',
  base: 'a\nb\nc\nd\n',
  agent: 'A\nb\nc\nD\nE\n',
  hunks: [
    { index: 0, oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, diff: '@@ -1 +1 @@\n-a\n+A\n' },
    { index: 1, oldStart: 3, oldLines: 1, newStart: 3, newLines: 2, diff: '@@ -4 +4,2 @@\n-d\n+D\n+E\n' },
  ],
};
const NOTES: ReviewFile = {
  path: '/w/notes.md',
  base: null,
  agent: '# Notes\n',
  hunks: [{ index: 0, oldStart: 0, oldLines: 0, newStart: 0, newLines: 1, diff: '@@ -0,0 +1 @@\n+# Notes\n' }],
};

describe.skipIf(!existsSync(CHROMIUM))('review after in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (m: HostMessage): Promise<void> => page.evaluate((x) => window.postMessage(x, '*'), m);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const ofType = async (type: string): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === type);
  const section = () => page.locator('#review');
  const files = () => page.locator('#review .review-file').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.path));

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 800 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('asks for the pending review once running and lists the files with their hunks', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'starting', sessions: [], activeSessionId: 's' } });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await expect.poll(() => ofType('list-review')).toEqual([{ type: 'list-review', sessionId: 's' }]);
    expect(await section().isVisible()).toBe(false);
    await send({ type: 'review-files', sessionId: 's', files: [CALC, NOTES] });
    await expect.poll(() => section().isVisible()).toBe(true);
    expect(await section().locator('summary').textContent()).toBe('Pending review: 2 files, 3 changes');
    expect(await files()).toEqual(['/w/calc.py', '/w/notes.md']);
    const calc = section().locator('[data-path="/w/calc.py"]');
    expect(await calc.locator('.review-diff').allTextContents()).toEqual(['@@ -1 +1 @@\n-a\n+A\n', '@@ -4 +4,2 @@\n-d\n+D\n+E\n']);
    expect(await calc.locator('.line.add').allTextContents()).toEqual(['+A\n', '+D\n', '+E\n']);
    expect(await calc.locator('.review-counts').textContent()).toBe('+3 −2');
    expect(await section().locator('[data-path="/w/notes.md"] .review-counts').textContent()).toBe('new file');
    // A file of one hunk has no per-hunk buttons (the file's are the same answer).
    expect(await page.getByRole('button', { name: /^Keep change \d of \d in \/w\/notes\.md$/ }).count()).toBe(0);
    // The same session shown again (another state message): not asked again.
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await expect.poll(() => section().isVisible()).toBe(true);
    expect(await ofType('list-review')).toHaveLength(1);
  });

  it('keeps one hunk and waits for the answer', async () => {
    await page.getByRole('button', { name: 'Keep change 1 of 2 in /w/calc.py' }).click();
    await expect.poll(() => ofType('review-action')).toEqual([
      { type: 'review-action', sessionId: 's', path: '/w/calc.py', action: 'keep', hunks: [0] },
    ]);
    // Its buttons wait for the server's list (no second answer meanwhile); the other file's do not.
    await expect.poll(() => page.getByRole('button', { name: 'Undo all changes to /w/calc.py' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Undo all changes to /w/notes.md' }).isDisabled()).toBe(false);
    await send({ type: 'review-files', sessionId: 's', files: [{ ...CALC, hunks: [CALC.hunks[1]] }, NOTES] });
    await expect.poll(() => page.getByRole('button', { name: 'Undo all changes to /w/calc.py' }).isDisabled()).toBe(false);
    expect(await section().locator('[data-path="/w/calc.py"] .review-hunk').count()).toBe(1);
  });

  it('follows the review event, undoes a whole file and opens a diff', async () => {
    await send({ type: 'event', event: { type: 'review', sessionId: 'other', files: [] } });
    await send({ type: 'event', event: { type: 'review', sessionId: 's', files: [NOTES] } });
    await expect.poll(files).toEqual(['/w/notes.md']);
    await page.getByRole('button', { name: 'Undo all changes to /w/notes.md' }).click();
    await page.getByRole('button', { name: 'Open the diff of /w/notes.md' }).click();
    const actions = (await posted()).filter((m) => m.type === 'review-action' || m.type === 'open-review-diff');
    expect(actions.slice(1)).toEqual([
      { type: 'review-action', sessionId: 's', path: '/w/notes.md', action: 'undo' },
      { type: 'open-review-diff', sessionId: 's', path: '/w/notes.md' },
    ]);
    await send({ type: 'review-files', sessionId: 's', files: [] });
    await expect.poll(() => section().isVisible()).toBe(false);
  });

  it('asks for another session when it is shown, and drops the first one\'s list', async () => {
    await send({ type: 'review-files', sessionId: 's', files: [CALC] });
    await expect.poll(() => section().isVisible()).toBe(true);
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 't', view: emptyView('t') } });
    await expect.poll(() => ofType('list-review')).toEqual([
      { type: 'list-review', sessionId: 's' },
      { type: 'list-review', sessionId: 't' },
    ]);
    expect(await section().isVisible()).toBe(false);
    await send({ type: 'review-files', sessionId: 's', files: [CALC] });
    await send({ type: 'review-files', sessionId: 't', files: [NOTES] });
    await expect.poll(files).toEqual(['/w/notes.md']);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
