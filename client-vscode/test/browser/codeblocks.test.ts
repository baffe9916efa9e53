// The answers' code blocks and path links in a real browser (Chromium) at VS Code's default
// sidebar width: the code coloured by shiki with the theme the extension sends (the grammar
// loaded on demand through the real CodeActions), Copy / Insert / Apply, and paths that open the
// file at a line, under the panel's Content-Security-Policy.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeActions, type CodeEditor } from '../../src/codeActions';
import type { CodeTheme } from '../../src/model/codeBlocks';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView } from '../../src/model/transcript';
import type { AgentEvent } from '../../src/protocol/generated';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';

const THEME: CodeTheme = {
  name: 'test-dark',
  type: 'dark',
  colors: { 'editor.foreground': '#d4d4d4', 'editor.background': '#1e1e1e' },
  tokenColors: [
    { scope: ['keyword', 'storage.type'], settings: { foreground: '#c586c0' } },
    { scope: 'entity.name.function', settings: { foreground: '#dcdcaa' } },
    { scope: 'string', settings: { foreground: '#ce9178' } },
  ],
};

const ANSWER = [
  'The bug is in `calc.py:2`, where `add` subtracts. Fix it:',
  '',
  '```python calc.py',
  'def add(a, b):',
  '    return a + b  # "sum"',
  '```',
  '',
  'It is called from src/app.py and /work/demo/lib/util.py:7, not from /etc/passwd.',
  '',
  '```',
  'no language, no file',
  '```',
].join('\n');

describe.skipIf(!existsSync(CHROMIUM))('code blocks and path links (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const postedOf = async <T extends PanelMessage['type']>(type: T): Promise<Extract<PanelMessage, { type: T }>[]> =>
    (await posted()).filter((m): m is Extract<PanelMessage, { type: T }> => m.type === type);
  // The extension's side of the grammars, on the files the build wrote (dist/grammars).
  const editor = {
    grammarFile: async (name: string) => {
      const file = join(extensionRoot, 'dist', 'grammars', `${name}.json`);
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    },
  } as CodeEditor;
  const host = new CodeActions(editor, (m) => void send(m));

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/grammars/python.json')), 'dist/grammars: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 640 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('colours a block with the editor theme once its grammar arrives', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await send({ type: 'code-context', root: '/work/demo', theme: THEME });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'why does add fail?' });
    await event({ type: 'text-delta', sessionId: 's', messageId: 'm2', delta: ANSWER });
    await event({ type: 'turn-end', sessionId: 's', messageId: 'm2', finishReason: 'end_turn' });
    await expect.poll(() => postedOf('load-grammar')).toEqual([{ type: 'load-grammar', lang: 'python' }]);
    await host.handle({ type: 'load-grammar', lang: 'python' }, undefined, 's');
    const code = page.locator('.codeblock[data-lang="python"] code');
    await expect.poll(() => code.evaluate((c) => c.classList.contains('highlighted'))).toBe(true);
    const colourOf = (text: string): Promise<string> =>
      code.evaluate((c, t) => {
        const span = [...c.querySelectorAll('span')].find((s) => s.textContent === t);
        return span ? getComputedStyle(span).color : 'missing';
      }, text);
    expect(await colourOf('def')).toBe('rgb(197, 134, 192)'); // keyword
    expect(await colourOf('add')).toBe('rgb(220, 220, 170)'); // function name
    expect(await code.textContent()).toBe('def add(a, b):\n    return a + b  # "sum"');
    // The block without a language stays plain and asks for nothing.
    expect(await page.locator('.codeblock').nth(1).locator('code').textContent()).toBe('no language, no file\n');
    expect(await postedOf('load-grammar')).toHaveLength(1);
  });

  it('names the file from the fence and offers Copy, Insert and Apply', async () => {
    const block = page.locator('.codeblock[data-lang="python"]');
    expect(await block.getAttribute('data-path')).toBe('calc.py');
    expect(await block.locator('.codeblock-label').textContent()).toBe('calc.py');
    const text = 'def add(a, b):\n    return a + b  # "sum"\n';
    await block.locator('button[data-action="copy"]').click();
    await block.locator('button[data-action="insert"]').click();
    await block.locator('button[data-action="apply"]').click();
    expect(await postedOf('copy-code')).toEqual([{ type: 'copy-code', text }]);
    expect(await postedOf('insert-code')).toEqual([{ type: 'insert-code', text }]);
    expect(await postedOf('apply-code')).toEqual([{ type: 'apply-code', sessionId: 's', path: 'calc.py', text }]);
    expect(await block.locator('button[data-action="copy"]').getAttribute('title')).toBe('Copied');
    // A block that names no file has no Apply; the actions are buttons with names.
    const plain = page.locator('.codeblock').nth(1);
    expect(await plain.locator('button[data-action="apply"]').count()).toBe(0);
    expect(await plain.locator('button[data-action="insert"]').getAttribute('aria-label')).toBe('Insert at cursor');
  });

  it('turns paths into links that open the file at the line, relative to the workspace', async () => {
    const links = page.locator('.message.assistant a.path-link');
    const found = await links.evaluateAll((as) => as.map((a) => [a.textContent, (a as HTMLElement).dataset.path, (a as HTMLElement).dataset.line ?? '']));
    expect(found).toEqual([
      ['calc.py:2', 'calc.py', '2'],
      ['src/app.py', 'src/app.py', ''],
      ['lib/util.py:7', 'lib/util.py', '7'],
    ]);
    expect(await page.locator('.message.assistant').textContent()).toContain('not from /etc/passwd');
    await links.first().click();
    await links.nth(2).focus();
    await page.keyboard.press('Enter');
    expect(await postedOf('open-path')).toEqual([
      { type: 'open-path', path: 'calc.py', line: 2 },
      { type: 'open-path', path: 'lib/util.py', line: 7 },
    ]);
  });

  it('fits 300 px: nothing wider than the panel, the bar on one line', async () => {
    const transcript = page.locator('#transcript');
    expect(await transcript.evaluate((t) => t.scrollWidth - t.clientWidth)).toBe(0);
    for (const block of await page.locator('.codeblock').all()) {
      const box = await block.boundingBox();
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(300);
    }
    const bar = await page.locator('.codeblock-bar').first().boundingBox();
    expect(bar?.height).toBeLessThan(30);
    mkdirSync(join(extensionRoot, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-codeblocks.png') });
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
