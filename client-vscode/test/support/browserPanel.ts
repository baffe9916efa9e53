// The panel in a real browser: a local server for its page and the built webview, and a stand-in
// for VS Code's webview API (what the panel posts is kept in window.__posted, CSP violations in
// window.__violations). Shared by the browser tests.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
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
