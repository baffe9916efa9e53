// The panel's model picker, host side: the models the server lists (agent/listModels), the
// workspace's choice (kept in workspaceState), applied to the active session and to each new one
// through agent/setModel, and whether the chosen model's provider has its API key.
import type { AgentRequests, ModelEntry } from './protocol/generated';
import type { HostMessage } from './model/messages';

export interface ModelConnection {
  request<M extends keyof AgentRequests>(
    method: M,
    params: AgentRequests[M]['params'],
  ): Promise<AgentRequests[M]['result']>;
}

export interface ModelMemory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export const MODEL_KEY = 'agentls.model';

export class ModelChoice {
  models: ModelEntry[] = [];
  defaultModel?: string;

  constructor(private readonly memory: ModelMemory) {}

  /** The workspace's choice, if the user made one. */
  get chosen(): string | undefined {
    return this.memory.get<string>(MODEL_KEY);
  }

  /** The model new sessions get: the workspace's choice, else the server's default. */
  current(): string | undefined {
    return this.chosen ?? this.defaultModel;
  }

  /** The environment variable of the chosen model's missing API key (the provider's name when it
   * names none), or undefined when the key is there or the models are not known yet. */
  missingKey(): string | undefined {
    const current = this.current();
    const entry = this.models.find((m) => m.model === current);
    if (!entry || entry.hasKey) return undefined;
    return entry.keyEnv ?? entry.provider;
  }

  /** Ask the server for its models; the panel's `models` message (undefined when it has none). */
  async refresh(client: ModelConnection | undefined): Promise<HostMessage | undefined> {
    if (!client) return undefined;
    try {
      const { models, defaultModel } = await client.request('agent/listModels', {});
      this.models = models;
      this.defaultModel = defaultModel;
    } catch {
      return undefined; // an older server: no picker
    }
    return this.message();
  }

  message(): HostMessage {
    // The server's default (the agentls.model setting, say scripted:demo) stays choosable when
    // it is not in the list, after another model was picked.
    return { type: 'models', models: this.models, current: this.current(), ...(this.defaultModel ? { defaultModel: this.defaultModel } : {}) };
  }

  /** The user picked `model`: kept for the workspace and used by `sessionId` from its next turn. */
  async choose(model: string, client: ModelConnection | undefined, sessionId: string | undefined): Promise<void> {
    await this.memory.update(MODEL_KEY, model);
    if (client && sessionId) await client.request('agent/setModel', { sessionId, model });
  }

  /** A new session gets the workspace's choice (nothing to do without one). */
  async apply(client: ModelConnection, sessionId: string): Promise<void> {
    const model = this.chosen;
    if (model) await client.request('agent/setModel', { sessionId, model });
  }
}
