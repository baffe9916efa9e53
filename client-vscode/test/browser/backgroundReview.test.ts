// A finished background session's review in the panel, in a real browser (Chromium, as
// panel.test.ts): History's "Review changes" asks for its diff, the card lists each file with its
// hunks (all kept at first), Undo / Keep per hunk and per file change only what the card asks
// for, "Bring in kept changes" posts exactly the kept hunks and shows what was applied and what
// conflicted (a clash of lines with "Resolve in merge editor", or "Mark conflict in file" where
// there is no merge editor), and "Remove worktree and branch" posts only after its confirmation.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';
import type { BackgroundDiffResult, SessionInfo } from '../../src/protocol/generated';

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
const info = (sessionId: string, title: string, state?: 'done' | 'running'): SessionInfo =>
  ({
    sessionId,
    title,
    createdAt: 1,
    updatedAt: 1,
    busy: false,
    model: 'm',
    usage,
    ...(state ? { background: { state, branch: `agentls/${sessionId}`, worktree: '/r/wt', base: 'abc', changedFiles: [] } } : {}),
  }) as SessionInfo;
const DIFF: BackgroundDiffResult = {
  state: 'done',
  branch: 'agentls/edit-the-app',
  base: 'abc',
  files: [
    {
      path: 'app.txt',
      base: 'a\nb\nc\n',
      branch: 'A\nb\nC\n',
      hunks: [
        { index: 0, oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, diff: '@@ -1 +1 @@\n-a\n+A\n' },
        { index: 1, oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, diff: '@@ -3 +3 @@\n-c\n+C\n' },
      ],
    },
    { path: 'new.txt', base: null, branch: 'n\n', hunks: [{ index: 0, oldStart: 0, oldLines: 0, newStart: 0, newLines: 1, diff: '@@ -0,0 +1 @@\n+n\n' }] },
  ],
};

describe.skipIf(!existsSync(CHROMIUM))("a background session's review in the panel (Chromium)", () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (m: HostMessage): Promise<void> => page.evaluate((x) => window.postMessage(x, '*'), m);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const ofType = async (type: string): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === type);
  const card = () => page.locator('.background-review');

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 900 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('offers Review changes only for a finished background session and asks for its diff', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    const sessions = [info('s', 'Mine'), info('b', 'Edit the app', 'done'), info('r', 'Still going', 'running')];
    await send({ type: 'state', state: { connection: 'running', sessions, activeSessionId: 's', view: emptyView('s') } });
    await send({ type: 'show-history' });
    const buttons = page.locator('#history .history-review-background');
    await expect.poll(() => buttons.count()).toBe(1);
    expect(await page.locator('#history .history-item[data-session-id="b"] .history-review-background').count()).toBe(1);
    await buttons.click();
    expect(await ofType('background-diff')).toEqual([{ type: 'background-diff', sessionId: 'b' }]);
    await expect.poll(() => card().isVisible()).toBe(true);
    expect(await ofType('background-apply')).toEqual([]);
  });

  it('lists the files and hunks, all kept, and brings in exactly the kept ones', async () => {
    await send({ type: 'background-diff', sessionId: 'b', diff: DIFF });
    await expect.poll(() => card().locator('.background-review-file').count()).toBe(2);
    expect(await card().locator('.hunk-row.hunk-accepted').count()).toBe(3);
    await page.getByRole('button', { name: 'Leave out change 1 of 2 in app.txt' }).click();
    expect(await card().locator('.hunk-row.hunk-rejected').count()).toBe(1);
    // Nothing is applied by the toggles.
    expect(await ofType('background-apply')).toEqual([]);
    await page.getByRole('button', { name: 'Apply the kept changes to your files as one edit' }).click();
    expect(await ofType('background-apply')).toEqual([
      { type: 'background-apply', sessionId: 'b', keep: [{ path: 'app.txt', hunks: [1] }, { path: 'new.txt', hunks: null }] },
    ]);
    await send({
      type: 'background-applied',
      sessionId: 'b',
      result: { applied: [{ path: 'new.txt', hunks: [0] }], conflicts: [{ path: 'app.txt', hunks: [1], reason: 'your text there differs from its base' }] },
    });
    await expect.poll(() => card().locator('.background-review-applied').textContent()).toBe('Applied 1 change to new.txt.');
    expect(await card().locator('.background-review-conflict').textContent()).toBe('Not applied: app.txt change 2: your text there differs from its base');
    expect(await card().locator('.background-review-resolve-button').count()).toBe(0); // no texts to merge
  });

  it('offers the merge editor for a conflict with its texts, at 300 px, and says what was done', async () => {
    await page.setViewportSize({ width: 300, height: 900 });
    const merge = { uri: 'file:///r/app.txt', base: 'a\nb\nc\n', yours: 'a\nb\nmine\n', theirs: 'a\nb\nC\n', marked: 'a\nb\n<<<<<<< yours\nmine\n=======\nC\n>>>>>>> agentls/edit-the-app\n' };
    const conflicts = [
      { path: 'app.txt', hunks: [1], reason: 'your text there differs from its base', merge },
      { path: 'logo.bin', hunks: [0], reason: 'a binary file: bring it in with `agentls background apply`' },
    ];
    await send({ type: 'background-applied', sessionId: 'b', result: { applied: [], conflicts }, mergeEditor: true });
    const rows = card().locator('.background-review-conflict');
    await expect.poll(() => rows.count()).toBe(2);
    // Only the file whose lines clash has the button; its note says the editor saves the file first.
    expect(await rows.nth(1).locator('button').count()).toBe(0);
    const open = page.getByRole('button', { name: 'Resolve in merge editor: app.txt' });
    expect(await rows.nth(0).locator('.background-review-resolve-note').textContent()).toContain('VS Code saves the file as it is now');
    // Nothing is asked for until the button.
    expect(await ofType('background-resolve')).toEqual([]);
    // It fits the narrow panel: nothing wider than the card.
    const [cardWidth, widest] = await card().evaluate((c) => [c.clientWidth, Math.max(...[...c.querySelectorAll('.background-review-conflict *')].map((e) => e.getBoundingClientRect().right - c.getBoundingClientRect().left))]);
    expect(widest).toBeLessThanOrEqual(cardWidth);
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'background-conflict-300.png') });
    await open.click();
    expect(await ofType('background-resolve')).toEqual([{ type: 'background-resolve', sessionId: 'b', path: 'app.txt', how: 'merge-editor' }]);
    expect(await open.isDisabled()).toBe(true);
    await send({ type: 'background-resolved', sessionId: 'b', path: 'app.txt', how: 'merge-editor', note: 'app.txt is open in the merge editor.' });
    await expect.poll(() => rows.nth(0).locator('.background-review-resolved').textContent()).toBe('app.txt is open in the merge editor.');
    expect(await open.count()).toBe(0);
    // Where there is no merge editor, the button marks the conflict in the file instead, and
    // a file changed since says so and offers nothing more to do with these texts.
    await send({ type: 'background-applied', sessionId: 'b', result: { applied: [], conflicts }, mergeEditor: false });
    await page.getByRole('button', { name: 'Mark conflict in file: app.txt' }).click();
    expect((await ofType('background-resolve')).at(-1)).toEqual({ type: 'background-resolve', sessionId: 'b', path: 'app.txt', how: 'markers' });
    await send({ type: 'background-resolved', sessionId: 'b', path: 'app.txt', how: 'changed', note: 'app.txt changed since the changes were brought in, so nothing was done: bring them in again.' });
    await expect.poll(() => rows.nth(0).locator('.error').nth(1).textContent()).toContain('changed since');
    expect(await page.getByRole('button', { name: 'Mark conflict in file: app.txt' }).count()).toBe(0);
    await page.setViewportSize({ width: 520, height: 900 });
  });

  it('a file left out as a whole is not asked for', async () => {
    await page.getByRole('button', { name: 'Leave out every change to new.txt' }).click();
    await page.getByRole('button', { name: 'Keep change 1 of 2 in app.txt' }).click();
    await page.getByRole('button', { name: 'Apply the kept changes to your files as one edit' }).click();
    expect((await ofType('background-apply')).at(-1)).toEqual({ type: 'background-apply', sessionId: 'b', keep: [{ path: 'app.txt', hunks: null }] });
    await send({ type: 'background-applied', sessionId: 'b', result: { applied: [{ path: 'app.txt', hunks: [0, 1] }], conflicts: [] } });
  });

  it('removes the worktree and branch only once confirmed', async () => {
    await page.getByRole('button', { name: 'Remove its worktree and branch' }).click();
    expect(await ofType('background-remove')).toEqual([]);
    await page.getByRole('button', { name: 'Delete its worktree and branch' }).click();
    expect(await ofType('background-remove')).toEqual([{ type: 'background-remove', sessionId: 'b', force: true }]);
    await send({ type: 'background-removed', sessionId: 'b' });
    await expect.poll(() => card().locator('.background-review-removed').textContent()).toBe('Its worktree and branch were removed.');
    expect(errors).toEqual([]);
  });
});
