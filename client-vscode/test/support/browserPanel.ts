// The panel in a real browser: a local server for its page and the built webview, and a stand-in
// for VS Code's webview API (what the panel posts is kept in window.__posted, CSP violations in
// window.__violations). Shared by the browser tests.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { panelHtml } from '../../src/webviewHtml';
import { extensionRoot } from './fixture';

export function serve(): Promise<{ server: Server; origin: string }> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const origin = `http://${req.headers.host}`;
      const path = new URL(req.url ?? '/', origin).pathname;
      let body: string | Buffer | undefined;
      let type = 'text/html';
      if (path === '/favicon.ico') {
        res.writeHead(204).end();
        return;
      }
      if (path === '/panel.html') {
        body = panelHtml({ cspSource: origin, nonce: 'N' + Math.random().toString(36).slice(2), scriptUri: `${origin}/dist/webview.js`, styleUri: `${origin}/dist/webview.css` });
      } else if (path === '/theme.css') {
        body = readFileSync(join(extensionRoot, 'test/browser/vscode-dark-modern.css')); // VS Code's Dark Modern variables
        type = 'text/css';
      } else if (path.startsWith('/dist/')) {
        const file = join(extensionRoot, normalize(path).replace(/^(\.\.[/\\])+/, ''));
        if (existsSync(file)) body = readFileSync(file);
        type = path.endsWith('.css') ? 'text/css' : 'text/javascript';
      }
      if (body === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

export function fakeHost(): void {
  const w = window as unknown as Record<string, unknown>;
  w.__posted = [];
  w.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => (w.__violations as string[]).push(`${e.violatedDirective} ${e.blockedURI}`));
  w.acquireVsCodeApi = () => ({
    postMessage: (m: unknown) => (w.__posted as unknown[]).push(JSON.parse(JSON.stringify(m))),
    getState: () => null,
    setState: () => {},
  });
}

export const CHROMIUM = process.env.AGENTLS_CHROMIUM ?? '/usr/bin/chromium';

/** Chromium (headless) on a fresh page server, with the VS Code stand-in in every page; the page's
 * console errors and uncaught errors are pushed to `errors`. Not yet at the panel: goto it. */
export async function openPanel(
  options: BrowserContextOptions,
  errors: string[],
): Promise<{ browser: Browser; page: Page; http: { server: Server; origin: string } }> {
  const http = await serve();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const context = await browser.newContext(options);
  await context.addInitScript(fakeHost);
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { browser, page, http };
}
