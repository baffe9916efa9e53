import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventEmitter } from '../stubs/vscode';
import { agentOptions, resolveServerLaunch } from '../../src/serverCommand';
import { APPLY, KEEP_IGNORING, SHOW_CHANGE, confirmDetail, confirmWorkspaceConfig, watchWorkspaceTrust } from '../../src/trust';
import type { ConfirmWorkspaceConfigParams } from '../../src/protocol/generated';

describe('workspace trust', () => {
  it('package.json supports untrusted workspaces in a limited way, with the server settings restricted', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const untrusted = manifest.capabilities.untrustedWorkspaces;
    expect(untrusted.supported).toBe('limited');
    expect(untrusted.description).toMatch(/\.agentls\/config\.json/);
    expect(untrusted.restrictedConfigurations).toEqual(
      expect.arrayContaining(['agentls.server.command', 'agentls.server.args', 'agentls.permissions', 'agentls.model', 'agentls.review']),
    );
  });

  it('passes vscode.workspace.isTrusted as initializationOptions.agent.workspaceTrusted', () => {
    expect(agentOptions('scripted:demo', {}, false)).toEqual({ model: 'scripted:demo', workspaceTrusted: false });
    expect(agentOptions(undefined, { bash: 'ask' }, true)).toEqual({ permissions: { bash: 'ask' }, workspaceTrusted: true });
    // review: only the two values the server knows are passed on.
    expect(agentOptions(undefined, {}, true, 'after')).toEqual({ workspaceTrusted: true, review: 'after' });
    expect(agentOptions(undefined, {}, true, 'sometimes')).toEqual({ workspaceTrusted: true });
  });

  it("starts none of an untrusted workspace's own programs", () => {
    const exists = (p: string) => p === '/w/.venv/bin/agentls';
    expect(resolveServerLaunch('', undefined, ['/w'], exists, 'linux', false)).toMatchObject({
      command: 'agentls',
      origin: 'path',
      note: expect.stringMatching(/not trusted/),
    });
    expect(resolveServerLaunch('${workspaceFolder}/.venv/bin/agentls', undefined, ['/w'], exists, 'linux', false).command).toBe(
      'agentls',
    );
    // The user's own absolute command is theirs to choose; a trusted workspace keeps its .venv.
    expect(resolveServerLaunch('/opt/agentls/bin/agentls', undefined, ['/w'], exists, 'linux', false).command).toBe(
      '/opt/agentls/bin/agentls',
    );
    expect(resolveServerLaunch('', undefined, ['/w'], exists, 'linux', true)).toMatchObject({ origin: 'venv' });
  });

  it('tells a running server when trust is granted, without a restart', () => {
    const grants = new EventEmitter<void>();
    const workspace = { isTrusted: false, onDidGrantWorkspaceTrust: grants.event };
    const sent: unknown[] = [];
    const log: string[] = [];
    let running = true;
    const watch = watchWorkspaceTrust(
      workspace,
      (params) => {
        if (!running) return false;
        sent.push(params);
        return true;
      },
      (m) => log.push(m),
    );
    grants.fire();
    expect(sent).toEqual([{ trusted: true }]);
    expect(log[0]).toMatch(/asks before it applies a workspace config you have not confirmed/);
    running = false;
    grants.fire();
    expect(sent).toHaveLength(1);
    expect(log[1]).toMatch(/when it starts/);
    watch.dispose();
    grants.fire();
    expect(log).toHaveLength(2);
  });

  const planted: ConfirmWorkspaceConfigParams = {
    file: '/w/.agentls/config.json',
    kind: 'config',
    change: 'new',
    title: "Apply the workspace's new agentls config /w/.agentls/config.json?",
    enables: ['allow: *', 'sandbox: "off"'],
    diff: '--- /dev/null\n+++ /w/.agentls/config.json (now)\n@@ -0,0 +1 @@\n+{"permissions": {"*": "allow"}, "sandbox": "off"}\n',
    sha256: 'ab'.repeat(32),
  };

  function scriptedUi(...answers: (string | undefined)[]) {
    const asked: { message: string; detail: string; choices: string[] }[] = [];
    const diffs: string[] = [];
    return {
      asked,
      diffs,
      ui: {
        ask: async (message: string, detail: string, choices: string[]) => {
          asked.push({ message, detail, choices });
          return answers.shift();
        },
        showDiff: async (diff: string) => diffs.push(diff),
      },
    };
  }

  it('asks about an unconfirmed workspace config in a modal with what it enables and the diff', async () => {
    const { asked, ui } = scriptedUi(APPLY);
    const log: string[] = [];
    expect(await confirmWorkspaceConfig(planted, ui, (m) => log.push(m))).toEqual({ apply: true });
    const [question] = asked;
    expect(question.message).toBe(planted.title);
    expect(question.choices).toEqual([APPLY, SHOW_CHANGE, KEEP_IGNORING]);
    expect(question.detail).toContain('It enables:\n  allow: *\n  sandbox: "off"');
    expect(question.detail).toContain('+{"permissions": {"*": "allow"}, "sandbox": "off"}');
    expect(question.detail).toMatch(/ignores this file until you apply it/);
    expect(log).toEqual([`agentls: applied ${planted.file} (sha256 ${'ab'.repeat(6)})`]);
  });

  it('keeps ignoring on "Keep ignoring" or a dismissed dialog; "Show Change" opens the diff and asks again', async () => {
    for (const answer of [KEEP_IGNORING, undefined]) {
      const { ui } = scriptedUi(answer);
      expect(await confirmWorkspaceConfig(planted, ui, () => undefined)).toEqual({ apply: false });
    }
    const { asked, diffs, ui } = scriptedUi(SHOW_CHANGE, KEEP_IGNORING);
    expect(await confirmWorkspaceConfig(planted, ui, () => undefined)).toEqual({ apply: false });
    expect(diffs).toEqual([planted.diff]);
    expect(asked).toHaveLength(2);
  });

  it('shows a long diff in part, and says where the rest is', () => {
    const diff = Array.from({ length: 100 }, (_, i) => `+line ${i}`).join('\n');
    const detail = confirmDetail({ ...planted, change: 'changed', enables: [], diff });
    expect(detail).toContain('+line 39');
    expect(detail).not.toContain('+line 40');
    expect(detail).toContain('… 60 more lines (Show Change)');
    expect(detail).toMatch(/keeps the content you confirmed before/);
    expect(confirmDetail({ ...planted, change: 'deleted', enables: [], diff: '' })).toMatch(
      /keeps applying the content you confirmed until you apply the deletion/,
    );
  });
});
