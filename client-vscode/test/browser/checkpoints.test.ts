// Checkpoints in the panel, in a real browser (Chromium, as panel.test.ts): a user message's
// Restore button asks the extension for a preview (agent/revert dryRun), the form shows the files,
// the conflicts and the commands not undone, a scope change asks again (a stale answer is
// dropped), Restore posts the revert; after it the reloaded transcript hides the undone turn, the
// prompt box holds the message and Redo posts agent/unrevert until the next prompt.
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMessage, PanelMessage } from '../../src/model/messages';
import { viewFromMessages } from '../../src/model/transcript';
import { extensionRoot } from '../support/fixture';
import { CHROMIUM, openPanel } from '../support/browserPanel';
import type { MessageInfo } from '../../src/protocol/generated';


const message = (id: string, role: 'user' | 'assistant', text: string, reverted = false): MessageInfo =>
  ({ id, role, createdAt: 1, parts: [{ type: 'text', text }], ...(reverted ? { reverted } : {}) }) as MessageInfo;
const HISTORY = [
  message('u1', 'user', 'add a parser'),
  message('a1', 'assistant', 'Added parse() to calc.py.'),
  message('u2', 'user', 'now the tests'),
  message('a2', 'assistant', 'Wrote test_calc.py.'),
];
const state = (messages: MessageInfo[]): HostMessage => ({
  type: 'state',
  state: { connection: 'running', sessions: [], activeSessionId: 's', view: viewFromMessages('s', messages) },
});

describe.skipIf(!existsSync(CHROMIUM))('checkpoints in the panel (Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let http: { server: Server; origin: string };
  const errors: string[] = [];
  const send = (m: HostMessage): Promise<void> => page.evaluate((x) => window.postMessage(x, '*'), m);
  const posted = (): Promise<PanelMessage[]> => page.evaluate(() => (window as unknown as { __posted: PanelMessage[] }).__posted);
  const ofType = async (type: string): Promise<PanelMessage[]> => (await posted()).filter((m) => m.type === type);
  const form = () => page.getByRole('group', { name: 'Restore to before this message' });

  beforeAll(async () => {
    expect(existsSync(join(extensionRoot, 'dist/webview.js')), 'dist/webview.js: run `npm run bundle` first').toBe(true);
    ({ browser, page, http } = await openPanel({ viewport: { width: 520, height: 800 } }, errors));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.server.close(resolve));
  });

  it('offers Restore on each user message and previews what it touches', async () => {
    await page.goto(`${http.origin}/panel.html`);
    await expect.poll(posted).toContainEqual({ type: 'ready' });
    await send(state(HISTORY));
    const buttons = page.getByRole('button', { name: 'Restore to before this message' });
    await expect.poll(() => buttons.count()).toBe(2);
    // The button's label is CSS: the message's text is still only its text.
    expect(await page.locator('.message.user').first().textContent()).not.toContain('Restore');
    await buttons.first().click();
    await expect.poll(() => ofType('revert-preview')).toEqual([{ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'both' }]);
    await expect.poll(() => form().textContent()).toContain('Checking what it would touch');
    expect(await form().getByRole('button', { name: 'Restore', exact: true }).isDisabled()).toBe(true);
    await send({
      type: 'revert-preview',
      sessionId: 's',
      messageId: 'u1',
      scope: 'both',
      preview: {
        files: ['file:///w/calc.py', 'file:///w/my%20tests/test_calc.py'],
        conflicts: [{ path: 'notes.md', before: 'a\n', agent: 'b\n', current: 'c\n' }],
        bashNotUndone: true,
        bashCommands: ['make build'],
      },
    });
    await expect.poll(() => form().textContent()).toContain('Files restored:');
    const text = (await form().textContent()) ?? '';
    // The server's file uris, as paths.
    expect(await form().locator('.restore-files li').allTextContents()).toEqual(['/w/calc.py', '/w/my tests/test_calc.py']);
    expect(text).toContain('notes.md');
    expect(text).toContain('not overwritten');
    expect(text).toContain('make build');
    expect(text).toContain('everything after it leave the conversation');
    expect(await form().getByRole('button', { name: 'Code and conversation' }).getAttribute('aria-pressed')).toBe('true');
  });

  it('asks again for another scope and drops the stale answer', async () => {
    await form().getByRole('button', { name: 'Code only' }).click();
    await expect.poll(() => ofType('revert-preview')).toHaveLength(2);
    expect((await ofType('revert-preview'))[1]).toEqual({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'code' });
    // The answer to the earlier scope arrives late: the form still waits for its own.
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'both', preview: { files: ['stale.py'] } });
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'code', preview: { files: ['calc.py'], bashNotUndone: false } });
    await expect.poll(() => form().textContent()).toContain('Files restored:');
    const text = (await form().textContent()) ?? '';
    expect(text).not.toContain('stale.py');
    expect(text).not.toContain('leave the conversation');
    expect(await form().getByRole('button', { name: 'Code only' }).getAttribute('aria-pressed')).toBe('true');
    // Cancel closes the form; the button is back.
    await form().getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => form().count()).toBe(0);
  });

  it('shows a refusal in the form', async () => {
    await page.getByRole('button', { name: 'Restore to before this message' }).nth(1).click();
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u2', scope: 'both', error: 'the session is busy' });
    await expect.poll(() => form().textContent()).toContain('the session is busy');
    expect(await form().getByRole('button', { name: 'Restore', exact: true }).isDisabled()).toBe(true);
    await form().getByRole('button', { name: 'Cancel' }).click();
  });

  it('restores both: the turn leaves the transcript, the prompt box holds it, Redo until the next prompt', async () => {
    await page.getByRole('button', { name: 'Restore to before this message' }).nth(1).click();
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u2', scope: 'both', preview: { files: ['test_calc.py'], prompt: 'now the tests' } });
    const confirm = form().getByRole('button', { name: 'Restore', exact: true });
    await expect.poll(() => confirm.isDisabled()).toBe(false);
    await confirm.click();
    await expect.poll(() => ofType('revert')).toEqual([{ type: 'revert', sessionId: 's', messageId: 'u2', scope: 'both' }]);
    // What the extension does after agent/revert: the reloaded history, the result, the prompt.
    await send(state([HISTORY[0], HISTORY[1], message('u2', 'user', 'now the tests', true), message('a2', 'assistant', 'Wrote test_calc.py.', true)]));
    await send({ type: 'reverted', sessionId: 's', messageId: 'u2', scope: 'both', result: { files: ['test_calc.py'], prompt: 'now the tests' } });
    await send({ type: 'focus-prompt', text: 'now the tests' });
    await expect.poll(() => page.locator('#prompt').inputValue()).toBe('now the tests');
    await expect.poll(() => page.getByText('Wrote test_calc.py.').isVisible()).toBe(false);
    expect(await page.getByText('Added parse() to calc.py.').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Restore to before this message' }).count()).toBe(1);
    const redo = page.getByRole('button', { name: 'Redo: undo the restore' });
    await expect.poll(() => redo.isVisible()).toBe(true);
    expect(await page.locator('.redo-bar').textContent()).toContain('1 file restored');
    await redo.click();
    await expect.poll(() => ofType('unrevert')).toEqual([{ type: 'unrevert', sessionId: 's' }]);
    // A failed redo gives the button back; a prompt sent ends the redo.
    await send({ type: 'unreverted', sessionId: 's', error: 'nothing to redo' });
    await expect.poll(() => redo.isDisabled()).toBe(false);
    await send({ type: 'prompt-sent', sessionId: 's', text: 'now the tests, with pytest' });
    await expect.poll(() => redo.isVisible()).toBe(false);
  });

  it('hides Redo once it went through, and takes the message back out of the prompt box', async () => {
    await send({ type: 'reverted', sessionId: 's', messageId: 'u1', scope: 'conversation', result: { files: [], prompt: 'add a parser' } });
    await send({ type: 'focus-prompt', text: 'add a parser' });
    const redo = page.getByRole('button', { name: 'Redo: undo the restore' });
    await expect.poll(() => redo.isVisible()).toBe(true);
    expect(await page.locator('.redo-bar').textContent()).toContain('Conversation restored.');
    await redo.click();
    await send({ type: 'unreverted', sessionId: 's', result: { files: [], messageIds: ['u1', 'a1'] } });
    await expect.poll(() => redo.isVisible()).toBe(false);
    expect(await page.locator('#prompt').inputValue()).toBe('');
    // A prompt box the user changed since is left alone.
    await send({ type: 'reverted', sessionId: 's', messageId: 'u1', scope: 'both', result: { files: [], prompt: 'add a parser' } });
    await page.locator('#prompt').fill('add a parser, with tests');
    await redo.click();
    await send({ type: 'unreverted', sessionId: 's', result: { files: [], messageIds: ['u1', 'a1'] } });
    await expect.poll(() => redo.isVisible()).toBe(false);
    expect(await page.locator('#prompt').inputValue()).toBe('add a parser, with tests');
  });

  it('closes the form after a code-only restore, and counts the files left to the merge editor', async () => {
    await page.getByRole('button', { name: 'Restore to before this message' }).first().click();
    await form().getByRole('button', { name: 'Code only' }).click();
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u1', scope: 'code', preview: { files: [], conflicts: [{ path: 'file:///w/calc.py', before: 'a', agent: 'b', current: 'c' }] } });
    await expect.poll(() => form().locator('.restore-conflicts li').allTextContents()).toEqual(['/w/calc.py']);
    await form().getByRole('button', { name: 'Restore', exact: true }).click();
    await expect.poll(() => form().getByRole('button', { name: 'Restoring…' }).count()).toBe(1);
    // The extension reloads the (unchanged) transcript, then says it is done.
    await send(state(HISTORY));
    await send({ type: 'reverted', sessionId: 's', messageId: 'u1', scope: 'code', result: { files: [], conflicts: [{ path: 'file:///w/calc.py', before: 'a', agent: 'b', current: 'c' }] } });
    await expect.poll(() => form().count()).toBe(0);
    expect(await page.locator('.redo-bar').textContent()).toContain('0 files restored. 1 file you changed since is in the merge editor.');
    await send({ type: 'prompt-sent', sessionId: 's', text: 'next' });
  });

  it('shows a conversation restored to before its first message as empty', async () => {
    await send(state(HISTORY.map((m) => ({ ...m, reverted: true }))));
    await expect.poll(() => page.locator('#transcript .empty').isVisible()).toBe(true);
    await send(state(HISTORY));
    await expect.poll(() => page.getByRole('button', { name: 'Restore to before this message' }).count()).toBe(2);
    expect(await page.locator('#transcript .empty').count()).toBe(0);
  });

  it('shows the messages a compaction summarized on demand, with Restore on their user messages', async () => {
    const summary = { id: 'sum', role: 'user', createdAt: 2, parts: [{ type: 'summary', text: 'A parser and its tests were added.', summarizedMessages: 4 }] } as MessageInfo;
    await send(state([summary, message('u3', 'user', 'now the docs'), message('a3', 'assistant', 'Wrote README.md.')]));
    const block = page.locator('#transcript > details.earlier');
    await expect.poll(() => block.count()).toBe(1);
    // First in the transcript, collapsed: only the recent user message has its Restore button.
    expect(await page.locator('#transcript > *').first().evaluate((e) => e.classList.contains('earlier'))).toBe(true);
    expect(await block.evaluate((e) => (e as HTMLDetailsElement).open)).toBe(false);
    expect(await page.getByRole('button', { name: 'Restore to before this message' }).count()).toBe(1);
    expect(await ofType('earlier-messages')).toEqual([]);
    await block.locator('summary').click();
    await expect.poll(() => ofType('earlier-messages')).toEqual([{ type: 'earlier-messages', sessionId: 's' }]);
    await send({ type: 'earlier-messages', sessionId: 's', messages: HISTORY.map((m) => ({ ...m, summarized: true })) });
    await expect.poll(() => block.locator('.message.user').count()).toBe(2);
    expect(await block.textContent()).toContain('Wrote test_calc.py.');
    // Read-only: no fork on the old answers; Restore on the old user messages, the same flow.
    expect(await block.getByRole('button', { name: /fork/i }).count()).toBe(0);
    const old = block.getByRole('button', { name: 'Restore to before this message' });
    expect(await old.count()).toBe(2);
    await old.nth(1).click();
    await expect.poll(() => ofType('revert-preview')).toContainEqual({ type: 'revert-preview', sessionId: 's', messageId: 'u2', scope: 'both' });
    await send({ type: 'revert-preview', sessionId: 's', messageId: 'u2', scope: 'both', preview: { files: ['file:///w/test_calc.py'] } });
    const confirm = form().getByRole('button', { name: 'Restore', exact: true });
    await expect.poll(() => confirm.isDisabled()).toBe(false);
    await confirm.click();
    await expect.poll(() => ofType('revert')).toContainEqual({ type: 'revert', sessionId: 's', messageId: 'u2', scope: 'both' });
    // The reloaded transcript has no summary in force: no block, the old conversation is back.
    const back = [HISTORY[0], HISTORY[1], message('u2', 'user', 'now the tests', true), { ...summary, reverted: true }];
    await send(state(back));
    await send({ type: 'reverted', sessionId: 's', messageId: 'u2', scope: 'both', result: { files: ['file:///w/test_calc.py'], prompt: 'now the tests' } });
    await expect.poll(() => block.count()).toBe(0);
    expect(await page.getByText('Added parse() to calc.py.').isVisible()).toBe(true);
    await send({ type: 'prompt-sent', sessionId: 's', text: 'next' });
  });

  it('broke no Content-Security-Policy rule and logged no error', async () => {
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
