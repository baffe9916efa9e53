// The VS Code side of installing the bundled server (install.ts): the first-run offer, the
// progress, the update at activation, and errors that offer Retry / Open Log / Set
// agentls.server.command. Each state also goes to the panel's set-up card (onState), which stays
// until the server runs: a notification can vanish, the card does not.
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  chooseInterpreter,
  findBundledWheel,
  InstallError,
  installNeed,
  installServer,
  managedPaths,
  type Interpreter,
  type ManagedPaths,
} from './install';
import type { SetupState } from './model/setup';

/** The part of the Python extension's API we use (its `environments` API). */
interface PythonEnvironmentsApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(path: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

export class ServerInstaller {
  readonly paths: ManagedPaths;

  private installing?: Promise<boolean>;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    /** The panel's set-up card (undefined: nothing to set up). */
    private readonly onState: (state: SetupState | undefined) => void = () => undefined,
  ) {
    this.paths = managedPaths(context.globalStorageUri.fsPath);
  }

  private wheel() {
    return findBundledWheel(join(this.context.extensionPath, 'dist', 'wheel'));
  }

  /** Whether there is no agentls and the bundled one can be installed. */
  canInstall(): boolean {
    return installNeed(this.wheel(), this.paths) === 'install';
  }

  /** No agentls found: the panel's set-up card offers to install the bundled one, and so does a
   * notification (not waited for). `install` runs the install (and starts the server after). */
  offer(install: () => void): void {
    this.onState({ phase: 'needed', version: this.wheel()?.version });
    void vscode.window
      .showInformationMessage(
        'agentls: the agentls server is not installed. Install it into a Python virtual environment of this extension? (pip fetches its dependencies from your package index.)',
        'Install',
        'Set agentls.server.command',
      )
      .then((choice) => {
        if (choice === 'Set agentls.server.command') this.openSetting();
        if (choice === 'Install') install();
      });
  }

  /** The managed environment holds an older agentls than the bundled wheel: update it. */
  async updateIfNeeded(): Promise<void> {
    if (installNeed(this.wheel(), this.paths) === 'update') await this.install();
  }

  /** Installs (or updates) with a progress notification and the panel's card; on failure, says
   * why in both and offers the ways out. One install at a time: a second call joins the first. */
  install(): Promise<boolean> {
    this.installing ??= this.installOnce().finally(() => (this.installing = undefined));
    return this.installing;
  }

  private async installOnce(): Promise<boolean> {
    const wheel = this.wheel();
    if (!wheel) {
      const error = 'This build of the extension carries no server wheel. Set agentls.server.command.';
      this.onState({ phase: 'failed', error });
      void vscode.window.showErrorMessage(`agentls: ${error}`);
      return false;
    }
    const step = (text: string): void => this.onState({ phase: 'installing', version: wheel.version, step: text });
    step('looking for Python');
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `agentls: installing the server ${wheel.version}` },
        async (progress) => {
          const interpreter = await chooseInterpreter(await this.candidates());
          this.output.appendLine(`agentls: installing ${wheel.path} into ${this.paths.venv} with ${interpreter.command} (${interpreter.source})`);
          await installServer({
            interpreter,
            paths: this.paths,
            wheel,
            report: (text) => {
              progress.report({ message: text });
              step(text);
            },
            log: (text) => this.output.append(text),
          });
        },
      );
      this.output.appendLine(`agentls: installed agentls ${wheel.version} in ${this.paths.venv}`);
      this.onState(undefined);
      return true;
    } catch (err) {
      const message = err instanceof InstallError ? err.message : String(err);
      this.output.appendLine(`agentls: installing the server failed: ${message}`);
      this.onState({ phase: 'failed', version: wheel.version, error: message });
      void vscode.window.showErrorMessage(`agentls: ${message}`, 'Retry', 'Open Log', 'Set agentls.server.command').then((choice) => {
        if (choice === 'Retry') void vscode.commands.executeCommand('agentls.installServer');
        if (choice === 'Open Log') this.output.show();
        if (choice === 'Set agentls.server.command') this.openSetting();
      });
      return false;
    }
  }

  /**
   * The Python extension's selected interpreter when it is installed (and the workspace is trusted:
   * that interpreter may be the workspace's own), then python3 on PATH.
   */
  private async candidates(): Promise<Interpreter[]> {
    const candidates: Interpreter[] = [];
    const extension = vscode.extensions.getExtension<PythonEnvironmentsApi>('ms-python.python');
    if (extension && vscode.workspace.isTrusted) {
      try {
        const api = extension.isActive ? extension.exports : await extension.activate();
        const environments = api?.environments;
        const active = environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
        const resolved = active ? await environments?.resolveEnvironment(active) : undefined;
        const path = resolved?.executable?.uri?.fsPath;
        if (path) candidates.push({ command: path, source: 'python-extension' });
      } catch (err) {
        this.output.appendLine(`agentls: asking the Python extension for its interpreter: ${String(err)}`);
      }
    }
    candidates.push({ command: process.platform === 'win32' ? 'python' : 'python3', source: 'path' });
    return candidates;
  }

  private openSetting(): void {
    void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server.command');
  }
}
