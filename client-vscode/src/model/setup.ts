// Setting agentls up from the panel (webview/setup.ts): the server install's progress, and the
// messages its buttons post (Install, Set API key, Restart, settings, the log).

/** Where the set-up of the server stands while it is not running. */
export interface SetupState {
  /** needed: no agentls to start, the bundled one can be installed; installing: pip runs;
   * failed: the install failed (error says why). */
  phase: 'needed' | 'installing' | 'failed';
  /** The version the extension carries. */
  version?: string;
  /** What the install is doing now (installing). */
  step?: string;
  /** Why it failed (failed). */
  error?: string;
}

/** Webview -> extension: the set-up card's and the title bar's buttons. */
export type SetupMessage =
  | { type: 'install-server' }
  /** The key of `name` (a model entry's keyEnv), asked in VS Code's password box. */
  | { type: 'set-api-key'; name?: string }
  | { type: 'restart-server' }
  | { type: 'open-settings' }
  | { type: 'show-log' };

/** Extension -> webview. */
export type SetupHostMessage =
  | { type: 'setup'; setup?: SetupState }
  /** The title bar's History action: show (or hide) the session list. */
  | { type: 'show-history' };

export function isSetupMessage(m: Record<string, unknown>): boolean {
  switch (m.type) {
    case 'install-server':
    case 'restart-server':
    case 'open-settings':
    case 'show-log':
      return true;
    case 'set-api-key':
      return m.name === undefined || (typeof m.name === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(m.name));
    default:
      return false;
  }
}
