// Accessibility and the model picker in a real browser (Chromium, as panel.test.ts): every control
// has a name in Chromium's own accessibility tree (idle, an approval, the reject form, the picker);
// the live region gets one message per finished block of a recorded run, never a partial one;
// focus stays in (and returns to) the prompt box; the picker lists models and posts the choice.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { applyEvent, emptyView } from '../../src/model/transcript';
import type { ModelEntry } from '../../src/protocol/generated';
import { panelHtml } from '../../src/webviewHtml';
import { extensionRoot, loadFixture } from '../support/fixture';

const CHROMIUM = process.env.AGENTLS_CHROMIUM ?? '/usr/bin/chromium';
const fixture = loadFixture();
const sessionId = fixture.sessions[0].sessionId;
const events = fixture.events;
const bashRequest = events.findIndex((e) => e.type === 'permission-request' && e.tool === 'bash');
// Roles a user operates (Chromium's names for them in Accessibility.getFullAXTree).
const CONTROL_ROLES = new Set(['button', 'textbox', 'combobox', 'ComboBoxSelect', 'checkbox', 'DisclosureTriangle', 'link', 'listbox', 'option', 'MenuListOption', 'searchbox']);

const MODELS: ModelEntry[] = [
  { provider: 'anthropic', type: 'anthropic', model: 'claude-sonnet-5-5', apiModel: 'claude-sonnet-5-5', contextWindow: 1_000_000, maxOutput: 128_000, inputUsdPerMTok: 2, outputUsdPerMTok: 10, images: true, thinking: true, caching: true, default: true, keyEnv: 'ANTHROPIC_API_KEY', hasKey: true },
  { provider: 'anthropic', type: 'anthropic', model: 'claude-haiku-5-5', apiModel: 'claude-haiku-5-5', contextWindow: 1_000_000, maxOutput: 128_000, inputUsdPerMTok: 0.1, outputUsdPerMTok: 0.5, images: true, thinking: true, caching: true, default: false, keyEnv: 'ANTHROPIC_API_KEY', hasKey: true },
  { provider: 'gw', type: 'openai', model: 'gw/coder', apiModel: 'coder', contextWindow: 65_536, maxOutput: 8_192, inputUsdPerMTok: 0, outputUsdPerMTok: 0, images: false, thinking: false, caching: false, default: false, keyEnv: 'GW_KEY', hasKey: false },
];

function serve(): Promise<{ server: Server; origin: string }> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const origin = `http://${req.headers.host}`;
      const path = new URL(req.url ?? '/', origin).pathname;
      let body: string | Buffer | undefined;
      let type = 'text/html';
      if (path === '/panel.html') {
        body = panelHtml({ cspSource: origin, nonce: 'N' + Math.random().toString(36).slice(2), scriptUri: `${origin}/dist/webview.js`, styleUri: `${origin}/dist/webview.css` });
      } else if (path.startsWith('/dist/')) {
        const file = join(extensionRoot, normalize(path).replace(/^(\.\.[/\\])+/, ''));
        if (existsSync(file)) body = readFileSync(file);
        type = path.endsWith('.css') ? 'text/css' : 'text/javascript';
      }
      if (body === undefined) {
        res.writeHead(path === '/favicon.ico' ? 204 : 404).end();
        return;
      }
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

function fakeHost(): void {
  const w = window as unknown as Record<string, unknown>;
  w.__posted = [];
  w.__announced = [];
  w.acquireVsCodeApi = () => ({
    postMessage: (m: unknown) => (w.__posted as unknown[]).push(JSON.parse(JSON.stringify(m))),
    getState: () => null,
    setState: () => {},
  });
  // Every message the live region gets, as it gets it.
  document.addEventListener('DOMContentLoaded', () => {
    const region = document.getElementById('announcer');
    if (!region) return;
    new MutationObserver((records) => {
      for (const r of records) r.addedNodes.forEach((n) => (w.__announced as string[]).push(n.textContent ?? ''));
    }).observe(region, { childList: true, characterData: true, subtree: true });
  });
}

describe.skipIf(!existsSync(CHROMIUM))('accessibility and the model picker (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };

  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const announced = (): Promise<string[]> => page.evaluate(() => (window as unknown as { __announced: string[] }).__announced);
  const focused = (): Promise<string> => page.evaluate(() => document.activeElement?.id ?? '');

  /** The controls Chromium's accessibility tree shows without a name (role and DOM outline). */
  const unnamed = async (): Promise<string[]> => {
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: { ignored: boolean; role?: { value: string }; name?: { value: string }; backendDOMNodeId?: number }[];
    };
    const bad: string[] = [];
    for (const node of nodes) {
      const role = node.role?.value ?? '';
      if (node.ignored || !CONTROL_ROLES.has(role)) continue;
      if (String(node.name?.value ?? '').trim()) continue;
      const { object } = (await cdp.send('DOM.resolveNode', { backendNodeId: node.backendDOMNodeId })) as { object: { description?: string } };
      bad.push(`${role} ${object.description ?? ''}`);
    }
    await cdp.detach();
    return bad;
  };
  const controls = async (): Promise<number> => {
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { ignored: boolean; role?: { value: string } }[] };
    await cdp.detach();
    return nodes.filter((n) => !n.ignored && CONTROL_ROLES.has(n.role?.value ?? '')).length;
  };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    http = await serve();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const context = await browser.newContext({ viewport: { width: 420, height: 900 } });
    await context.addInitScript(fakeHost);
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('asks for the models once running, lists them with prices and posts the choice', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    expect(await posted()).not.toContainEqual({ type: 'list-models' }); // not connected yet
    await send({ type: 'state', state: { connection: 'running', sessions: fixture.sessions, activeSessionId: sessionId, view: emptyView(sessionId) } });
    await expect.poll(posted).toContainEqual({ type: 'list-models' });
    await send({ type: 'models', models: MODELS, current: 'claude-sonnet-5-5' });
    const picker = page.locator('#model');
    await expect.poll(() => picker.isVisible()).toBe(true);
    expect(await picker.inputValue()).toBe('claude-sonnet-5-5');
    expect(await picker.locator('optgroup').evaluateAll((gs) => gs.map((g) => (g as HTMLOptGroupElement).label))).toEqual(['anthropic', 'gw']);
    expect(await picker.locator('option').allTextContents()).toEqual([
      'claude-sonnet-5-5 · $2 / $10 per MTok',
      'claude-haiku-5-5 · $0.10 / $0.50 per MTok',
      'gw/coder · free · no key',
    ]);
    await picker.selectOption('claude-haiku-5-5');
    expect((await posted()).at(-1)).toEqual({ type: 'set-model', model: 'claude-haiku-5-5' });
  });

  it('names every control, idle', async () => {
    expect(await controls()).toBeGreaterThanOrEqual(6); // session, model, new, prompt, plan, send
    expect(await unnamed()).toEqual([]);
  });

  it('keeps the focus in the prompt box after a click on Send', async () => {
    await page.locator('#prompt').fill('fix the failing test');
    await page.locator('#send').click();
    expect((await posted()).at(-1)).toEqual({ type: 'prompt', text: 'fix the failing test' });
    expect(await focused()).toBe('prompt');
  });

  it('names every control of an approval and of the reject form, and returns the focus after an answer', async () => {
    await send({ type: 'prompt-sent', sessionId, text: fixture.prompt });
    for (const event of events.slice(0, bashRequest + 1)) await send({ type: 'event', event });
    const card = page.locator('.tool.needs-approval');
    await expect.poll(() => card.count()).toBe(1);
    expect(await unnamed()).toEqual([]);
    await card.locator('button[data-decision="reject"]').click();
    await expect.poll(() => page.locator('input.feedback').count()).toBe(1);
    expect(await unnamed()).toEqual([]);
    await card.locator('button[data-action="cancel-reject"]').click();
    await card.locator('button[data-decision="once"]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('prompt');
  });

  it('reads each finished block once, whole, never a partial one', async () => {
    for (const event of events.slice(bashRequest + 1)) await send({ type: 'event', event });
    const view = emptyView(sessionId);
    for (const event of events) applyEvent(view, event);
    const blocks = view.items.flatMap((i) => (i.kind === 'text' && i.text.trim() ? [i.text.trim()] : []));
    expect(blocks.length).toBeGreaterThan(1);
    await expect.poll(announced).toEqual(blocks);
    expect(await page.locator('#transcript').getAttribute('aria-live')).toBeNull(); // not read per delta
    expect(await page.locator('#announcer').getAttribute('aria-live')).toBe('polite');
  });
});
