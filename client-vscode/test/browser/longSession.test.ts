// A long session in the panel (Chromium, 300 px): it opens on its newest messages, with a bar
// above them that brings the earlier ones in (clicked, or scrolled near), the view kept on the
// messages that were shown; streamed text still reaches the newest answer, and back at the bottom
// the earlier pages are let go again. Speed: bench/panel.mjs.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import type { MessageInfo } from '../../src/protocol/generated';
import { viewFromMessages } from '../../src/model/transcript';
import { MORE, PAGE } from '../../src/webview/transcriptWindow';
import { loadFixture } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

describe.skipIf(!existsSync(CHROMIUM))('a long session in the panel (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const fixture = loadFixture();
  const sessionId = 'ses_long';
  // The demo session's user prompt and answer, numbered: 400 user messages and 400 answers.
  const messages: MessageInfo[] = [];
  for (let i = 0; i < 400; i++) {
    messages.push({ id: `u${i}`, role: 'user', createdAt: i, parts: [{ type: 'text', text: `question ${i}` }] });
    messages.push({ id: `a${i}`, role: 'assistant', createdAt: i, parts: [{ type: 'text', text: `answer ${i}` }] });
  }
  const info = { ...fixture.sessions[0], sessionId };
  const view = viewFromMessages(sessionId, messages, info);
  const userTexts = (): Promise<string[]> => page.locator('#transcript .message.user .user-text').allTextContents();
  /** The messages drawn: the transcript's own and those of the earlier pages it drew. */
  const drawn = (): Promise<number> => page.locator('#transcript > .message, #transcript > .earlier-items > .message').count();

  beforeAll(async () => {
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('opens on its newest messages, under a bar that says how many are earlier', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [info], activeSessionId: sessionId, view } });
    await expect.poll(drawn).toBe(PAGE);
    const shown = await userTexts();
    expect(shown.at(-1)).toBe('question 399');
    expect(shown[0]).toBe(`question ${400 - PAGE / 2}`);
    expect(await page.locator('.earlier-page').textContent()).toBe(`Earlier messages (${800 - PAGE} more)`);
    const scroller = page.locator('#transcript');
    expect(await scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(40); // at the bottom, as the panel means it
  });

  it('brings the earlier messages in when the bar is clicked, the same messages left in view', async () => {
    const first = page.locator('#transcript .message.user', { hasText: `question ${400 - PAGE / 2}` }).first();
    await first.scrollIntoViewIfNeeded();
    const before = await first.evaluate((el) => el.getBoundingClientRect().top);
    await page.locator('.earlier-page').evaluate((el: HTMLButtonElement) => el.click());
    await expect.poll(drawn).toBeGreaterThanOrEqual(PAGE + MORE);
    expect(await first.evaluate((el) => el.getBoundingClientRect().top)).toBeCloseTo(before, -1);
  });

  it('brings the rest in as the top is scrolled to, down to the first message', async () => {
    const scroller = page.locator('#transcript');
    // Scrolled to the top again and again until no bar is left: bounded by time, not by a count
    // of tries, as a loaded machine draws fewer frames (each page comes on a frame).
    await expect
      .poll(
        async () => {
          await scroller.evaluate((el) => (el.scrollTop = 0));
          return page.locator('.earlier-page').count();
        },
        { timeout: 45_000, interval: 50 },
      )
      .toBe(0);
    expect((await userTexts())[0]).toBe('question 0');
    expect(await drawn()).toBe(800);
  });

  it('streams a new answer into the end, the earlier pages let go once the view is back at the bottom', async () => {
    await page.locator('#transcript').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await send({ type: 'event', event: { type: 'turn-start', sessionId, messageId: 'u400', prompt: 'one more' } });
    await send({ type: 'event', event: { type: 'text-delta', sessionId, messageId: 'a400', delta: 'the newest ' } });
    await send({ type: 'event', event: { type: 'text-delta', sessionId, messageId: 'a400', delta: 'answer' } });
    await expect.poll(() => page.locator('#transcript .message.assistant').last().textContent()).toContain('the newest answer');
    expect(await drawn()).toBeLessThanOrEqual(PAGE + 2);
    expect(await page.locator('.earlier-page').count()).toBe(1);
  });

  it('logged no error', () => {
    expect(errors).toEqual([]);
  });
});
