// A calm transcript in a real browser (Chromium) at VS Code's default sidebar width: tool cards
// are one line until opened (by click or keyboard), a call the user rejected says "Rejected" with
// their note (not "failed"), todo updates fold into the pinned list, a sub-agent's card shows its
// description, steps and result (no JSON, no session id, no "task task:"), paths are relative to
// the workspace and open the file.
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

const child = { sessionId: 'ses_child123', parentSessionId: 's', parentCallId: 'call_task', agent: 'explorer' };

describe.skipIf(!existsSync(CHROMIUM))('a calm transcript (Chromium, 300 px)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (message: HostMessage): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), message);
  const event = (e: AgentEvent): Promise<void> => send({ type: 'event', event: e });
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const card = (callId: string) => page.locator(`details.tool[data-call-id="${callId}"]`);

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 300, height: 720 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('shows a turn of reads, todo updates, a rejected edit and a sub-agent calmly', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: emptyView('s') } });
    await send({ type: 'code-context', root: '/work/demo' });
    await event({ type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'fix add' });
    await event({ type: 'tool-call', sessionId: 's', callId: 'call_read', tool: 'read', title: 'read /work/demo/calc.py', input: { path: '/work/demo/calc.py' } });
    await event({ type: 'tool-result', sessionId: 's', callId: 'call_read', tool: 'read', output: '1\tdef add(a, b):\n2\t    return a - b', isError: false, status: 'completed' });
    for (const [n, done] of [[1, 0], [2, 1]] as const) {
      const todos = [
        { content: 'Fix add', status: done ? 'completed' : 'in_progress' },
        { content: 'Run the tests', status: done ? 'in_progress' : 'pending' },
      ] as const;
      await event({ type: 'tool-call', sessionId: 's', callId: `call_todo${n}`, tool: 'todowrite', title: 'todowrite', input: { todos } });
      await event({ type: 'todo', sessionId: 's', todos: [...todos] });
      await event({ type: 'tool-result', sessionId: 's', callId: `call_todo${n}`, tool: 'todowrite', output: 'ok', isError: false, status: 'completed' });
    }
    await event({ type: 'tool-call', sessionId: 's', callId: 'call_edit', tool: 'edit', title: 'edit /work/demo/calc.py', input: { path: '/work/demo/calc.py', old_string: 'a - b', new_string: 'a + b' } });
    await event({ type: 'permission-request', sessionId: 's', requestId: 'r1', callId: 'call_edit', tool: 'edit', title: 'Edit calc.py', input: {} });
    await event({ type: 'permission-resolved', sessionId: 's', requestId: 'r1', decision: 'reject' });
    await event({
      type: 'tool-result', sessionId: 's', callId: 'call_edit', tool: 'edit', isError: true, status: 'error',
      output: 'The user rejected this edit call (Edit calc.py). Nothing was done.\nTheir feedback: keep the minus, fix the test instead',
    });
    await event({ type: 'tool-call', sessionId: 's', callId: 'call_task', tool: 'task', title: 'task: find the tests', input: { description: 'find the tests', prompt: 'Which tests cover add?', agent: 'explorer' } });
    await event({ type: 'turn-start', messageId: 'c1', prompt: 'Which tests cover add?', ...child });
    await event({ type: 'tool-call', callId: 'call_grep', tool: 'grep', title: 'grep add', input: { pattern: 'add' }, ...child });
    await event({ type: 'tool-result', callId: 'call_grep', tool: 'grep', output: 'tests/test_calc.py:3', isError: false, status: 'completed', ...child });
    await event({ type: 'turn-end', finishReason: 'end_turn', messageId: 'c2', ...child });
    await event({
      type: 'tool-result', sessionId: 's', callId: 'call_task', tool: 'task', isError: false, status: 'completed',
      output: 'The test is tests/test_calc.py:3.\n\n[sub-agent explorer, session ses_child123: 1 tool call (grep)]',
    });
    await event({ type: 'turn-end', sessionId: 's', messageId: 'm2', finishReason: 'end_turn' });
    await expect.poll(() => card('call_task').locator(':scope > summary .tool-status').textContent()).toBe('done');
  });

  it('keeps every card to one closed line, with the file path relative and a link', async () => {
    const cards = page.locator('#transcript > details.tool');
    expect(await cards.evaluateAll((ds) => ds.map((d) => (d as HTMLDetailsElement).open))).toEqual([false, false, false]);
    for (const summary of await cards.locator(':scope > summary').all()) {
      expect((await summary.boundingBox())?.height).toBeLessThan(30);
    }
    const title = card('call_read').locator('.tool-title');
    expect(await title.textContent()).toBe('calc.py');
    await title.locator('a.path-link').click();
    expect((await posted()).filter((m) => m.type === 'open-path')).toEqual([{ type: 'open-path', path: 'calc.py' }]);
    expect(await card('call_read').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false); // the link opened the file, not the card
    // The result is a key press away.
    await card('call_read').locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await card('call_read').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await card('call_read').locator('.tool-output').textContent()).toContain('return a - b');
  });

  it('says Rejected with the user’s note, not failed', async () => {
    const rejected = card('call_edit');
    expect(await rejected.locator('.tool-status').textContent()).toBe('Rejected');
    expect(await rejected.getAttribute('class')).toContain('status-rejected');
    expect(await rejected.getAttribute('class')).not.toContain('status-error');
    await rejected.locator('summary').click();
    expect(await rejected.locator('.rejected-note').textContent()).toBe('Your note: keep the minus, fix the test instead');
    expect(await rejected.locator('.tool-output').count()).toBe(0);
    expect(await page.locator('#transcript').textContent()).not.toContain('failed');
  });

  it('folds the todo updates into the pinned list', async () => {
    expect(await page.locator('details.tool[data-tool="todowrite"]').count()).toBe(0);
    expect(await page.locator('#pinned .todo-summary').textContent()).toBe('Todo · 1 of 2 done · Run the tests');
  });

  it('shows a sub-agent by its description, steps and result, without JSON or its session', async () => {
    const task = card('call_task');
    const line = await task.locator(':scope > summary').textContent();
    expect(line).toContain('Sub-agent explorer');
    expect(line).toContain('find the tests');
    expect(line).not.toContain('task task');
    await task.locator(':scope > summary').click();
    const body = (await task.locator(':scope > .tool-body').textContent()) ?? '';
    expect(body).toContain('Which tests cover add?'); // the step the sub-agent was given
    expect(await task.locator('.subagent details.tool[data-tool="grep"]').count()).toBe(1);
    expect(await task.locator('.subagent-result').textContent()).toContain('The test is tests/test_calc.py:3.');
    expect(await task.locator('.subagent-result a.path-link').getAttribute('data-line')).toBe('3');
    // A file listing's paths are links too (grep's with their line).
    const grep = task.locator('.subagent details.tool[data-tool="grep"]');
    await grep.locator(':scope > summary').click();
    expect(await grep.locator('.tool-output a.path-link').evaluateAll((as) => as.map((a) => [(a as HTMLElement).dataset.path, (a as HTMLElement).dataset.line]))).toEqual([
      ['tests/test_calc.py', '3'],
    ]);
    expect(body).not.toContain('ses_');
    expect(body).not.toContain('[sub-agent');
    expect(body).not.toContain('{');
    mkdirSync(join(extensionRoot, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: join(extensionRoot, 'test-artifacts', 'panel-toolcards.png'), fullPage: true });
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
