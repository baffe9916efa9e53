// The side panel: a webview view in the agentls activity-bar container. It is a renderer only; the
// state lives in AgentHost, so the panel can be hidden, disposed and rebuilt (it asks with 'ready').
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { AgentHost } from './host';
import { isPanelMessage, type HostMessage } from './model/messages';
import { panelHtml } from './webviewHtml';

export const PANEL_VIEW_ID = 'agentls.panel';

export class ChatPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  private view?: vscode.WebviewView;
  private host?: AgentHost;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly extensionUri: vscode.Uri) {}

  attach(host: AgentHost): void {
    this.host = host;
  }

  get visible(): boolean {
    return !!this.view?.visible;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = panelHtml({
      cspSource: view.webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
    });
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: unknown) => {
        if (!isPanelMessage(message) || !this.host) return;
        this.host.handlePanelMessage(message).catch((err: unknown) => {
          void vscode.window.showErrorMessage(`agentls: ${String(err)}`);
        });
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  post(message: HostMessage): void {
    // A hidden panel has no page to receive it; it asks for the whole state when it loads again.
    if (this.view) void this.view.webview.postMessage(message);
  }

  /** Show the panel; without taking the focus unless asked to. */
  async reveal(focus: boolean): Promise<void> {
    if (this.view && !focus) {
      this.view.show(true);
      return;
    }
    await vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
