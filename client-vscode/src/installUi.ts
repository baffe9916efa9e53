// The VS Code side of installing the bundled server (install.ts): the first-run offer, the
// progress notification, the update at activation, and errors that offer Retry / Open Log / Set
// agentls.server.command.
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

/** The part of the Python extension's API we use (its `environments` API). */
interface PythonEnvironmentsApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(path: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

export class ServerInstaller {
  readonly paths: ManagedPaths;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {
    this.paths = managedPaths(context.globalStorageUri.fsPath);
  }

  private wheel() {
    return findBundledWheel(join(this.context.extensionPath, 'dist', 'wheel'));
  }

  /** No agentls found: offer to install the bundled one. True when it was installed. */
  async offer(): Promise<boolean> {
    if (installNeed(this.wheel(), this.paths) !== 'install') return false;
    const choice = await vscode.window.showInformationMessage(
      'agentls: the agentls server is not installed. Install it into a Python virtual environment of this extension? (pip fetches its dependencies from your package index.)',
      'Install',
      'Set agentls.server.command',
    );
    if (choice === 'Set agentls.server.command') this.openSetting();
    return choice === 'Install' ? this.install() : false;
  }

  /** The managed environment holds an older agentls than the bundled wheel: update it. */
  async updateIfNeeded(): Promise<void> {
    if (installNeed(this.wheel(), this.paths) === 'update') await this.install();
  }

  /** Installs (or updates) with a progress notification; on failure, says why and offers the ways out. */
  async install(): Promise<boolean> {
    const wheel = this.wheel();
    if (!wheel) {
      void vscode.window.showErrorMessage('agentls: this build of the extension carries no server wheel. Set agentls.server.command.');
      return false;
    }
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
            report: (step) => progress.report({ message: step }),
            log: (text) => this.output.append(text),
          });
        },
      );
      this.output.appendLine(`agentls: installed agentls ${wheel.version} in ${this.paths.venv}`);
      return true;
    } catch (err) {
      const message = err instanceof InstallError ? err.message : String(err);
      this.output.appendLine(`agentls: installing the server failed: ${message}`);
      const choice = await vscode.window.showErrorMessage(`agentls: ${message}`, 'Retry', 'Open Log', 'Set agentls.server.command');
      if (choice === 'Retry') return this.install();
      if (choice === 'Open Log') this.output.show();
      if (choice === 'Set agentls.server.command') this.openSetting();
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
