// The providers' API keys, kept in VS Code's secret storage (one secret per environment variable
// a provider reads its key from, the keyEnv of agent/listModels). The server gets Anthropic's in
// its environment at start, and every key at once through agent/setApiKey when one is set while
// it runs (and after each start). No vscode import: the storage comes in (unit-tested).

/** Where Anthropic's key was kept before there were other providers (kept, so it is not lost). */
export const ANTHROPIC_SECRET = 'agentls.anthropicApiKey';
export const ANTHROPIC_KEY_ENV = 'ANTHROPIC_API_KEY';
const NAMES_KEY = 'agentls.apiKeyNames';

export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

export interface NameMemory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export function secretName(env: string): string {
  return env === ANTHROPIC_KEY_ENV ? ANTHROPIC_SECRET : `agentls.apiKey.${env}`;
}

/** A variable name a provider's key can be in (what the server accepts, too). */
export function validKeyName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(name);
}

export class ApiKeys {
  constructor(
    private readonly secrets: SecretStore,
    private readonly memory: NameMemory,
  ) {}

  /** The variables a key is stored for (Anthropic's first when there is one). */
  async names(): Promise<string[]> {
    const names = new Set(this.memory.get<string[]>(NAMES_KEY) ?? []);
    if (await this.secrets.get(ANTHROPIC_SECRET)) names.add(ANTHROPIC_KEY_ENV);
    return [...names].sort((a, b) => Number(b === ANTHROPIC_KEY_ENV) - Number(a === ANTHROPIC_KEY_ENV));
  }

  get(env: string): Promise<string | undefined> {
    return Promise.resolve(this.secrets.get(secretName(env)));
  }

  /** Keeps `key` for `env`; an empty or missing key removes it. */
  async set(env: string, key: string | undefined): Promise<void> {
    if (!validKeyName(env)) throw new Error(`not a variable name: ${JSON.stringify(env)}`);
    const names = new Set(this.memory.get<string[]>(NAMES_KEY) ?? []);
    const value = key?.trim();
    if (value) {
      await this.secrets.store(secretName(env), value);
      names.add(env);
    } else {
      await this.secrets.delete(secretName(env));
      names.delete(env);
    }
    await this.memory.update(NAMES_KEY, [...names]);
  }
}
