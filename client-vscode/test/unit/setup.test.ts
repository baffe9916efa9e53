// The set-up state and the key flow on the host side (host.ts): the install's state reaches the
// panel (and a panel loaded later), the set-up card's buttons reach VS Code's commands, and a key
// set while the server runs refreshes the models' "no key" marks and the status bar's warning.
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import type { HostMessage } from '../../src/model/messages';
import type { SetupMessage } from '../../src/model/setup';
import type { AgentRequests, ModelEntry } from '../../src/protocol/generated';

const sonnet = (hasKey: boolean): ModelEntry => ({
  provider: 'anthropic',
  type: 'anthropic',
  model: 'claude-sonnet-5-5',
  apiModel: 'claude-sonnet-5-5',
  contextWindow: 200000,
  maxOutput: 64000,
  inputUsdPerMTok: 3,
  outputUsdPerMTok: 15,
  images: true,
  thinking: true,
  caching: true,
  default: true,
  keyEnv: 'ANTHROPIC_API_KEY',
  hasKey,
});

function makeHost(hasKey: () => boolean) {
  const posted: HostMessage[] = [];
  const setup: SetupMessage[] = [];
  const ui: HostUi = { post: (m) => posted.push(m), showError: () => undefined, openDiff: () => undefined, openFile: () => undefined, setup: (m) => setup.push(m) };
  const values = new Map<string, unknown>();
  const host = new AgentHost(ui, { get: <T>(k: string) => values.get(k) as T | undefined, update: async (k, v) => void values.set(k, v) });
  const server: AgentConnection = {
    request: <M extends keyof AgentRequests>(method: M) => {
      const answers: Record<string, unknown> = {
        'agent/listSessions': { sessions: [] },
        'agent/listModels': { models: [sonnet(hasKey())], defaultModel: 'claude-sonnet-5-5' },
      };
      return Promise.resolve((answers[method] ?? {}) as AgentRequests[M]['result']);
    },
  };
  return { host, posted, setup, server };
}

describe('set-up on the host side', () => {
  it("sends the install's state to the panel and keeps it for a panel loaded later", async () => {
    const { host, posted } = makeHost(() => false);
    host.setSetup({ phase: 'installing', version: '0.1.0', step: 'pip install' });
    expect(posted.at(-1)).toEqual({ type: 'setup', setup: { phase: 'installing', version: '0.1.0', step: 'pip install' } });
    await host.handlePanelMessage({ type: 'ready' });
    const state = posted.at(-1);
    expect(state?.type === 'state' && state.state.setup?.phase).toBe('installing');
    host.setSetup(undefined);
    expect(posted.at(-1)).toEqual({ type: 'setup', setup: undefined });
  });

  it("hands the set-up card's buttons to VS Code", async () => {
    const { host, setup } = makeHost(() => false);
    await host.handlePanelMessage({ type: 'install-server' });
    await host.handlePanelMessage({ type: 'set-api-key', name: 'ANTHROPIC_API_KEY' });
    await host.handlePanelMessage({ type: 'restart-server' });
    expect(setup).toEqual([{ type: 'install-server' }, { type: 'set-api-key', name: 'ANTHROPIC_API_KEY' }, { type: 'restart-server' }]);
  });

  it('a key set while running clears the status warning and the models\' "no key" at once', async () => {
    let key = false;
    const { host, posted, server } = makeHost(() => key);
    let changes = 0;
    host.onDidChange(() => changes++);
    await host.connected(server);
    await host.handlePanelMessage({ type: 'list-models' });
    expect(host.status().missingKey).toBe('ANTHROPIC_API_KEY');
    key = true; // agent/setApiKey went through (server.ts)
    const before = changes;
    await host.keysChanged();
    expect(host.status().missingKey).toBeUndefined();
    expect(changes).toBeGreaterThan(before); // the status bar updates on change
    const models = posted.filter((m) => m.type === 'models').at(-1);
    expect(models?.type === 'models' && models.models[0].hasKey).toBe(true);
  });
});

describe('the status bar while the server is set up', () => {
  it('says not installed, installing or install failed instead of "stopped"', async () => {
    const { statusBarText } = await import('../../src/statusBar');
    const base = { connection: 'stopped' as const, busy: false, waitingForApproval: 0 };
    expect(statusBarText({ ...base, setup: 'needed' }).text).toBe('$(cloud-download) agentls: not installed');
    expect(statusBarText({ ...base, setup: 'installing' })).toMatchObject({ text: '$(sync~spin) agentls: installing', attention: false });
    expect(statusBarText({ ...base, setup: 'failed' })).toMatchObject({ text: '$(error) agentls: install failed', attention: true });
    expect(statusBarText(base).text).toBe('$(error) agentls: stopped');
    const { host } = makeHost(() => true);
    host.setSetup({ phase: 'failed', error: 'no python' });
    host.disconnected('stopped', 'The agentls server is not installed yet.');
    expect(host.status().setup).toBe('failed');
  });
});
