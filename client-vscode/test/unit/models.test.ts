// The model picker (host side and the panel's labels), the status bar's missing-key warning, and
// the live region's one message per finished block.
import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import { applyEvent, emptyView } from '../../src/model/transcript';
import { MODEL_KEY } from '../../src/modelChoice';
import type { AgentRequests, ModelEntry } from '../../src/protocol/generated';
import { statusBarText } from '../../src/statusBar';
import { finishedBlocks } from '../../src/webview/a11y';
import { modelDetail, modelLabel } from '../../src/webview/models';
import { loadFixture } from '../support/fixture';

const entry = (model: string, provider: string, hasKey: boolean, keyEnv: string | null, prices: [number, number]): ModelEntry => ({
  provider,
  type: provider === 'anthropic' ? 'anthropic' : 'openai',
  model,
  apiModel: model.split('/').at(-1) ?? model,
  contextWindow: 1_000_000,
  maxOutput: 128_000,
  inputUsdPerMTok: prices[0],
  outputUsdPerMTok: prices[1],
  images: true,
  thinking: provider === 'anthropic',
  caching: provider === 'anthropic',
  default: model === 'claude-sonnet-5-5',
  keyEnv,
  hasKey,
});
const MODELS = [
  entry('claude-sonnet-5-5', 'anthropic', true, 'ANTHROPIC_API_KEY', [2, 10]),
  entry('claude-haiku-5-5', 'anthropic', true, 'ANTHROPIC_API_KEY', [0.1, 0.5]),
  entry('gw/coder', 'gw', false, 'GW_KEY', [0, 0]),
];

type Call = { method: keyof AgentRequests; params: unknown };

class Server implements AgentConnection {
  calls: Call[] = [];
  request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
    this.calls.push({ method, params });
    const answers: Partial<Record<keyof AgentRequests, unknown>> = {
      'agent/listModels': { models: MODELS, defaultModel: 'claude-sonnet-5-5' },
      'agent/listSessions': { sessions: [] },
      'agent/newSession': { sessionId: `ses_${this.calls.length}` },
      'agent/setModel': { model: (params as { model?: string }).model },
    };
    return Promise.resolve((answers[method] ?? {}) as AgentRequests[M]['result']);
  }
  setModels(): unknown[] {
    return this.calls.filter((c) => c.method === 'agent/setModel').map((c) => c.params);
  }
}

class Ui implements HostUi {
  posted: HostMessage[] = [];
  errors: string[] = [];
  post(message: HostMessage): void {
    this.posted.push(message);
  }
  showError(message: string): void {
    this.errors.push(message);
  }
  openDiff(): void {}
  openFile(): void {}
}

function memory(): { values: Map<string, unknown>; get<T>(key: string): T | undefined; update(key: string, value: unknown): Promise<void> } {
  const values = new Map<string, unknown>();
  return {
    values,
    get: <T>(key: string) => values.get(key) as T | undefined,
    update: (key: string, value: unknown) => {
      values.set(key, value);
      return Promise.resolve();
    },
  };
}

describe('the model picker, host side', () => {
  it('lists the server models with the workspace choice, keeps a choice and applies it', async () => {
    const server = new Server();
    const ui = new Ui();
    const mem = memory();
    const host = new AgentHost(ui, mem);
    await host.connected(server);
    await host.handlePanelMessage({ type: 'list-models' });
    expect(ui.posted.at(-1)).toEqual({ type: 'models', models: MODELS, current: 'claude-sonnet-5-5', defaultModel: 'claude-sonnet-5-5' });

    const sessionId = await host.newSession();
    expect(server.setModels()).toEqual([]); // no choice yet: the server default
    await host.handlePanelMessage({ type: 'set-model', model: 'claude-haiku-5-5' });
    expect(mem.values.get(MODEL_KEY)).toBe('claude-haiku-5-5');
    expect(server.setModels()).toEqual([{ sessionId, model: 'claude-haiku-5-5' }]);
    expect(ui.posted.at(-1)).toEqual({ type: 'models', models: MODELS, current: 'claude-haiku-5-5', defaultModel: 'claude-sonnet-5-5' });

    const next = await host.newSession();
    expect(server.setModels().at(-1)).toEqual({ sessionId: next, model: 'claude-haiku-5-5' });
    expect(ui.errors).toEqual([]);
  });

  it('warns in the status bar when the chosen provider has no key', async () => {
    const server = new Server();
    const host = new AgentHost(new Ui(), memory());
    await host.connected(server);
    await host.handlePanelMessage({ type: 'list-models' }); // the panel asks once the server runs
    expect(host.status().missingKey).toBeUndefined();
    await host.handlePanelMessage({ type: 'set-model', model: 'gw/coder' });
    expect(host.status().missingKey).toBe('GW_KEY');
    const bar = statusBarText(host.status());
    expect(bar.text).toContain('no API key');
    expect(bar.tooltip).toContain('GW_KEY');
    expect(bar.command).toBe('agentls.setApiKey');
    expect(bar.attention).toBe(true);
  });

  it('checks the panel messages', () => {
    expect(isPanelMessage({ type: 'list-models' })).toBe(true);
    expect(isPanelMessage({ type: 'set-model', model: 'claude-opus-5' })).toBe(true);
    expect(isPanelMessage({ type: 'set-model', model: '' })).toBe(false);
    expect(isPanelMessage({ type: 'set-model' })).toBe(false);
  });
});

describe('the picker labels', () => {
  it('shows prices per million tokens and a missing key', () => {
    expect(modelLabel(MODELS[0])).toBe('claude-sonnet-5-5 · $2 / $10 per MTok');
    expect(modelLabel(MODELS[1])).toBe('claude-haiku-5-5 · $0.10 / $0.50 per MTok');
    expect(modelLabel(MODELS[2])).toBe('gw/coder · free · no key');
    expect(modelDetail(MODELS[2])).toBe('1,000,000 context · 128,000 max output · images · key: GW_KEY (not set)');
  });
});

describe('the live region', () => {
  it('gets each finished text block of a recorded run once, whole, not per delta', () => {
    const { events, sessions } = loadFixture();
    const view = emptyView(sessions[0].sessionId);
    const announced = new Set<string>();
    const read: string[] = [];
    let deltas = 0;
    for (const event of events) {
      if (event.type === 'text-delta') deltas += 1;
      applyEvent(view, event);
      read.push(...finishedBlocks(view, announced));
    }
    read.push(...finishedBlocks(view, announced)); // asked again: nothing new
    const blocks = view.items.filter((i) => i.kind === 'text').map((i) => (i.kind === 'text' ? i.text.trim() : ''));
    expect(blocks.length).toBeGreaterThan(1);
    expect(deltas).toBeGreaterThan(blocks.length);
    expect(read).toEqual(blocks.filter(Boolean));
  });

  it('reads nothing of a block still streaming', () => {
    const { events, sessions } = loadFixture();
    const view = emptyView(sessions[0].sessionId);
    const announced = new Set<string>();
    const firstTool = events.findIndex((e) => e.type === 'tool-call');
    for (const event of events.slice(0, firstTool)) applyEvent(view, event);
    expect(view.busy).toBe(true);
    expect(finishedBlocks(view, announced)).toEqual([]);
    applyEvent(view, events[firstTool]);
    expect(finishedBlocks(view, announced)).toHaveLength(1);
  });
});
