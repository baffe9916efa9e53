// The finish gate's line on a turn, in a real browser (Chromium) at VS Code's default sidebar
// width: each check of the turn's files before it may end is a small line after the answer, a
// warning when errors are left, inside the view.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { AgentEvent } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

const WIDTH = 300;

describe.skipIf(!existsSync(CHROMIUM))('the finish gate line (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const lines = () => page.locator('#transcript .notice');

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: WIDTH, height: 640 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows each check after the answer, and the errors left as a warning', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'rename compute' });
    await event({ type: 'text-delta', sessionId: 's', delta: 'Renamed.', messageId: 'a1' });
    const problem = { path: 'b.py', line: 1, severity: 'error' as const, message: '"compute" is unknown import symbol', source: 'Pyright' };
    const base = { type: 'finish-gate' as const, sessionId: 's', level: 'errors' as const, checked: 2, maxAttempts: 1 };
    await event({ ...base, status: 'sent-back', attempt: 1, problems: [problem] });
    await event({ type: 'text-delta', sessionId: 's', delta: 'It stays.', messageId: 'a2' });
    await event({ ...base, status: 'left', attempt: 1, problems: [problem] });
    await event({ type: 'turn-end', sessionId: 's', finishReason: 'end_turn', messageId: 'a2' });
    await expect.poll(() => lines().count()).toBe(2);
    expect(await lines().allTextContents()).toEqual([
      'Checked 2 files: 1 new error (b.py:1), sent back to the agent (1 of 1)',
      '1 error left after 1 try (b.py:1)',
    ]);
    expect(await lines().nth(0).getAttribute('class')).toBe('notice info');
    expect(await lines().nth(1).getAttribute('class')).toBe('notice warning');
    // After the answer it checked, within the panel's width.
    const transcript = (await page.locator('#transcript').textContent()) ?? '';
    expect(transcript.indexOf('Renamed.')).toBeLessThan(transcript.indexOf('Checked 2 files'));
    for (const i of [0, 1]) {
      const box = await lines().nth(i).boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x + box!.width).toBeLessThanOrEqual(WIDTH);
    }
    expect(errors).toEqual([]);
  });
});
