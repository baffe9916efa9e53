// The one place that starts `agentls serve` (through vscode-languageclient) and keeps it running:
// what the client declares, the settings it passes, restarts with a visible message when the server
// dies, and the wiring of its notifications and requests to the rest of the extension.
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type ClientCapabilities,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  type WorkspaceEdit as LspWorkspaceEdit,
} from 'vscode-languageclient/node';
import { WorkspaceEditApplier } from './applyEdit';
import { DiagnosticsForwarder } from './diagnostics';
import { errorText, type AgentConnection, type AgentHost } from './host';
import { ServerInstaller } from './installUi';
import { ANTHROPIC_KEY_ENV, type ApiKeys } from './apiKeys';
import { fillAgentCapabilities } from './capabilities';
import { LanguageRequests } from './language';
import { REPLACED_SERVER_ACTIONS } from './problemText';
import type {
  AgentEvent,
  AgentRequests,
  ConfirmWorkspaceConfigParams,
  DiagnosticsParams,
} from './protocol/generated';
import { agentOptions, commandExists, resolveServerLaunch, serverEnv, type ServerLaunch } from './serverCommand';
import { confirmWorkspaceConfig, watchWorkspaceTrust } from './trust';

const MAX_RESTARTS = 5;
// How long a start waits for `agentls.server.command` when nothing it could run is found yet.
const SETTINGS_GRACE_MS = 3000;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

class AgentCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    fillAgentCapabilities(capabilities);
  }
  initialize(): void {}
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  clear(): void {}
}

export function readAgentSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('agentls');
  return agentOptions(config.get<string>('model'), config.get<unknown>('permissions'), vscode.workspace.isTrusted, config.get<string>('review'));
}

export class ServerManager implements vscode.Disposable {
  private client?: LanguageClient;
  private launch?: ServerLaunch;
  private readonly restarts: number[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly output: vscode.OutputChannel;
  private readonly diagnostics: DiagnosticsForwarder<vscode.Uri>;
  private readonly installer: ServerInstaller;
  private stopping = false;
  private starting = false;

  constructor(
    context: vscode.ExtensionContext,
    private readonly host: AgentHost,
    private readonly keys: ApiKeys,
  ) {
    this.output = vscode.window.createOutputChannel('agentls');
    this.installer = new ServerInstaller(context, this.output, (state) => host.setSetup(state));
    this.diagnostics = new DiagnosticsForwarder<vscode.Uri>(
      {
        get: (uri) => vscode.languages.getDiagnostics(uri),
        all: () => vscode.languages.getDiagnostics(),
        version: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())?.version,
        asProtocolUri: (uri) => this.client?.code2ProtocolConverter.asUri(uri) ?? uri.toString(),
      },
      (params) => this.notifyDiagnostics(params),
    );
    this.disposables.push(
      this.output,
      vscode.languages.onDidChangeDiagnostics((e) => {
        if (this.client?.state === State.Running) this.diagnostics.changed(e.uris);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      watchWorkspaceTrust(
        vscode.workspace,
        (params) => {
          const client = this.client;
          if (client?.state !== State.Running) return false;
          void client.sendNotification('agent/workspaceTrust', params);
          return true;
        },
        (message) => this.output.appendLine(message),
      ),
    );
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** The connection the host uses; requests fail while the server is down. */
  readonly connection: AgentConnection = {
    request: <M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']) => {
      const client = this.client;
      if (!client || client.state !== State.Running) {
        return Promise.reject(new Error('the agentls server is not running'));
      }
      return client.sendRequest(method, params) as Promise<AgentRequests[M]['result']>;
    },
  };

  private resolveLaunch(folders: string[]): ServerLaunch {
    const config = vscode.workspace.getConfiguration('agentls');
    return resolveServerLaunch(
      config.get<string>('server.command'),
      config.get<string[]>('server.args'),
      folders,
      undefined,
      undefined,
      vscode.workspace.isTrusted,
      { agentls: this.installer.paths.agentls, pathVar: process.env.PATH },
    );
  }

  /** The command "Install or update the server": installs the bundled wheel, then restarts. */
  async installServer(): Promise<void> {
    if (await this.installer.install()) await this.restart();
  }

  /** A key set from the panel or the command: the running server uses it at once
   * (agent/setApiKey); a server too old for that is offered a restart. The key indicators (the
   * status bar, the models' "no key") follow. */
  async useApiKey(name: string, key: string): Promise<void> {
    const client = this.client;
    if (client?.state === State.Running) {
      try {
        await client.sendRequest('agent/setApiKey', { name, key });
      } catch (err) {
        this.output.appendLine(`agentls: agent/setApiKey ${name}: ${errorText(err)}`); // the error never holds the key
        const choice = await vscode.window.showWarningMessage(`agentls: the running server did not take the key (${errorText(err)}). Restart it to use the key?`, 'Restart Server');
        if (choice === 'Restart Server') await this.restart();
        return;
      }
    }
    await this.host.keysChanged();
  }

  /** After a start: every stored key the environment did not carry (the other providers'). */
  private async pushKeys(client: LanguageClient): Promise<void> {
    let sent = 0;
    for (const name of await this.keys.names()) {
      if (name === ANTHROPIC_KEY_ENV) continue; // in the server's environment already
      const key = await this.keys.get(name);
      if (!key || client.state !== State.Running) continue;
      try {
        await client.sendRequest('agent/setApiKey', { name, key });
        sent++;
      } catch (err) {
        this.output.appendLine(`agentls: agent/setApiKey ${name}: ${errorText(err)}`);
      }
    }
    if (sent) await this.host.keysChanged();
  }

  async start(): Promise<void> {
    this.starting = true;
    try {
      await this.startOnce();
    } finally {
      this.starting = false;
    }
  }

  private async startOnce(): Promise<void> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    this.launch = this.resolveLaunch(folders);
    // Right after a window reload, VS Code can activate the extension before the user's settings
    // have arrived (seen in code-server on a busy machine): with no command to run yet, give the
    // setting a moment to show up rather than fail on `agentls` missing from PATH.
    for (let waited = 0; waited < SETTINGS_GRACE_MS && !this.launchable(this.launch); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      this.launch = this.resolveLaunch(folders);
    }
    // The extension's own environment is brought up to the bundled wheel; with no agentls at all,
    // the user is offered to install it there (install.ts, installUi.ts).
    if (this.launch.origin === 'managed') await this.installer.updateIfNeeded();
    else if (!this.launchable(this.launch) && this.installer.canInstall()) {
      // The panel's set-up card (and a notification) offer Install; the server starts after it.
      this.installer.offer(() => void this.installServer());
      this.host.disconnected('stopped', 'The agentls server is not installed yet.');
      return;
    }
    this.host.setSetup(undefined);
    const apiKey = await this.keys.get(ANTHROPIC_KEY_ENV);
    const serverOptions: ServerOptions = {
      command: this.launch.command,
      args: this.launch.args,
      options: { cwd: folders[0], env: serverEnv(process.env, apiKey) },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      initializationOptions: { agent: readAgentSettings() },
      // Diagnostics forwarding covers every language; our own server publishes none to us.
      diagnosticCollectionName: 'agentls',
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => this.closed(),
      },
      middleware: {
        // The ask and the fix on a selection are the extension's own (selectionActions.ts).
        provideCodeActions: async (document, range, context, token, next) => {
          const actions = await next(document, range, context, token);
          return actions?.filter((a) => !REPLACED_SERVER_ACTIONS.has(a.title));
        },
        executeCommand: async (command, args, next) => {
          const result: unknown = await next(command, args);
          if (command === 'agent.runOnSelection' && result && typeof result === 'object' && 'sessionId' in result) {
            const sessionId = String((result as { sessionId: unknown }).sessionId);
            await this.host.select(sessionId);
            await vscode.commands.executeCommand('agentls.revealPanel');
          }
          return result;
        },
      },
    };
    const client = new LanguageClient('agentls', 'agentls', serverOptions, clientOptions);
    client.registerFeature(new AgentCapabilitiesFeature());
    const applier = new WorkspaceEditApplier<vscode.WorkspaceEdit>({
      textDocuments: () => vscode.workspace.textDocuments,
      asUri: (uri) => client.protocol2CodeConverter.asUri(uri).toString(),
      convert: async (edit) => {
        const converted = await client.protocol2CodeConverter.asWorkspaceEdit(edit as LspWorkspaceEdit);
        if (!converted) throw new Error('the edit is empty');
        return converted;
      },
      applyEdit: (edit) => vscode.workspace.applyEdit(edit),
      log: (message) => this.output.appendLine(message),
    });
    client.onRequest('workspace/applyEdit', (params: { edit: unknown; label?: string }) => applier.apply(params));
    client.onNotification('agent/event', (event: AgentEvent) => this.host.handleEvent(event));
    const languages = new LanguageRequests<vscode.Uri, vscode.Position>({
      execute: async (command, ...args) => vscode.commands.executeCommand(command, ...args),
      open: async (uri) => vscode.workspace.openTextDocument(uri),
      diagnostics: (uri) => vscode.languages.getDiagnostics(uri),
      toCodeUri: (uri) => client.protocol2CodeConverter.asUri(uri),
      asUri: (uri) => client.code2ProtocolConverter.asUri(uri as vscode.Uri),
      toCodePosition: (p) => new vscode.Position(p.line, p.character),
      toCodeRange: (r) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character),
    });
    client.onRequest('agent/languageRequest', (params: unknown) => languages.answer(params));
    client.onRequest('agent/confirmWorkspaceConfig', (params: ConfirmWorkspaceConfigParams) =>
      confirmWorkspaceConfig(
        params,
        {
          ask: (message, detail, choices) => vscode.window.showWarningMessage(message, { modal: true, detail }, ...choices),
          showDiff: async (diff) =>
            vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'diff', content: diff }), {
              preview: true,
            }),
        },
        (message) => this.output.appendLine(message),
      ),
    );
    this.disposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          void this.host.connected(this.connection);
          this.diagnostics.pushAll();
          void this.pushKeys(client);
        }
      }),
    );
    this.client = client;
    this.output.appendLine(`agentls: starting ${this.launch.command} ${this.launch.args.join(' ')} (${this.launch.origin})`);
    if (this.launch.note) this.output.appendLine(`agentls: ${this.launch.note}`);
    try {
      await client.start();
    } catch (err) {
      this.failedToStart(err);
    }
  }

  private launchable(launch: ServerLaunch): boolean {
    return launch.origin !== 'path' || commandExists(launch.command, process.env.PATH);
  }

  private failedToStart(err: unknown): void {
    const launch = this.launch;
    const hint =
      launch?.origin === 'path'
        ? 'Install it (command "agentls: Install or update the server") or set "agentls.server.command".'
        : 'Check "agentls.server.command".';
    const message = `Could not start ${launch?.command ?? 'agentls'}: ${errorText(err)}. ${hint}`;
    this.host.disconnected('stopped', message);
    void vscode.window.showErrorMessage(`agentls: ${message}`, 'Open Settings', 'Show Log').then((choice) => {
      if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server');
      if (choice === 'Show Log') this.output.show();
    });
  }

  private closed(): { action: CloseAction; handled: boolean } {
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.restarts.push(now);
    while (this.restarts.length && now - this.restarts[0] > RESTART_WINDOW_MS) this.restarts.shift();
    if (this.restarts.length <= MAX_RESTARTS) {
      const message = 'The agentls server stopped unexpectedly; restarting it. The running turn was lost.';
      this.host.disconnected('restarting', message);
      void vscode.window.showWarningMessage(`agentls: ${message}`, 'Show Log').then((choice) => {
        if (choice === 'Show Log') this.output.show();
      });
      return { action: CloseAction.Restart, handled: true };
    }
    const message = `The agentls server stopped ${this.restarts.length} times in 3 minutes; it was not restarted.`;
    this.host.disconnected('stopped', message);
    void vscode.window.showErrorMessage(`agentls: ${message}`, 'Restart', 'Show Log').then((choice) => {
      if (choice === 'Restart') void this.restart();
      if (choice === 'Show Log') this.output.show();
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  async restart(): Promise<void> {
    this.restarts.length = 0;
    await this.stop();
    this.host.disconnected('restarting', 'Restarting the agentls server.');
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.state !== State.Stopped) await client.stop(3000);
    } catch (err) {
      this.output.appendLine(`agentls: stopping the server: ${errorText(err)}`);
    } finally {
      this.stopping = false;
      await client.dispose().then(undefined, () => undefined);
    }
  }

  private notifyDiagnostics(params: DiagnosticsParams): void {
    const client = this.client;
    if (client?.state === State.Running) void client.sendNotification('agent/diagnostics', params);
  }

  private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (e.affectsConfiguration('agentls.server')) {
      if (!this.running && !this.stopping && !this.starting) {
        void this.restart(); // nothing running to lose: use the new setting at once
        return;
      }
      void vscode.window
        .showInformationMessage('agentls: the server setting changed. Restart the server to use it?', 'Restart')
        .then((choice) => {
          if (choice === 'Restart') void this.restart();
        });
      return;
    }
    const agentSettings = ['agentls.model', 'agentls.permissions', 'agentls.review'];
    if (agentSettings.some((name) => e.affectsConfiguration(name)) && this.running) {
      void this.client?.sendNotification('workspace/didChangeConfiguration', {
        settings: { agent: readAgentSettings() },
      });
    }
  }

  showLog(): void {
    this.output.show();
  }

  dispose(): void {
    this.diagnostics.dispose();
    for (const d of this.disposables) d.dispose();
    void this.stop();
  }
}
