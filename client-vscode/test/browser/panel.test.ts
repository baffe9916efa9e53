// The panel's webview in a real browser (Debian's Chromium, driven by playwright-core): the built
// dist/webview.js in the page the extension serves, under its Content-Security-Policy, with a fake
// extension host that replays the event stream recorded from a real `agentls serve` run
// (test/fixtures/demo-session.json, checked against ../schemas first). Screenshots go to
// test-artifacts/.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { emptyView, formatTokens, totalTokens, viewFromMessages } from '../../src/model/transcript';
import type { AgentEvent } from '../../src/protocol/generated';
import { panelHtml } from '../../src/webviewHtml';
import { extensionRoot, fixtureProblems, loadFixture } from '../support/fixture';

const CHROMIUM = process.env.AGENTLS_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(
    `SKIPPED: the panel's browser test needs Chromium at ${CHROMIUM} ` +
      '(sudo apt-get install -y chromium, or scripts/ensure-system-deps.sh as root; AGENTLS_CHROMIUM overrides the path)',
  );
}
const artifacts = join(extensionRoot, 'test-artifacts');
const fixture = loadFixture();
const session = fixture.sessions[0];
const sessionId = session.sessionId;
const events = fixture.events;
const indexOf = (pred: (e: AgentEvent) => boolean, from = 0): number => {
  const i = events.slice(from).findIndex(pred);
  if (i < 0) throw new Error('event not in the fixture');
  return from + i;
};
const firstToolCall = indexOf((e) => e.type === 'tool-call');
const bashRequest = indexOf((e) => e.type === 'permission-request' && e.tool === 'bash');
const editRequest = indexOf((e) => e.type === 'permission-request' && e.tool === 'edit');
const requestIdAt = (i: number): string => {
  const e = events[i];
  if (e.type !== 'permission-request') throw new Error('not a request');
  return e.requestId;
};

/** Text of an element as shown (markdown rendered: no backticks). */
const text = async (locator: Locator): Promise<string> => ((await locator.textContent()) ?? '').trim();
const rendered = (markdown: string): string => markdown.replace(/`/g, '');

const MIME: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.map': 'application/json',
  '.html': 'text/html',
};

/** Serves the page as the extension builds it, and dist/ as the webview's resources. */
function serve(): Promise<{ server: Server; origin: string }> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const origin = `http://${req.headers.host}`;
      const url = new URL(req.url ?? '/', origin);
      let body: string | Buffer | undefined;
      let path = url.pathname;
      if (path === '/favicon.ico') {
        res.writeHead(204).end();
        return;
      }
      if (path === '/panel.html') {
        body = panelHtml({
          cspSource: origin,
          nonce: 'TestNonce' + Math.random().toString(36).slice(2),
          scriptUri: `${origin}/dist/webview.js`,
          styleUri: `${origin}/dist/webview.css`,
        });
      } else if (path === '/theme.css') {
        body = readFileSync(join(extensionRoot, 'test/browser/vscode-dark-modern.css'));
        path = 'theme.css';
      } else if (path.startsWith('/dist/')) {
        const file = join(extensionRoot, normalize(path).replace(/^(\.\.[/\\])+/, ''));
        if (existsSync(file)) body = readFileSync(file);
      }
      if (body === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': MIME[extname(path)] ?? 'text/html', 'cache-control': 'no-store' });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, origin: `http://127.0.0.1:${port}` });
    });
  });
}

/** The fake extension host, installed before the page's script runs. */
function fakeHost(): void {
  const w = window as unknown as Record<string, unknown>;
  w.__posted = [];
  w.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    (w.__violations as string[]).push(`${e.violatedDirective} ${e.blockedURI}`);
  });
  w.acquireVsCodeApi = () => ({
    postMessage: (m: unknown) => (w.__posted as unknown[]).push(JSON.parse(JSON.stringify(m))),
    getState: () => JSON.parse(sessionStorage.getItem('vscode-state') ?? 'null'),
    setState: (s: unknown) => sessionStorage.setItem('vscode-state', JSON.stringify(s)),
  });
}

describe.skipIf(!haveChromium)('the panel in Chromium, replaying a recorded agentls serve run', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];

  const send = (message: HostMessage): Promise<void> =>
    page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = (): Promise<PanelMessage[]> =>
    page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const clearPosted = (): Promise<void> =>
    page.evaluate(() => {
      (window as unknown as { __posted: unknown[] }).__posted = [];
    });
  let replayed = 0;
  /** Replays recorded events up to (not including) index `end`, pacing the streamed text. */
  const replayTo = async (end: number): Promise<void> => {
    for (; replayed < end; replayed++) {
      const event = events[replayed];
      await send({ type: 'event', event });
      if (event.type === 'text-delta') await page.waitForTimeout(8);
    }
  };
  const open = async (): Promise<void> => {
    await page.goto(`${http.origin}/panel.html`);
    await page.addStyleTag({ url: `${http.origin}/theme.css` });
    await expect.poll(posted).toContainEqual({ type: 'ready' });
  };

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    mkdirSync(artifacts, { recursive: true });
    http = await serve();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking'],
    });
    const context = await browser.newContext({ viewport: { width: 420, height: 900 }, deviceScaleFactor: 2 });
    await context.addInitScript(fakeHost);
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('replays a fixture that matches ../schemas', () => {
    expect(fixtureProblems(fixture)).toEqual([]);
    expect(events.length).toBeGreaterThan(20);
  });

  it('loads under its Content-Security-Policy and asks the host for the state', async () => {
    await open();
    expect(await page.locator('.empty').textContent()).toContain('Ask agentls');
    await expect.poll(() => page.locator('#send').isDisabled()).toBe(true); // not connected yet
  });

  it('renders the streamed markdown as it arrives', async () => {
    await send({ type: 'state', state: { connection: 'running', sessions: fixture.sessions, activeSessionId: sessionId, view: emptyView(sessionId, session.title) } });
    await send({ type: 'prompt-sent', sessionId, text: fixture.prompt });
    await expect.poll(() => page.locator('.message.user.queued').textContent()).toContain(fixture.prompt);
    await replayTo(3); // turn-start and the first two deltas
    const first = page.locator('.message.assistant').first();
    const twoDeltas = events.slice(1, 3).map((e) => (e.type === 'text-delta' ? e.delta : '')).join('');
    expect(twoDeltas.length).toBeGreaterThan(0);
    await expect.poll(() => text(first)).toBe(twoDeltas.trim());
    await expect.poll(() => page.locator('.message.user.queued').count()).toBe(0);
    await replayTo(firstToolCall);
    await expect.poll(() => text(first)).toBe("I'll start by running the test suite to see what fails.");
    await expect.poll(() => page.locator('#stop').isEnabled()).toBe(true);
    await expect.poll(() => page.locator('.working').count()).toBe(1);
  });

  it('shows a command that waits for approval exactly, and posts the answer', async () => {
    await replayTo(bashRequest + 1);
    const card = page.locator('.tool.needs-approval');
    await expect.poll(() => card.locator('pre.command.exact').textContent()).toBe('python3 -m unittest -v 2>&1');
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Waiting for your approval');
    await clearPosted();
    await card.locator('button[data-decision="once"]').click();
    expect(await posted()).toEqual([{ type: 'approve', sessionId, requestId: requestIdAt(bashRequest), decision: 'once' }]);
  });

  it('shows a proposed edit as a diff, with Review diff / Accept / Always / Reject', async () => {
    await replayTo(editRequest + 1);
    const card = page.locator('.tool.needs-approval');
    await expect.poll(() => card.getAttribute('data-tool')).toBe('edit');
    await expect.poll(() => card.locator('.diff .add').textContent()).toContain('ordered[middle - 1] + ordered[middle]');
    await expect.poll(() => card.locator('.diff .del').textContent()).toContain('ordered[middle] + ordered[middle + 1]');
    expect(await card.locator('.buttons button').allTextContents()).toEqual([
      'Review diff', 'Accept', 'Always', 'Always in this project', 'Reject…',
    ]);
    // What "always" allows, in the server's words: shown on the card and on both buttons.
    const label = 'Always allow edits of calc.py';
    expect(await text(card.locator('.permission-always'))).toBe(label);
    expect(await card.locator('button[data-decision="always"][data-scope="session"]').getAttribute('title')).toBe(
      `${label}, for the rest of this session`,
    );
    expect(await card.locator('button[data-scope="project"]').getAttribute('title')).toContain(`${label}, in every session of this project`);
    // The markdown between the tool cards: inline code renders as code.
    await expect.poll(() => page.locator('.message.assistant code', { hasText: 'test_median_even' }).count()).toBe(1);
    await page.screenshot({ path: join(artifacts, 'panel.png') });
    await clearPosted();
    await card.locator('button[data-action="open-diff"]').click();
    expect(await posted()).toEqual([{ type: 'open-diff', requestId: requestIdAt(editRequest) }]);
  });

  it('asks for optional feedback on reject, and answers only once', async () => {
    const card = page.locator('.tool.needs-approval');
    await clearPosted();
    await card.locator('button[data-decision="reject"]').click();
    const feedback = card.locator('input.feedback');
    await expect.poll(() => feedback.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('Use statistics.median instead');
    await page.keyboard.press('Enter');
    expect(await posted()).toEqual([
      { type: 'approve', sessionId, requestId: requestIdAt(editRequest), decision: 'reject', feedback: 'Use statistics.median instead' },
    ]);
    await expect.poll(() => card.locator('.progress').textContent()).toBe('Sending your answer…');
    expect(await card.locator('button').count()).toBe(0);
  });

  it('works from the keyboard: Always in this project on the next command', async () => {
    await replayTo(indexOf((e) => e.type === 'permission-request', editRequest + 1) + 1);
    const card = page.locator('.tool.needs-approval');
    await expect.poll(() => card.getAttribute('data-tool')).toBe('bash');
    // A command that runs code: "always" is that exact line only, and the card says so.
    expect(await text(card.locator('.permission-always'))).toBe('Always allow exactly `python3 -m unittest -v 2>&1`');
    await clearPosted();
    await card.locator('button[data-decision="once"]').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-scope'))).toBe('session');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-scope'))).toBe('project');
    await page.keyboard.press('Enter');
    expect(await posted()).toEqual([
      { type: 'approve', sessionId, requestId: requestIdAt(replayed - 1), decision: 'always', scope: 'project' },
    ]);
  });

  it('finishes the turn: every card resolved, idle, with the session’s tokens', async () => {
    await replayTo(events.length);
    await expect.poll(() => page.locator('.needs-approval').count()).toBe(0);
    await expect.poll(() => page.locator('.tool').count()).toBe(4);
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Idle');
    await expect.poll(() => page.locator('#stop').isDisabled()).toBe(true);
    await expect.poll(() => page.locator('.working').count()).toBe(0);
    const tokens = formatTokens(totalTokens(fixture.sessions[0].usage));
    await expect.poll(() => page.locator('#usage .cost-total').textContent()).toBe(`$0.00 · ${tokens} tokens`);
    await expect.poll(() => text(page.locator('.message.assistant').last())).toBe(rendered(fixture.result.text));
    expect(await page.locator('.permission.resolved').allTextContents()).toEqual(['Allowed once', 'Allowed once', 'Allowed once']);
  });

  it('expands a tool card to show its output', async () => {
    const card = page.locator('.tool').first();
    expect(await card.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    await expect.poll(() => card.locator('.tool-output').isVisible()).toBe(false);
    await card.locator('summary').click();
    await expect.poll(() => card.locator('.tool-output').isVisible()).toBe(true);
    expect(await card.locator('.tool-output').textContent()).toContain('FAILED (failures=1)');
    expect(await card.locator('.tool-status').textContent()).toBe('done');
  });

  it('sends with Enter, new line with Shift+Enter, shows a prompt sent while busy as queued, stops', async () => {
    await clearPosted();
    await page.locator('#prompt').click();
    await page.keyboard.type('thanks');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('one more thing');
    expect(await page.locator('#prompt').inputValue()).toBe('thanks\none more thing');
    expect(await posted()).toEqual([]);
    await page.keyboard.press('Enter');
    expect(await posted()).toEqual([{ type: 'prompt', text: 'thanks\none more thing' }]);
    expect(await page.locator('#prompt').inputValue()).toBe('');
    await send({ type: 'event', event: { type: 'turn-start', sessionId, messageId: 'msg_x', prompt: 'thanks\none more thing' } });
    await send({ type: 'prompt-sent', sessionId, text: 'and then this' });
    await expect.poll(() => page.locator('.message.user.queued .badge').textContent()).toBe('queued');
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Working… · 1 queued');
    await clearPosted();
    await page.locator('#stop').click();
    await send({ type: 'show-history' }); // the title bar's History action
    await page.locator('#new-session').click();
    expect(await posted()).toEqual([{ type: 'cancel' }, { type: 'new-session' }]);
  });

  it('survives a reload: the host sends the history again, the draft and open cards come back', async () => {
    await page.locator('#prompt').fill('half a thought');
    await page.locator('#prompt').dispatchEvent('input');
    await clearPosted();
    await page.reload();
    await page.addStyleTag({ url: `${http.origin}/theme.css` });
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({
      type: 'state',
      state: { connection: 'running', sessions: fixture.sessions, activeSessionId: sessionId, view: viewFromMessages(sessionId, fixture.messages, session) },
    });
    await expect.poll(() => page.locator('.tool').count()).toBe(4);
    expect(await page.locator('#prompt').inputValue()).toBe('half a thought');
    expect(await page.locator('.tool').first().evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true);
    expect(await text(page.locator('.message.assistant').last())).toBe(rendered(fixture.result.text));
    expect(await page.locator('#app').getAttribute('data-session')).toBe(sessionId);
    await page.screenshot({ path: join(artifacts, 'panel-reloaded.png') });
  });

  it('shows when the server is down and disables sending', async () => {
    await send({ type: 'state', state: { connection: 'restarting', connectionMessage: 'The running turn was lost.', sessions: [], view: emptyView(sessionId) } });
    await expect.poll(() => page.locator('#setup').textContent()).toContain('restarting');
    expect(await page.locator('#send').isDisabled()).toBe(true);
  });

  it('asks for the MCP servers when it loads and lists them, a failed one open with its error', async () => {
    expect(await posted()).toContainEqual({ type: 'mcp-status' });
    expect(await page.locator('#mcp').isHidden()).toBe(true); // none yet
    await send({
      type: 'mcp',
      servers: [
        { name: 'broken', transport: 'stdio', target: 'srv', status: 'failed', error: "MCP server 'broken' failed to start\n  giving up", tools: [] },
        { name: 'test', transport: 'stdio', target: 'srv', status: 'running', tools: [{ name: 'mcp__test__echo', remoteName: 'echo', readOnlyHint: true }] },
      ],
    });
    await expect.poll(() => text(page.locator('#mcp > summary'))).toBe('MCP: 2 servers · 1 failed');
    expect(await page.locator('#mcp').evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true);
    expect(await text(page.locator('[data-server="test"] .mcp-detail'))).toBe('running · 1 tool');
    expect(await text(page.locator('[data-server="broken"] .mcp-error'))).toContain('giving up');
  });

  it('pins the todo list, switches plan mode, shows a plan to approve, steers with Enter and queues with Alt+Enter', async () => {
    await send({ type: 'state', state: { connection: 'running', sessions: fixture.sessions, activeSessionId: sessionId, view: emptyView(sessionId, session.title) } });
    await expect.poll(() => page.locator('#pinned').isHidden()).toBe(true);
    await clearPosted();
    await page.locator('#mode').click();
    expect(await posted()).toEqual([{ type: 'set-mode', mode: 'plan' }]);
    await send({ type: 'event', event: { type: 'mode', sessionId, mode: 'plan' } });
    await expect.poll(() => text(page.locator('#pinned .mode-badge'))).toBe('Plan mode');
    expect(await page.locator('#mode').getAttribute('aria-pressed')).toBe('true');
    await send({ type: 'event', event: { type: 'turn-start', sessionId, messageId: 'msg_p', prompt: 'plan a fix' } });
    const todos = [
      { content: 'read calc.py', status: 'completed' as const },
      { content: 'write the plan', status: 'in_progress' as const },
      { content: 'fix add()', status: 'pending' as const },
    ];
    await send({ type: 'event', event: { type: 'todo', sessionId, todos } });
    await expect.poll(() => text(page.locator('#pinned .todo-summary'))).toBe('Todo · 1 of 3 done · write the plan');
    await page.locator('#pinned > summary').click();
    expect(await page.locator('#pinned .todo-content').allTextContents()).toEqual(todos.map((t) => t.content));
    expect(await page.locator('#pinned .todo.status-completed').count()).toBe(1);
    // The plan waits for approval: rendered as markdown, with its own buttons.
    const plan = '1. Change `add` to return **a + b**\n2. Run the tests';
    await send({ type: 'event', event: { type: 'tool-call', sessionId, callId: 'call_plan', tool: 'exit_plan', input: { plan }, title: 'Plan ready for approval' } });
    await send({
      type: 'event',
      event: { type: 'permission-request', sessionId, requestId: 'perm_plan', callId: 'call_plan', tool: 'exit_plan', title: 'Approve the plan and start building', input: { plan }, sandboxed: false },
    });
    const card = page.locator('.tool.needs-approval[data-tool="exit_plan"]');
    await expect.poll(() => card.locator('.plan strong').textContent()).toBe('a + b');
    expect(await text(card.locator('button[data-decision="once"]'))).toBe('Approve plan');
    expect(await text(card.locator('button[data-decision="reject"]'))).toBe('Keep planning…');
    await page.screenshot({ path: join(artifacts, 'panel-plan-todo.png') });
    await clearPosted();
    await card.locator('button[data-decision="once"]').click();
    expect(await posted()).toEqual([{ type: 'approve', sessionId, requestId: 'perm_plan', decision: 'once' }]);
    // While the turn runs, Enter steers it and Alt+Enter queues for after it.
    expect(await page.locator('#prompt').getAttribute('placeholder')).toContain('Enter steers');
    await clearPosted();
    await page.locator('#prompt').fill('use the existing helper');
    await page.locator('#prompt').press('Enter');
    await page.locator('#prompt').fill('then update the docs');
    await page.locator('#prompt').press('Alt+Enter');
    expect(await posted()).toEqual([
      { type: 'prompt', text: 'use the existing helper', mode: 'steer' },
      { type: 'prompt', text: 'then update the docs' },
    ]);
    await send({ type: 'prompt-sent', sessionId, text: 'use the existing helper', steer: true });
    await expect.poll(() => page.locator('.message.user.queued .badge').textContent()).toBe('steering');
    await send({ type: 'event', event: { type: 'steer', sessionId, messageId: 'msg_s', prompt: 'use the existing helper' } });
    await expect.poll(() => page.locator('.message.user.queued').count()).toBe(0);
    expect(await text(page.locator('.message.user').last().locator('.badge'))).toBe('steered');
  });

  it('offers the /commands as one starts in the prompt box, and takes one with Tab', async () => {
    const box = page.locator('#prompt');
    await box.fill('');
    await clearPosted();
    await box.pressSequentially('/');
    expect(await posted()).toContainEqual({ type: 'list-commands' });
    await send({
      type: 'commands',
      commands: [
        { name: 'clear', description: 'Start a new session', source: 'builtin' },
        { name: 'compact', description: 'Compact the session now', source: 'builtin' },
        { name: 'review', description: 'Review a file for bugs', source: 'user' },
      ],
    });
    await expect.poll(() => page.locator('#commands .command-name').allTextContents()).toEqual(['/clear', '/compact', '/review']);
    await box.pressSequentially('re');
    await expect.poll(() => page.locator('#commands .command-name').allTextContents()).toEqual(['/review']);
    expect(await text(page.locator('#commands .command-description'))).toBe('Review a file for bugs');
    await box.press('Tab');
    expect(await box.inputValue()).toBe('/review ');
    expect(await page.locator('#commands').isHidden()).toBe(true);
    // Arrows choose, Escape closes, and Enter with the list closed sends.
    await box.fill('');
    await box.pressSequentially('/c');
    await expect.poll(() => page.locator('#commands .command').count()).toBe(2);
    await box.press('ArrowDown');
    expect(await text(page.locator('#commands .command.selected .command-name'))).toBe('/compact');
    await box.press('Escape');
    expect(await page.locator('#commands').isHidden()).toBe(true);
    await clearPosted();
    await box.press('Enter');
    expect(await posted()).toContainEqual(expect.objectContaining({ type: 'prompt', text: '/c' }));
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    const violations = await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
  });
});
