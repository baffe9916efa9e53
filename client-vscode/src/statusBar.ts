// The status-bar item's text: idle / working (with the running tool) / waiting for approval, and
// the active session's cost. statusBarText is pure (unit-tested); StatusBar applies it.
import * as vscode from 'vscode';
import type { AgentHost, HostStatus } from './host';
import { formatCost } from './model/transcript';

export interface StatusBarContent {
  text: string;
  tooltip: string;
  attention: boolean;
  /** The command a click runs, when not opening the panel. */
  command?: string;
}

function shorten(text: string, max = 40): string {
  const line = text.split('\n')[0];
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

export function statusBarText(status: HostStatus): StatusBarContent {
  const cost = status.costUsd !== undefined ? ` · ${formatCost(status.costUsd)}` : '';
  // No server yet: the panel's set-up card says what to do.
  if (status.connection !== 'running' && status.setup) {
    const setup = {
      needed: { text: '$(cloud-download) agentls: not installed', tooltip: 'agentls: the server is not installed. Click to open the panel and install it.' },
      installing: { text: '$(sync~spin) agentls: installing', tooltip: 'agentls: installing the server. Click to open the panel.' },
      failed: { text: '$(error) agentls: install failed', tooltip: 'agentls: installing the server failed. Click to open the panel (Retry, the log).' },
    }[status.setup];
    return { ...setup, attention: status.setup !== 'installing' };
  }
  switch (status.connection) {
    case 'starting':
      return { text: '$(loading~spin) agentls', tooltip: 'agentls: starting the server', attention: false };
    case 'restarting':
      return { text: '$(warning) agentls: restarting', tooltip: 'agentls: the server stopped; restarting it', attention: true };
    case 'stopped':
      return { text: '$(error) agentls: stopped', tooltip: 'agentls: the server is not running. Click to open the panel.', attention: true };
    case 'running':
      break;
  }
  if (status.waitingForApproval) {
    const n = status.waitingForApproval;
    return {
      text: `$(bell-dot) agentls: approval needed${cost}`,
      tooltip: `agentls: ${n === 1 ? 'a request waits' : `${n} requests wait`} for your approval. Click to open the panel.`,
      attention: true,
    };
  }
  if (status.busy) {
    const what = status.runningTool ? `: ${shorten(status.runningTool)}` : '';
    return {
      text: `$(sync~spin) agentls${what}${cost}`,
      tooltip: `agentls is working${status.runningTool ? ` (running ${status.runningTool})` : ''}. Click to open the panel.`,
      attention: false,
    };
  }
  if (status.missingKey) {
    return {
      text: `$(warning) agentls: no API key${cost}`,
      tooltip: `agentls: the chosen model's provider has no API key (${status.missingKey}). Click to set it.`,
      attention: true,
      command: 'agentls.setApiKey',
    };
  }
  return { text: `$(hubot) agentls${cost}`, tooltip: 'agentls: idle. Click to open the panel.', attention: false };
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };

  constructor(private readonly host: AgentHost) {
    this.item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'agentls';
    this.item.command = 'agentls.panel.focus';
    this.subscription = host.onDidChange(() => this.update());
    this.update();
    this.item.show();
  }

  update(): void {
    const status = this.host.status();
    const content = statusBarText(status);
    this.item.text = content.text;
    this.item.tooltip = content.tooltip;
    this.item.command = content.command ?? 'agentls.panel.focus';
    this.item.backgroundColor = content.attention
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    void vscode.commands.executeCommand('setContext', 'agentls.busy', status.busy);
    void vscode.commands.executeCommand('setContext', 'agentls.activeBusy', !!status.activeBusy);
    void vscode.commands.executeCommand('setContext', 'agentls.waitingForApproval', status.waitingForApproval > 0);
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
