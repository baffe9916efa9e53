// A selection sent from the editor to the panel (Ask agent about this, Ctrl+Alt+A), in a real
// browser (Chromium) at 300 px: it becomes a chip in the prompt box with nothing sent, the box has
// the focus, the bar below names the lines (a click asks the extension to reveal them), the session
// toggle decides whether the prompt starts a new session, the suggestions fill the box and send
// nothing, and Enter sends the text with the selection as its context item.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, MentionItem, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))('a selection as a chip in the prompt box (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const clearPosted = (): Promise<void> => page.evaluate(() => void ((window as unknown as { __posted: PanelMessage[] }).__posted = []));
  const prompts = async (): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === 'prompt');
  const chips = (): Promise<string[]> => page.locator('#mention-chips:not([hidden]) .mention-chip').allTextContents();
  const range = { start: { line: 2, character: 0 }, end: { line: 6, character: 10 } };
  const selection: MentionItem = { label: 'calc.py:3-7', detail: 'src/calc.py:3-7', name: 'src/calc.py:3-7', ref: { uri: 'file:///w/src/calc.py', range } };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  const fresh = async (): Promise<void> => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await clearPosted();
  };

  it('puts the selection into the box as a chip, focuses the box and sends nothing', async () => {
    await fresh();
    await send({ type: 'add-selection', item: selection, session: 'current' });
    await expect.poll(chips).toEqual(['@calc.py:3-7']);
    expect(await page.locator('#prompt').inputValue()).toBe('@calc.py:3-7 ');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('prompt');
    await expect.poll(() => page.locator('#selection-bar').isVisible()).toBe(true);
    expect(await page.locator('#selection-bar .selection-file').textContent()).toBe('src/calc.py:3-7');
    expect(await page.locator('#selection-bar .selection-session').textContent()).toBe('Current session');
    expect(await prompts()).toEqual([]);
    // At 300 px the bar fits: nothing wider than the panel.
    for (const box of await page.locator('#selection-bar button').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right))) {
      expect(box).toBeLessThanOrEqual(300);
    }
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-selection-chip.png') });
  });

  it('asks the extension to reveal the lines when the file is clicked', async () => {
    await page.locator('#selection-bar .selection-file').click();
    await expect.poll(posted).toContainEqual({ type: 'open-path', path: 'src/calc.py', line: 3 });
    expect(await prompts()).toEqual([]);
  });

  it('fills the box from a suggestion without sending, and Enter sends the text with the selection as context (the host trims it)', async () => {
    await page.locator('#selection-bar .selection-suggestion', { hasText: 'Find bugs' }).click();
    expect(await page.locator('#prompt').inputValue()).toBe('Point out anything wrong with this code. @calc.py:3-7 ');
    await page.locator('#selection-bar .selection-suggestion', { hasText: 'Explain' }).click();
    expect(await page.locator('#prompt').inputValue()).toBe('Explain this code. @calc.py:3-7 ');
    expect(await prompts()).toEqual([]);
    await page.locator('#prompt').press('Enter');
    await expect.poll(prompts).toEqual([{ type: 'prompt', text: 'Explain this code. src/calc.py:3-7 ', context: [selection.ref] }]);
    await expect.poll(() => page.locator('#selection-bar').isVisible()).toBe(false);
  });

  it('sends to a new session when the toggle says so (the default from the setting)', async () => {
    await fresh();
    await send({ type: 'add-selection', item: selection, session: 'new' });
    expect(await page.locator('#selection-bar .selection-session').textContent()).toBe('New session');
    expect(await page.locator('#selection-bar .selection-session').getAttribute('aria-pressed')).toBe('true');
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-selection-chip-new.png') });
    await page.locator('#prompt').pressSequentially('why?');
    await page.locator('#prompt').press('Enter');
    await expect.poll(prompts).toEqual([{ type: 'prompt', text: 'src/calc.py:3-7 why?', context: [selection.ref], newSession: true }]);
    // The toggle flipped back to the current session: no newSession.
    await clearPosted();
    await send({ type: 'add-selection', item: selection, session: 'new' });
    await page.locator('#selection-bar .selection-session').click();
    expect(await page.locator('#selection-bar .selection-session').textContent()).toBe('Current session');
    await page.locator('#prompt').press('Enter');
    await expect.poll(prompts).toEqual([{ type: 'prompt', text: 'src/calc.py:3-7 ', context: [selection.ref] }]);
  });

  it('hides the bar when the chip is deleted from the text', async () => {
    await fresh();
    await send({ type: 'add-selection', item: selection, session: 'new' });
    const box = page.locator('#prompt');
    await box.press('End');
    await box.press('Backspace'); // the space
    await box.press('Backspace'); // the chip, whole
    expect(await box.inputValue()).toBe('');
    await expect.poll(() => page.locator('#selection-bar').isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });
});
