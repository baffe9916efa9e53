// Setting agentls up without leaving the panel. The set-up card, while no server runs: Install
// (and what it does), its progress, its error with Retry; starting and restarting; a stopped
// server with Restart. It stays until the server runs (a notification may vanish; this does not).
// The key notice, while the chosen model's provider has no API key: Set API key, which the
// running server uses at once.
import type { ConnectionStatus } from '../model/messages';
import type { SetupMessage, SetupState } from '../model/setup';
import { icon } from './icons';

type Post = (message: SetupMessage) => void;

function button(label: string, message: SetupMessage, post: Post, secondary = false): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  if (secondary) b.className = 'secondary';
  b.addEventListener('click', () => post(message));
  return b;
}

function para(className: string, text: string): HTMLParagraphElement {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  return p;
}

function progressBar(): HTMLDivElement {
  const bar = document.createElement('div');
  bar.className = 'setup-progress';
  bar.setAttribute('role', 'progressbar');
  bar.setAttribute('aria-label', 'In progress');
  bar.append(document.createElement('div'));
  return bar;
}

export interface SetupView {
  connection: ConnectionStatus;
  connectionMessage?: string;
  setup?: SetupState;
}

export class SetupCard {
  readonly el: HTMLElement;
  private key = '';

  constructor(private readonly post: Post) {
    this.el = document.createElement('section');
    this.el.id = 'setup';
    this.el.className = 'setup-card';
    this.el.setAttribute('aria-label', 'Set-up');
    this.el.setAttribute('aria-live', 'polite');
    this.el.hidden = true;
  }

  /** Whether the card holds the panel (no conversation can start). */
  get blocking(): boolean {
    return !this.el.hidden && this.el.dataset.phase !== 'restarting';
  }

  render(view: SetupView): void {
    const key = JSON.stringify(view);
    if (key === this.key) return;
    this.key = key;
    const { connection, setup } = view;
    const message = (view.connectionMessage ?? '').trim();
    this.el.hidden = connection === 'running';
    if (this.el.hidden) {
      this.el.replaceChildren();
      delete this.el.dataset.phase;
      return;
    }
    const phase = setup?.phase ?? connection;
    this.el.dataset.phase = phase;
    const version = setup?.version ? ` ${setup.version}` : '';
    const heading = (name: string, text: string): HTMLElement => {
      const h = document.createElement('h2');
      h.className = 'setup-heading';
      h.append(icon(name), ' ', text);
      return h;
    };
    const buttons = (...items: HTMLButtonElement[]): HTMLDivElement => {
      const div = document.createElement('div');
      div.className = 'setup-buttons';
      div.append(...items);
      return div;
    };
    const post = this.post;
    switch (phase) {
      case 'needed':
        this.el.replaceChildren(
          heading('server-environment', 'Install the agentls server'),
          para(
            'setup-what',
            `Install creates a Python virtual environment in this extension's storage and installs agentls${version} into it with pip (its dependencies come from your package index; Python 3.11 or newer is needed). Nothing is installed elsewhere.`,
          ),
          buttons(button('Install', { type: 'install-server' }, post), button('Use my own agentls…', { type: 'open-settings' }, post, true)),
        );
        return;
      case 'installing':
        this.el.replaceChildren(
          heading('cloud-download', `Installing agentls${version}…`),
          progressBar(),
          para('setup-step', setup?.step ? `Now: ${setup.step}.` : ''),
          buttons(button('Show log', { type: 'show-log' }, post, true)),
        );
        return;
      case 'failed': {
        const error = document.createElement('pre');
        error.className = 'setup-error';
        error.textContent = setup?.error ?? 'The install failed.';
        this.el.replaceChildren(
          heading('error', 'The install failed'),
          error,
          buttons(
            button('Retry', { type: 'install-server' }, post),
            button('Show log', { type: 'show-log' }, post, true),
            button('Use my own agentls…', { type: 'open-settings' }, post, true),
          ),
        );
        return;
      }
      case 'starting':
        this.el.replaceChildren(heading('loading', 'Starting the agentls server…'), progressBar());
        return;
      case 'restarting':
        this.el.replaceChildren(heading('sync', 'The agentls server is restarting…'), progressBar(), message ? para('setup-message', message) : '');
        return;
      default:
        this.el.replaceChildren(
          heading('debug-disconnect', 'The agentls server is not running'),
          message ? para('setup-message', message) : '',
          buttons(
            button('Restart', { type: 'restart-server' }, post),
            button('Show log', { type: 'show-log' }, post, true),
            button('Settings', { type: 'open-settings' }, post, true),
          ),
        );
    }
  }
}

/** The chosen model's provider has no key: say so, with the button that sets it. */
export class KeyNotice {
  readonly el: HTMLDivElement;
  private shownFor?: string;

  constructor(private readonly post: Post) {
    this.el = document.createElement('div');
    this.el.id = 'key-notice';
    this.el.className = 'key-notice';
    this.el.setAttribute('role', 'alert');
    this.el.hidden = true;
  }

  /** `missing`: the variable and provider of the chosen model's missing key; undefined: none. */
  render(missing: { name: string; provider: string } | undefined): void {
    const key = missing ? `${missing.provider}:${missing.name}` : undefined;
    if (key === this.shownFor) return;
    this.shownFor = key;
    this.el.hidden = !missing;
    if (!missing) {
      this.el.replaceChildren();
      return;
    }
    const text = document.createElement('span');
    text.className = 'key-text';
    text.append(icon('key'), ` No API key for ${missing.provider} (${missing.name}): the agent cannot answer until one is set.`);
    const set = document.createElement('button');
    set.type = 'button';
    set.textContent = 'Set API key';
    set.addEventListener('click', () => this.post({ type: 'set-api-key', name: missing.name }));
    this.el.replaceChildren(text, set);
  }
}
