// @-mentions in the panel, in a real browser (Chromium, as panel.test.ts): "@" offers the kinds,
// "@file:" asks the extension and lists its matches, a taken one becomes a removable chip, and the
// prompt posts the chips' context items; an item the extension could not gather is a notice.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';


describe.skipIf(!existsSync(CHROMIUM))('@-mentions in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const options = (): Promise<string[]> => page.locator('#mentions:not([hidden]) .command-name').allTextContents();
  const chips = (): Promise<string[]> => page.locator('#mention-chips .mention-chip > span').allTextContents();
  const calc = { uri: 'file:///w/src/calc.py' };
  const problems = { type: 'text' as const, label: '@problems', text: 'calc.py:2:5 error: add subtracts' };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 420, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('completes @ kinds, searches files through the extension and makes chips', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    const box = page.locator('#prompt');
    await box.click();
    await box.pressSequentially('fix @');
    await expect.poll(options).toEqual(['@file', '@symbol', '@selection', '@problems', '@terminal', '@git']);
    await box.pressSequentially('pro');
    await expect.poll(options).toEqual(['@problems']);
    await box.press('Enter'); // takes it: the extension is asked, the text loses the mention
    await expect.poll(posted).toContainEqual({ type: 'mention', kind: 'problems' });
    expect(await box.inputValue()).toBe('fix ');
    await send({ type: 'mention-item', item: { label: '@problems', detail: '1 in calc.py', ref: problems } });
    await expect.poll(chips).toEqual(['@problems']);

    await box.pressSequentially('@fi');
    await box.press('Tab');
    expect(await box.inputValue()).toBe('fix @file:');
    await box.pressSequentially('calc');
    await expect.poll(posted).toContainEqual({ type: 'mention-search', kind: 'file', query: 'calc' });
    await send({ type: 'mention-results', kind: 'file', query: 'cal', items: [] }); // stale: ignored
    await send({
      type: 'mention-results',
      kind: 'file',
      query: 'calc',
      items: [
        { label: 'calc.py', detail: 'src/calc.py', ref: calc },
        { label: 'test_calc.py', detail: 'tests/test_calc.py', ref: { uri: 'file:///w/tests/test_calc.py' } },
      ],
    });
    await expect.poll(options).toEqual(['calc.py', 'test_calc.py']);
    await box.press('Enter');
    await expect.poll(chips).toEqual(['@problems', 'calc.py']);
    expect(await box.inputValue()).toBe('fix ');

    await box.pressSequentially('@git');
    await box.press('Enter');
    await send({ type: 'mention-item', error: 'The working tree has no changes.' });
    await expect.poll(() => page.locator('.notice').allTextContents()).toEqual([expect.stringContaining('no changes')]);
    await expect.poll(chips).toEqual(['@problems', 'calc.py']);
  });

  it('removes a chip before sending and sends the others as context items', async () => {
    await send({ type: 'mention-item', item: { label: 'test_calc.py', ref: { uri: 'file:///w/tests/test_calc.py' } } });
    await expect.poll(chips).toHaveLength(3);
    await page.locator('#mention-chips .mention-remove[aria-label="Remove test_calc.py"]').click();
    await expect.poll(chips).toEqual(['@problems', 'calc.py']);
    const box = page.locator('#prompt');
    await box.fill('fix these');
    await box.press('Enter');
    const prompt = (await posted()).find((m) => m.type === 'prompt');
    expect(prompt).toEqual({ type: 'prompt', text: 'fix these', context: [problems, calc] });
    expect(await page.locator('#mention-chips').isHidden()).toBe(true);
    await send({ type: 'prompt-sent', sessionId: 's', text: 'fix these', context: ['@problems', 'calc.py'] });
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'fix these' } });
    await expect.poll(() => page.locator('.message.user .context').textContent()).toBe('with @problems, calc.py');
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
