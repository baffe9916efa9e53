// A sub-agent's task card in a real browser (Chromium, as panel.test.ts): the child session's
// events stream into the card as a nested transcript, its question opens the card and is
// answered in the child's session, under the panel's Content-Security-Policy.
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { AgentEvent } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';


const child = { sessionId: 'child', parentSessionId: 's', parentCallId: 'call_task', agent: 'explorer' };

describe.skipIf(!existsSync(CHROMIUM))('a sub-agent’s task card (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 420, height: 700 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('nests the sub-agent’s transcript in the task card and answers its question in its session', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'what do my notes say?' });
    await event({ type: 'tool-call', sessionId: 's', callId: 'call_task', tool: 'task', title: 'task: find notes', input: { description: 'find notes', prompt: 'Read notes.txt' } });
    await event({ type: 'turn-start', messageId: 'c1', prompt: 'Read notes.txt', ...child });
    await event({ type: 'tool-call', callId: 'call_read', tool: 'read', title: 'read notes.txt', input: { path: 'notes.txt' }, ...child });
    await event({ type: 'tool-result', callId: 'call_read', tool: 'read', output: 'remember the milk', isError: false, status: 'completed', ...child });
    await event({ type: 'tool-call', callId: 'call_fetch', tool: 'webfetch', title: 'webfetch https://milk.test', input: { url: 'https://milk.test' }, ...child });
    await event({ type: 'permission-request', requestId: 'r1', callId: 'call_fetch', tool: 'webfetch', title: 'Fetch https://milk.test', input: { url: 'https://milk.test' }, ...child });
    const card = page.locator('details.tool[data-call-id="call_task"]');
    const nested = card.locator('.subagent[data-session-id="child"]');
    await expect.poll(() => nested.locator('details.tool').count()).toBe(2);
    // The card is open by itself while its sub-agent asks; nothing of the child is outside it.
    expect(await card.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect((await nested.locator('.subagent-label').textContent())?.trim()).toBe('Sub-agent explorer');
    expect(await nested.locator('.message.user').textContent()).toContain('Read notes.txt');
    expect(await page.locator('#transcript > details.tool, .transcript > details.tool, details.tool:not(.subagent details.tool)').count()).toBe(1);
    await nested.locator('button[data-decision="once"]').click();
    await expect.poll(async () => (await posted()).filter((m) => m.type === 'approve')).toEqual([
      { type: 'approve', sessionId: 'child', requestId: 'r1', decision: 'once' },
    ]);
    mkdirSync(join(extensionRoot, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-subagent.png') });
    await event({ type: 'permission-resolved', requestId: 'r1', decision: 'once', ...child });
    await event({ type: 'tool-result', callId: 'call_fetch', tool: 'webfetch', output: 'milk: 1 l', isError: false, status: 'completed', ...child });
    await event({ type: 'turn-end', finishReason: 'end_turn', messageId: 'c2', ...child });
    await event({ type: 'tool-result', sessionId: 's', callId: 'call_task', tool: 'task', output: 'Your notes say: remember the milk', isError: false, status: 'completed' });
    await expect.poll(() => card.locator(':scope > .tool-body > .subagent-result').textContent()).toContain('remember the milk');
    expect(await nested.locator('details.tool.status-completed').count()).toBe(2);
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
