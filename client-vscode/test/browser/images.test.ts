// Images in the panel, in a real browser (Chromium, as panel.test.ts): paste and drop into the
// prompt box show removable thumbnail chips; the prompt posts the images left; the transcript shows
// them once the turn starts; under the panel's Content-Security-Policy.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

/** Pastes (or drops) files into the prompt box as the browser would. */
function give(page: Page, how: 'paste' | 'drop', files: { name: string; type: string; base64: string }[]): Promise<void> {
  return page.evaluate(
    ({ how, files }) => {
      const dt = new DataTransfer();
      for (const f of files) {
        const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      const box = document.getElementById('prompt') as HTMLTextAreaElement;
      const init = { bubbles: true, cancelable: true };
      box.dispatchEvent(how === 'paste' ? new ClipboardEvent('paste', { ...init, clipboardData: dt }) : new DragEvent('drop', { ...init, dataTransfer: dt }));
    },
    { how, files },
  );
}

describe.skipIf(!existsSync(CHROMIUM))('images in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 420, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows pasted and dropped images as chips, refuses other files, and removes one', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await give(page, 'paste', [{ name: 'one.png', type: 'image/png', base64: PNG }]);
    await give(page, 'drop', [
      { name: 'two.png', type: 'image/png', base64: PNG },
      { name: 'notes.txt', type: 'text/plain', base64: btoa('hello') },
    ]);
    const chips = page.locator('#images .image-chip img');
    await expect.poll(() => chips.count()).toBe(2);
    expect(await chips.first().getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    await expect.poll(() => page.locator('.notice').allTextContents()).toEqual([expect.stringContaining('notes.txt is not a PNG, JPEG, GIF or WebP')]);
    await page.locator('#images .image-remove').first().click();
    await expect.poll(() => chips.count()).toBe(1);
  });

  it('sends the images left with the prompt and shows them in the transcript', async () => {
    const box = page.locator('#prompt');
    await box.fill('what is this?');
    await box.press('Enter');
    const prompt = (await posted()).find((m) => m.type === 'prompt');
    expect(prompt).toEqual({ type: 'prompt', text: 'what is this?', images: [{ mimeType: 'image/png', data: PNG }] });
    expect(await page.locator('#images').isHidden()).toBe(true);
    const url = `data:image/png;base64,${PNG}`;
    await send({ type: 'prompt-sent', sessionId: 's', text: 'what is this?', images: [url] });
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'what is this?' } });
    const shown = page.locator('.message.user .user-images img');
    await expect.poll(() => shown.count()).toBe(1);
    expect(await shown.getAttribute('src')).toBe(url);
    expect(await page.evaluate(() => (document.querySelector('.message.user .user-images img') as HTMLImageElement).naturalWidth)).toBe(1);
  });

  it('sends a prompt of images only: Enter or Send with only a chip, nothing with neither', async () => {
    const prompts = async (): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === 'prompt');
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    const before = (await prompts()).length;
    const box = page.locator('#prompt');
    await box.fill('  ');
    await box.press('Enter');
    await page.locator('#send').click();
    expect((await prompts()).length).toBe(before); // no text and no image: nothing is sent
    await give(page, 'paste', [{ name: 'shot.png', type: 'image/png', base64: PNG }]);
    await expect.poll(() => page.locator('#images .image-chip').count()).toBe(1);
    await page.locator('#send').click();
    await expect.poll(async () => (await prompts()).length).toBe(before + 1);
    expect((await prompts()).at(-1)).toEqual({ type: 'prompt', text: '  ', images: [{ mimeType: 'image/png', data: PNG }] });
    expect(await page.locator('#images').isHidden()).toBe(true);
    await give(page, 'paste', [{ name: 'shot.png', type: 'image/png', base64: PNG }]);
    await expect.poll(() => page.locator('#images .image-chip').count()).toBe(1);
    await box.press('Enter');
    await expect.poll(async () => (await prompts()).length).toBe(before + 2);
    expect((await prompts()).at(-1)).toEqual({ type: 'prompt', text: '', images: [{ mimeType: 'image/png', data: PNG }] });
    const url = `data:image/png;base64,${PNG}`;
    await send({ type: 'prompt-sent', sessionId: 's', text: '', images: [url] });
    await send({ type: 'event', event: { type: 'turn-start', sessionId: 's', messageId: 'm2', prompt: '' } });
    const shown = page.locator('.message.user').last().locator('.user-images img');
    await expect.poll(() => shown.count()).toBe(1);
    expect(await shown.getAttribute('src')).toBe(url);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
