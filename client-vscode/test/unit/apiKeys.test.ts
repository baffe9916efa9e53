// The providers' API keys in VS Code's secret storage (apiKeys.ts): one secret per variable,
// Anthropic's where it always was, removal by an empty key, and the list of variables a key is
// kept for (sent to the server after each start).
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_SECRET, ApiKeys, secretName, validKeyName } from '../../src/apiKeys';

function stores() {
  const secrets = new Map<string, string>();
  const memory = new Map<string, unknown>();
  const keys = new ApiKeys(
    {
      get: async (k) => secrets.get(k),
      store: async (k, v) => void secrets.set(k, v),
      delete: async (k) => void secrets.delete(k),
    },
    { get: <T>(k: string) => memory.get(k) as T | undefined, update: async (k, v) => void memory.set(k, v) },
  );
  return { secrets, keys };
}

describe('API keys', () => {
  it("keeps Anthropic's key in the secret it always had, others in one secret per variable", async () => {
    const { secrets, keys } = stores();
    await keys.set('ANTHROPIC_API_KEY', '  sk-ant-1  ');
    await keys.set('GATEWAY_KEY', 'gw-2');
    expect(secrets.get(ANTHROPIC_SECRET)).toBe('sk-ant-1');
    expect(secrets.get(secretName('GATEWAY_KEY'))).toBe('gw-2');
    expect(await keys.get('GATEWAY_KEY')).toBe('gw-2');
    expect(await keys.names()).toEqual(['ANTHROPIC_API_KEY', 'GATEWAY_KEY']);
  });

  it('removes a key set empty', async () => {
    const { secrets, keys } = stores();
    await keys.set('GATEWAY_KEY', 'gw-2');
    await keys.set('GATEWAY_KEY', '   ');
    expect(secrets.has(secretName('GATEWAY_KEY'))).toBe(false);
    expect(await keys.names()).toEqual([]);
  });

  it("lists a key stored before the list existed (Anthropic's from an older version)", async () => {
    const { secrets, keys } = stores();
    secrets.set(ANTHROPIC_SECRET, 'old');
    expect(await keys.names()).toEqual(['ANTHROPIC_API_KEY']);
  });

  it('refuses a name that is not a variable name', async () => {
    const { keys } = stores();
    expect(validKeyName('OPENAI_API_KEY')).toBe(true);
    for (const bad of ['', '1X', 'A-B', 'a b', 'X'.repeat(101)]) expect(validKeyName(bad)).toBe(false);
    await expect(keys.set('A-B', 'k')).rejects.toThrow('not a variable name');
  });
});

describe('the set-up messages from the panel', () => {
  it('takes Install, Set API key (of a variable), Restart, settings and the log; refuses a bad name', async () => {
    const { isPanelMessage } = await import('../../src/model/messages');
    for (const type of ['install-server', 'restart-server', 'open-settings', 'show-log', 'set-api-key']) {
      expect(isPanelMessage({ type }), type).toBe(true);
    }
    expect(isPanelMessage({ type: 'set-api-key', name: 'OPENAI_API_KEY' })).toBe(true);
    expect(isPanelMessage({ type: 'set-api-key', name: 'rm -rf' })).toBe(false);
    expect(isPanelMessage({ type: 'set-api-key', name: 3 })).toBe(false);
  });
});
