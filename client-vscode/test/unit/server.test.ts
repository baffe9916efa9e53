import { describe, expect, it } from 'vitest';
import { AGENT_CAPABILITIES, fillAgentCapabilities } from '../../src/capabilities';
import { LANGUAGE_METHODS } from '../../src/language';
import { agentOptions, commandExists, resolveServerLaunch, serverEnv } from '../../src/serverCommand';

describe('which server to start', () => {
  const none = () => false;

  it('uses the setting first, with ${workspaceFolder} expanded', () => {
    expect(resolveServerLaunch('${workspaceFolder}/.venv/bin/agentls', undefined, ['/w'], none)).toEqual({
      command: '/w/.venv/bin/agentls',
      args: ['serve'],
      origin: 'setting',
    });
  });

  it("then the workspace's .venv", () => {
    const exists = (p: string) => p === '/w2/.venv/bin/agentls';
    expect(resolveServerLaunch('', undefined, ['/w1', '/w2'], exists, 'linux')).toEqual({
      command: '/w2/.venv/bin/agentls',
      args: ['serve'],
      origin: 'venv',
    });
    const win = (p: string) => p.endsWith('agentls.exe');
    expect(resolveServerLaunch(undefined, undefined, ['C:/w'], win, 'win32').command).toMatch(/\.venv.Scripts.agentls\.exe$/);
  });

  it('then agentls on PATH, with the configured arguments', () => {
    expect(resolveServerLaunch('  ', ['serve', '--verbose'], ['/w'], none)).toEqual({
      command: 'agentls',
      args: ['serve', '--verbose'],
      origin: 'path',
    });
  });
});

describe('what the server is given', () => {
  it('gets the API key from secret storage only when one is stored', () => {
    expect(serverEnv({ PATH: '/bin' }, 'sk-ant-secret')).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant-secret' });
    expect(serverEnv({ PATH: '/bin' }, undefined)).toEqual({ PATH: '/bin' });
  });

  it('gets the settings as initializationOptions.agent, leaving out empty ones', () => {
    expect(agentOptions('scripted:demo', { bash: 'allow' })).toEqual({ model: 'scripted:demo', permissions: { bash: 'allow' } });
    expect(agentOptions('', {})).toEqual({});
    expect(agentOptions(undefined, [])).toEqual({});
    expect(agentOptions(' claude-sonnet-5-5 ', [{ tool: 'read', action: 'allow' }])).toEqual({
      model: 'claude-sonnet-5-5',
      permissions: [{ tool: 'read', action: 'allow' }],
    });
  });

  it('declares experimental.agent next to other experimental capabilities', () => {
    const caps: { experimental?: unknown } = { experimental: { other: 1 } };
    fillAgentCapabilities(caps);
    expect(caps.experimental).toEqual({
      other: 1,
      agent: { diagnosticsPush: true, approvals: true, savesEdits: true, languageRequests: [...LANGUAGE_METHODS] },
    });
    // Every generated method but workspace/executeCommand (VS Code would apply a command's edits).
    expect(LANGUAGE_METHODS).toHaveLength(15);
    expect(LANGUAGE_METHODS).not.toContain('workspace/executeCommand');
    const empty: { experimental?: unknown } = {};
    fillAgentCapabilities(empty);
    expect(empty.experimental).toEqual({ agent: AGENT_CAPABILITIES });
  });
});

describe('commandExists', () => {
  it('finds a bare name in a PATH directory, and an absolute path only where it is', () => {
    const present = new Set(['/opt/bin/agentls', '/w/.venv/bin/agentls']);
    const exists = (p: string) => present.has(p);
    expect(commandExists('agentls', '/usr/bin::/opt/bin', exists, 'linux')).toBe(true);
    expect(commandExists('agentls', '/usr/bin', exists, 'linux')).toBe(false);
    expect(commandExists('agentls', undefined, exists, 'linux')).toBe(false);
    expect(commandExists('/w/.venv/bin/agentls', '', exists, 'linux')).toBe(true);
    expect(commandExists('/nowhere/agentls', '/opt/bin', exists, 'linux')).toBe(false);
  });
});
