// The model picker in the panel's composer: the models the server lists (agent/listModels, as
// `agentls models` prints them) grouped by provider, each with its price; choosing one posts
// set-model (kept for the workspace, used by the active session from its next turn).
import type { ModelEntry } from '../protocol/generated';

function price(usd: number): string {
  return usd === 0 ? 'free' : `$${usd < 1 ? usd.toFixed(2) : usd.toFixed(usd % 1 ? 2 : 0)}`;
}

/** One option's text: the model, its prices per million tokens in and out, and a missing key. */
export function modelLabel(entry: ModelEntry): string {
  const cost =
    entry.inputUsdPerMTok === 0 && entry.outputUsdPerMTok === 0
      ? 'free'
      : `${price(entry.inputUsdPerMTok)} / ${price(entry.outputUsdPerMTok)} per MTok`;
  return `${entry.model} · ${cost}${entry.hasKey ? '' : ' · no key'}`;
}

/** The option's tooltip: context, output limit, what it supports, the key it needs. */
export function modelDetail(entry: ModelEntry): string {
  const supports = (['images', 'thinking', 'caching'] as const).filter((k) => entry[k]).join(', ') || 'text only';
  const key = entry.keyEnv ? ` · key: ${entry.keyEnv}${entry.hasKey ? '' : ' (not set)'}` : '';
  return `${entry.contextWindow.toLocaleString('en')} context · ${entry.maxOutput.toLocaleString('en')} max output · ${supports}${key}`;
}

export class ModelPicker {
  readonly select: HTMLSelectElement;
  private loaded = false;
  private models: ModelEntry[] = [];
  private current?: string;

  constructor(
    parent: HTMLElement,
    private readonly choose: (model: string) => void,
    private readonly ask: () => void,
  ) {
    this.select = document.createElement('select');
    this.select.id = 'model';
    this.select.className = 'model-picker';
    this.select.setAttribute('aria-label', 'Model');
    this.select.title = 'The model of this workspace’s sessions (agentls models lists them)';
    this.select.hidden = true;
    this.select.addEventListener('change', () => {
      if (this.select.value) this.choose(this.select.value);
    });
    parent.append(this.select);
  }

  /** The server is running: ask for the models once. */
  connected(running: boolean): void {
    this.select.disabled = !running;
    if (running && !this.loaded) {
      this.loaded = true;
      this.ask();
    }
  }

  /** The chosen model's provider and the variable of its key, when the server says it has none. */
  missingKey(): { name: string; provider: string } | undefined {
    const entry = this.models.find((m) => m.model === this.current);
    if (!entry || entry.hasKey || !entry.keyEnv) return undefined;
    return { name: entry.keyEnv, provider: entry.provider };
  }

  setModels(models: ModelEntry[], current: string | undefined, defaultModel?: string): void {
    this.models = models;
    this.current = current;
    const groups = new Map<string, HTMLOptGroupElement>();
    this.select.replaceChildren();
    // The chosen model and the server's default, when the list does not have them (a scripted
    // model, a provider's model the catalogue does not know).
    for (const extra of new Set([current, defaultModel])) {
      if (extra && !models.some((m) => m.model === extra)) this.select.append(new Option(extra, extra));
    }
    for (const entry of models) {
      let group = groups.get(entry.provider);
      if (!group) {
        group = document.createElement('optgroup');
        group.label = entry.provider;
        groups.set(entry.provider, group);
        this.select.append(group);
      }
      const option = new Option(modelLabel(entry), entry.model);
      option.title = modelDetail(entry);
      group.append(option);
    }
    if (current) this.select.value = current;
    this.select.hidden = !this.select.options.length;
    const chosen = models.find((m) => m.model === current);
    this.select.title = chosen ? `${modelLabel(chosen)}\n${modelDetail(chosen)}` : 'The model of this workspace’s sessions';
  }
}
