import { describe, expect, it } from 'vitest';
import { isPanelMessage } from '../../src/model/messages';
import { statusBarText } from '../../src/statusBar';
import { contentSecurityPolicy, panelHtml } from '../../src/webviewHtml';

describe('the panel page', () => {
  const html = panelHtml({
    cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
    nonce: 'abc123',
    scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js',
    styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.css',
  });

  it('has a strict Content-Security-Policy: nothing remote, scripts by nonce only, no inline style', () => {
    const csp = contentSecurityPolicy('https://x.example', 'n0nce');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-n0nce'");
    expect(csp).toContain('style-src https://x.example');
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(html).toContain('http-equiv="Content-Security-Policy"');
  });

  it('loads exactly one script, with the nonce, and no inline script or style', () => {
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="abc123" src="https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js">');
    expect(html).not.toMatch(/<style|style="/);
    expect(html).not.toMatch(/https?:\/\/(?!file\+\.vscode-resource)/);
  });

  it('labels its controls', () => {
    expect(html).toMatch(/<label[^>]*for="prompt"/);
    // Icon buttons are named by their label (the session list, set-up card and pickers come from
    // the script, tested in the browser: test/browser/layout.test.ts).
    for (const name of ['Send the prompt', 'Stop the running turn']) expect(html).toContain(`aria-label="${name}"`);
  });
});

describe('messages from the panel', () => {
  it('accepts the known shapes and nothing else', () => {
    expect(isPanelMessage({ type: 'ready' })).toBe(true);
    expect(isPanelMessage({ type: 'prompt', text: 'x' })).toBe(true);
    expect(isPanelMessage({ type: 'approve', sessionId: 's', requestId: 'r', decision: 'reject', feedback: 'no' })).toBe(true);
    expect(isPanelMessage({ type: 'approve', sessionId: 's', requestId: 'r', decision: 'maybe' })).toBe(false);
    expect(isPanelMessage({ type: 'approve', sessionId: 's', requestId: 'r', decision: 'always', scope: 'project' })).toBe(true);
    expect(isPanelMessage({ type: 'approve', sessionId: 's', requestId: 'r', decision: 'always', scope: 'machine' })).toBe(false);
    expect(isPanelMessage({ type: 'prompt', text: 5 })).toBe(false);
    expect(isPanelMessage({ type: 'rm -rf' })).toBe(false);
    expect(isPanelMessage('ready')).toBe(false);
    expect(isPanelMessage(null)).toBe(false);
  });
});

describe('the status bar', () => {
  it('says idle, working (with the tool), or waiting for approval, with the cost', () => {
    expect(statusBarText({ connection: 'running', busy: false, waitingForApproval: 0, costUsd: 0.5 }).text).toBe(
      '$(hubot) agentls · $0.50',
    );
    expect(
      statusBarText({ connection: 'running', busy: true, waitingForApproval: 0, runningTool: 'python3 -m unittest -v 2>&1', costUsd: 0 }).text,
    ).toBe('$(sync~spin) agentls: python3 -m unittest -v 2>&1 · $0.00');
    const waiting = statusBarText({ connection: 'running', busy: true, waitingForApproval: 2 });
    expect(waiting.text).toBe('$(bell-dot) agentls: approval needed');
    expect(waiting.attention).toBe(true);
    expect(waiting.tooltip).toContain('2 requests wait');
    expect(statusBarText({ connection: 'stopped', busy: false, waitingForApproval: 0 }).text).toContain('stopped');
    expect(statusBarText({ connection: 'running', busy: true, waitingForApproval: 0, runningTool: 'x'.repeat(100) }).text.length).toBeLessThan(70);
  });
});
