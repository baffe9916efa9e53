// The panel at the sidebar's default width (300 px) and narrower (250 px), in a real browser
// (Chromium) with VS Code's Dark Modern theme variables: in each state a user meets (a
// conversation with the composer and its pickers, the missing-key notice, the session history,
// the set-up card's phases), every control shown lies inside the view and no two overlap.
// Screenshots go to test-artifacts/layout-*.png.
import { existsSync, mkdirSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage, PanelState } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { ModelEntry, SessionInfo } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

const artifacts = join(extensionRoot, 'test-artifacts');
const usage = (costUsd: number) => ({ inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd });
const HOUR = 3600_000;
const info = (sessionId: string, title: string, ago: number, cost: number): SessionInfo =>
  ({ sessionId, title, createdAt: Date.now() - ago, updatedAt: Date.now() - ago, busy: false, model: 'claude-sonnet-5-5', usage: usage(cost) }) as SessionInfo;
const SESSIONS = [
  { ...info('s1', 'Fix the failing median test in calc.py and explain why it failed', 0.1 * HOUR, 0.0412), preview: 'Fixed: median now averages the two middle values of an even-length list.' },
  info('s2', 'Parser work', 26 * HOUR, 1.2),
  info('s3', 'Release notes for 0.2', 24 * 7 * HOUR, 0),
];
const model = (id: string, provider: string, hasKey: boolean, keyEnv: string | null): ModelEntry => ({
  provider,
  type: provider === 'anthropic' ? 'anthropic' : 'openai',
  model: id,
  apiModel: id,
  contextWindow: 200000,
  maxOutput: 64000,
  inputUsdPerMTok: 3,
  outputUsdPerMTok: 15,
  images: true,
  thinking: true,
  caching: true,
  default: false,
  keyEnv,
  hasKey,
});
const MODELS = [model('claude-sonnet-5-5', 'anthropic', false, 'ANTHROPIC_API_KEY'), model('gw/coder', 'gw', true, 'GW_KEY')];

interface Box {
  what: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every visible control: its box, named by tag, id and label. */
async function controls(page: Page): Promise<Box[]> {
  return page.evaluate(() => {
    const out: { what: string; x: number; y: number; width: number; height: number }[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('button, select, input, textarea, summary')) {
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (!r.width || !r.height || style.visibility === 'hidden' || el.closest('[hidden]')) continue;
      // A control scrolled out of its list is not "shown"; only the part in its scroller counts.
      const what = `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''} "${el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 30) ?? ''}"`;
      out.push({ what, x: r.x, y: r.y, width: r.width, height: r.height });
    }
    return out;
  });
}

function problems(boxes: Box[], width: number, height: number): string[] {
  const found: string[] = [];
  const EPS = 0.5;
  for (const b of boxes) {
    if (b.x < -EPS || b.y < -EPS || b.x + b.width > width + EPS || b.y + b.height > height + EPS) {
      found.push(`${b.what} is outside the ${width}x${height} view: ${JSON.stringify([b.x, b.y, b.width, b.height].map(Math.round))}`);
    }
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (w > EPS && h > EPS) found.push(`${a.what} overlaps ${b.what}`);
    }
  }
  return found;
}

for (const width of [300, 250]) {
  describe.skipIf(!existsSync(CHROMIUM))(`the panel at ${width} px (Chromium)`, () => {
    const height = 640;
    let browser: Browser;
    let page: Page;
    let http: { server: Server; origin: string };
    const errors: string[] = [];
    const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
    const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
    const fits = async (name: string): Promise<void> => {
      await page.screenshot({ path: join(artifacts, `layout-${width}-${name}.png`) });
      const boxes = await controls(page);
      expect(boxes.length).toBeGreaterThan(0);
      expect(problems(boxes, width, height)).toEqual([]);
    };
    const running = (extra: Partial<PanelState> = {}): PanelState => ({
      connection: 'running',
      sessions: SESSIONS,
      activeSessionId: 's1',
      view: { ...emptyView('s1', SESSIONS[0].title), usage: { session: usage(0.0412), turn: usage(0) } } as PanelState['view'],
      ...extra,
    });

    beforeAll(async () => {
      mkdirSync(artifacts, { recursive: true });
      expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
      ({ browser, page, http } = await openPanel({ viewport: { width, height } }, errors));
      await page.goto(`${http.origin}/panel.html`);
      await page.addStyleTag({ url: `${http.origin}/theme.css` });
      await page.waitForFunction(() => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'));
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => http?.server.close(resolve));
    });

    it('shows the set-up card with Install and what it does, then its progress, then the error with Retry', async () => {
      await send({ type: 'state', state: { connection: 'stopped', connectionMessage: 'The agentls server is not installed yet.', sessions: [], setup: { phase: 'needed', version: '0.1.0' } } });
      const card = page.getByRole('region', { name: 'Set-up' });
      await expect.poll(() => card.getByRole('button', { name: 'Install' }).isVisible()).toBe(true);
      expect(await card.textContent()).toContain('installs agentls 0.1.0 into it with pip');
      await fits('setup-needed');
      await card.getByRole('button', { name: 'Install' }).click();
      expect(await posted()).toContainEqual({ type: 'install-server' });
      await send({ type: 'setup', setup: { phase: 'installing', version: '0.1.0', step: 'pip install agentls 0.1.0 and its dependencies' } });
      await expect.poll(() => card.getByRole('progressbar').isVisible()).toBe(true);
      expect(await card.textContent()).toContain('Now: pip install agentls 0.1.0');
      await fits('setup-installing');
      await send({ type: 'setup', setup: { phase: 'failed', version: '0.1.0', error: 'No Python found to install agentls with (tried python3).' } });
      await expect.poll(() => card.getByRole('button', { name: 'Retry' }).isVisible()).toBe(true);
      expect(await card.locator('.setup-error').textContent()).toContain('No Python found');
      await fits('setup-failed');
      await card.getByRole('button', { name: 'Retry' }).click();
      expect((await posted()).filter((m) => m.type === 'install-server')).toHaveLength(2);
      // The card stays until the server runs; then the conversation takes its place.
      await send({ type: 'setup', setup: undefined });
      await expect.poll(() => card.textContent()).toContain('not running');
      await send({ type: 'state', state: running() });
      await expect.poll(() => card.isHidden()).toBe(true);
    });

    it('fits the conversation, the pickers and the missing-key notice with Set API key', async () => {
      await send({ type: 'models', models: MODELS, current: 'claude-sonnet-5-5', defaultModel: 'scripted:demo' });
      // The server's default stays choosable after another model was picked.
      await expect.poll(() => page.locator('#model option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['scripted:demo', 'claude-sonnet-5-5', 'gw/coder']);
      const notice = page.getByRole('alert').filter({ hasText: 'No API key' });
      await expect.poll(() => notice.isVisible()).toBe(true);
      expect(await notice.textContent()).toContain('anthropic (ANTHROPIC_API_KEY)');
      for (const name of ['Plan mode', 'Model', 'Send the prompt']) {
        expect(await page.getByRole(name === 'Model' ? 'combobox' : 'button', { name }).isVisible(), name).toBe(true);
      }
      await fits('conversation-no-key');
      await notice.getByRole('button', { name: 'Set API key' }).click();
      expect(await posted()).toContainEqual({ type: 'set-api-key', name: 'ANTHROPIC_API_KEY' });
      // The key is set: the models come again with hasKey, the notice goes.
      await send({ type: 'models', models: [{ ...MODELS[0], hasKey: true }, MODELS[1]], current: 'claude-sonnet-5-5' });
      await expect.poll(() => notice.count()).toBe(0);
      await send({ type: 'event', event: { type: 'turn-start', sessionId: 's1', messageId: 'm1', prompt: 'Fix the failing test' } });
      await expect.poll(() => page.getByRole('button', { name: 'Stop the running turn' }).isVisible()).toBe(true);
      await fits('conversation-busy');
      await send({ type: 'event', event: { type: 'turn-end', sessionId: 's1', messageId: 'm1', stopReason: 'end_turn' } as never });
    });

    it('lists the sessions in the history with title, time, cost and actions, filters them, and opens one', async () => {
      await send({ type: 'show-history' });
      const history = page.getByRole('region', { name: 'Session history' });
      await expect.poll(() => history.isVisible()).toBe(true);
      expect(await page.locator('#transcript').isVisible()).toBe(false);
      const items = history.locator('.history-item');
      await expect.poll(() => items.count()).toBe(3);
      expect(await items.nth(0).locator('.history-meta').textContent()).toMatch(/min\. ago · \$0\.04/);
      expect(await items.nth(1).locator('.history-meta').textContent()).toMatch(/yesterday · \$1\.20/);
      expect(await items.nth(0).getAttribute('class')).toContain('active');
      expect(await items.nth(0).locator('.history-preview').textContent()).toBe('Fixed: median now averages the two middle values of an even-length list.');
      expect(await items.nth(1).locator('.history-preview').textContent()).toBe('claude-sonnet-5-5'); // no answer yet: its model
      await fits('history');
      await history.getByRole('button', { name: 'Rename “Parser work”' }).click();
      await history.getByRole('button', { name: 'Export “Parser work” as Markdown' }).click();
      await history.getByRole('button', { name: 'Delete “Parser work”' }).click();
      const actions = (await posted()).filter((m) => ['rename-session', 'export-session', 'delete-session'].includes(m.type));
      expect(actions).toEqual([
        { type: 'rename-session', sessionId: 's2' },
        { type: 'export-session', sessionId: 's2' },
        { type: 'delete-session', sessionId: 's2' },
      ]);
      // Titles filter at once; the server's full-text matches replace them; the active session
      // is not kept when it does not match.
      const search = history.getByRole('searchbox', { name: 'Search sessions by title and content' });
      await search.fill('parser');
      await expect.poll(() => items.allTextContents()).toEqual([expect.stringContaining('Parser work')]);
      await expect.poll(posted).toContainEqual({ type: 'search-sessions', query: 'parser' });
      await send({ type: 'session-search', query: 'parser', sessions: [SESSIONS[2], SESSIONS[1]] });
      await expect.poll(() => items.locator('.history-title').allTextContents()).toEqual(['Release notes for 0.2', 'Parser work']);
      await search.fill('zzz');
      await expect.poll(() => history.locator('.history-empty').textContent()).toBe('No session matches “zzz”.');
      await search.press('Escape');
      await expect.poll(() => items.count()).toBe(3);
      await items.nth(1).locator('.history-open').click();
      expect(await posted()).toContainEqual({ type: 'select-session', sessionId: 's2' });
      await expect.poll(() => history.isHidden()).toBe(true);
      expect(await page.locator('#transcript').isVisible()).toBe(true);
    });

    it('offers New session in the history, disabled while the server is down', async () => {
      await send({ type: 'show-history' });
      await page.getByRole('button', { name: 'New session' }).click();
      expect(await posted()).toContainEqual({ type: 'new-session' });
      await send({ type: 'state', state: { ...running(), connection: 'restarting', connectionMessage: 'The running turn was lost.' } });
      await send({ type: 'show-history' });
      await expect.poll(() => page.getByRole('button', { name: 'New session' }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Delete “Parser work”' }).isDisabled()).toBe(true);
      await send({ type: 'show-history' });
      await expect.poll(() => page.locator('#setup').textContent()).toContain('restarting');
      await fits('restarting');
    });

    it('broke no Content-Security-Policy rule and logged no error', async () => {
      expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
      expect(errors).toEqual([]);
    });
  });
}
