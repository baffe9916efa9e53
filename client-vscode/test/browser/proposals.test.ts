// "Waiting for review" in the panel, in a real browser (Chromium, as panel.test.ts): the proposed
// edits of every session listed from the state and from the host's `proposals` messages, the other
// sessions named, a click asking for the diff, the list gone once nothing waits; under the panel's
// Content-Security-Policy.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage, ProposalEntry } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';


const PROPOSALS: ProposalEntry[] = [
  { sessionId: 's', sessionTitle: 'Parser work', requestId: 'perm_1', title: 'Edit parser.py', path: 'parser.py' },
  { sessionId: 't', sessionTitle: 'Docs', requestId: 'perm_2', title: 'Write docs/intro.md', path: 'docs/intro.md' },
];

describe.skipIf(!existsSync(CHROMIUM))('proposals waiting for review in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const list = () => page.getByRole('region', { name: 'Proposed edits waiting for review' });
  const rows = () => list().getByRole('button');

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('lists every session\'s proposals; a click opens the diff', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await expect.poll(() => page.locator('#proposals').isHidden()).toBe(true);
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s'), proposals: PROPOSALS } });
    await expect.poll(() => rows().allInnerTexts()).toEqual(['parser.py', 'docs/intro.md · Docs']);
    await expect.poll(() => list().innerText()).toContain('Waiting for review (2)');
    await rows().nth(1).click();
    expect((await posted()).filter((m) => m.type === 'open-diff')).toEqual([{ type: 'open-diff', requestId: 'perm_2' }]);
  });

  it('follows the host: one answered, then the panel on another session, then none', async () => {
    await send({ type: 'proposals', proposals: [PROPOSALS[1]] });
    await expect.poll(() => rows().allInnerTexts()).toEqual(['docs/intro.md · Docs']);
    await send({ type: 'sessions', sessions: [], activeSessionId: 't' });
    await expect.poll(() => rows().allInnerTexts()).toEqual(['docs/intro.md']);
    await send({ type: 'proposals', proposals: [] });
    await expect.poll(() => page.locator('#proposals').isHidden()).toBe(true);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
