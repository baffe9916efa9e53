import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventEmitter } from '../stubs/vscode';
import { agentOptions, resolveServerLaunch } from '../../src/serverCommand';
import { watchWorkspaceTrust } from '../../src/trust';

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
    expect(log[0]).toMatch(/applies its \.agentls\/config\.json in full/);
    running = false;
    grants.fire();
    expect(sent).toHaveLength(1);
    expect(log[1]).toMatch(/when it starts/);
    watch.dispose();
    grants.fire();
    expect(log).toHaveLength(2);
  });
});
