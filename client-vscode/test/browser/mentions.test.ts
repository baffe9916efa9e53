// @-mentions in the panel, in a real browser (Chromium, as panel.test.ts) at the default sidebar
// width: "@calc" lists the extension's file matches, symbols and kinds together in one step, a
// taken one stays in the text as a chip that Backspace removes whole, and the prompt posts the
// file's name in place of the chip with its context item; an item the extension could not gather
// leaves the text with a notice.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, MentionItem, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))('@-mentions in the panel (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const clearPosted = (): Promise<void> => page.evaluate(() => void ((window as unknown as { __posted: PanelMessage[] }).__posted = []));
  const options = (): Promise<string[]> => page.locator('#mentions:not([hidden]) .command-name').allTextContents();
  const chips = (): Promise<string[]> => page.locator('#mention-chips:not([hidden]) .mention-chip').allTextContents();
  const calc: MentionItem = { label: 'calc.py', detail: 'src/calc.py', name: 'src/calc.py', ref: { uri: 'file:///w/src/calc.py' } };
  const testCalc: MentionItem = { label: 'test_calc.py', detail: 'tests/test_calc.py', name: 'tests/test_calc.py', ref: { uri: 'file:///w/tests/test_calc.py' } };
  const total: MentionItem = {
    label: 'calc_total',
    detail: 'src/calc.py:12',
    name: 'calc_total',
    ref: { uri: 'file:///w/src/calc.py', range: { start: { line: 11, character: 0 }, end: { line: 14, character: 0 } } },
  };
  const problems = { type: 'text' as const, label: '@problems', text: 'calc.py:2:5 error: add subtracts' };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('lists files, symbols and kinds together as "@calc" is typed, and keeps the chosen file in the text as a chip', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    const box = page.locator('#prompt');
    await box.click();
    await box.pressSequentially('what does @calc');
    // The file index is asked at once, for the query as typed: no "@file:" step.
    await expect.poll(posted).toContainEqual({ type: 'mention-search', kind: 'file', query: 'calc' });
    await send({ type: 'mention-results', kind: 'file', query: 'cal', items: [testCalc] }); // stale: ignored
    await send({ type: 'mention-results', kind: 'file', query: 'calc', items: [calc, testCalc] });
    await expect.poll(options).toEqual(['calc.py', 'test_calc.py']);
    // The symbols come when the workspace symbol providers answer, after the files.
    await expect.poll(posted).toContainEqual({ type: 'mention-search', kind: 'symbol', query: 'calc' });
    await send({ type: 'mention-results', kind: 'symbol', query: 'calc', items: [total] });
    await expect.poll(options).toEqual(['calc.py', 'test_calc.py', 'calc_total']);
    expect(await page.locator('#mentions .command.selected .command-name').textContent()).toBe('calc.py');
    await box.press('Enter'); // takes calc.py: the chip stays where the mention was typed
    expect(await box.inputValue()).toBe('what does @calc.py ');
    await expect.poll(chips).toEqual(['@calc.py']);
    expect(await page.locator('#mentions').isHidden()).toBe(true);
    expect(await page.locator('#mention-chips .mention-chip').getAttribute('title')).toBe('src/calc.py');
    // The chip is drawn over its token, inside the box, and the whole panel fits 300 px.
    const chip = await page.locator('#mention-chips .mention-chip').boundingBox();
    const area = await box.boundingBox();
    expect(chip && area && chip.x >= area.x && chip.x + chip.width <= area.x + area.width && chip.y >= area.y).toBe(true);
    await box.pressSequentially('@test_c');
    await send({ type: 'mention-results', kind: 'file', query: 'test_c', items: [testCalc] });
    await expect.poll(options).toEqual(['test_calc.py']);
    const list = await page.locator('#mentions').boundingBox();
    expect(list && area && list.x >= area.x - 1 && list.x + list.width <= area.x + area.width + 1).toBe(true); // as wide as the box
    await box.press('Escape');
    for (let i = 0; i < '@test_c'.length; i++) await box.press('Backspace');
    expect(await box.inputValue()).toBe('what does @calc.py ');
  });

  it('offers the other kinds by name, in the same list', async () => {
    const box = page.locator('#prompt');
    await box.pressSequentially('@pro');
    await send({ type: 'mention-results', kind: 'file', query: 'pro', items: [{ label: 'profile.py', detail: 'profile.py', name: 'profile.py', ref: { uri: 'file:///w/profile.py' } }] });
    await expect.poll(options).toEqual(['@problems', 'profile.py']);
    await box.press('Enter');
    await expect.poll(posted).toContainEqual({ type: 'mention', kind: 'problems' });
    expect(await box.inputValue()).toBe('what does @calc.py @problems ');
    await send({ type: 'mention-item', item: { label: '@problems', detail: '1 in calc.py', ref: problems } });
    await expect.poll(chips).toEqual(['@calc.py', '@problems']);
    // One the extension cannot gather leaves the text, with a notice.
    await box.pressSequentially('@git');
    await box.press('Enter');
    expect(await box.inputValue()).toBe('what does @calc.py @problems @git ');
    await send({ type: 'mention-item', error: 'The working tree has no changes.' });
    await expect.poll(() => page.locator('.notice').allTextContents()).toEqual([expect.stringContaining('no changes')]);
    expect(await box.inputValue()).toBe('what does @calc.py @problems ');
    await expect.poll(chips).toEqual(['@calc.py', '@problems']);
  });

  it('deletes a chip as one unit: Backspace at its end, and the arrows step over it', async () => {
    const box = page.locator('#prompt');
    await box.press('Backspace'); // the space after @problems
    await box.press('Backspace'); // @problems, whole
    expect(await box.inputValue()).toBe('what does @calc.py ');
    await expect.poll(chips).toEqual(['@calc.py']);
    await box.press('Backspace');
    await box.press('ArrowLeft'); // from the end of @calc.py to its start, in one step
    expect(await box.evaluate((el: HTMLTextAreaElement) => el.selectionStart)).toBe('what does '.length);
    await box.press('ArrowRight');
    expect(await box.evaluate((el: HTMLTextAreaElement) => el.selectionStart)).toBe('what does @calc.py'.length);
    await box.pressSequentially(' do?');
    expect(await box.inputValue()).toBe('what does @calc.py do?');
    await expect.poll(chips).toEqual(['@calc.py']);
  });

  it("sends the file's name in place of its chip and its content as a context item", async () => {
    await clearPosted();
    const box = page.locator('#prompt');
    await box.press('Enter');
    const prompt = (await posted()).find((m) => m.type === 'prompt');
    expect(prompt).toEqual({ type: 'prompt', text: 'what does src/calc.py do?', context: [calc.ref] });
    expect(await box.inputValue()).toBe('');
    await expect.poll(chips).toEqual([]);
    await send({ type: 'prompt-sent', sessionId: 's', text: 'what does src/calc.py do?', context: ['calc.py'] });
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'what does src/calc.py do?' } });
    await expect.poll(() => page.locator('.message.user .context').textContent()).toBe('with calc.py');
  });

  it('a chip edited into other text is plain text again, and nothing goes with the prompt for it', async () => {
    await clearPosted();
    const box = page.locator('#prompt');
    await box.pressSequentially('see @calc');
    await send({ type: 'mention-results', kind: 'file', query: 'calc', items: [calc] });
    await expect.poll(options).toEqual(['calc.py']);
    await box.press('Tab');
    await expect.poll(chips).toEqual(['@calc.py']);
    await box.fill('see @calc.p please'); // the token changed under it
    await expect.poll(chips).toEqual([]);
    await box.press('Enter');
    expect((await posted()).find((m) => m.type === 'prompt')).toMatchObject({ text: 'see @calc.p please' });
    expect((await posted()).find((m) => m.type === 'prompt')).not.toHaveProperty('context');
  });

  it('draws no chip over text the extension put in the box', async () => {
    const box = page.locator('#prompt');
    await box.pressSequentially('@calc');
    await send({ type: 'mention-results', kind: 'file', query: 'calc', items: [calc] });
    await expect.poll(options).toEqual(['calc.py']);
    await box.press('Enter');
    await expect.poll(chips).toEqual(['@calc.py']);
    await send({ type: 'focus-prompt', text: 'fix the parser' }); // e.g. a prompt given back
    await expect.poll(chips).toEqual([]);
    expect(await box.inputValue()).toBe('fix the parser');
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
