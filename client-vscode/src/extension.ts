// agentls for VS Code: wires the server (server.ts), the state (host.ts), the panel (panel.ts),
// the review of proposed edits (approvals.ts) and the status bar together, and registers commands.
import * as vscode from 'vscode';
import { ApprovalController } from './approvals';
import { AgentHost } from './host';
import { Mentions } from './mentions';
import { ChatPanel, PANEL_VIEW_ID } from './panel';
import { ServerManager } from './server';
import { ANTHROPIC_KEY_ENV, ApiKeys, validKeyName } from './apiKeys';
import { StatusBar } from './statusBar';
import { sessionDialogs } from './sessionDialogs';
import { ReviewViews } from './reviewAfter';
import { BackgroundConflicts } from './backgroundMerge';
import { CodeActions } from './codeActions';
import { codeEditor } from './codeEditor';
import { contextLabel } from './model/transcript';
import { SelectionActions } from './selectionActions';
import { InlineChats } from './inlineChatWidget';
import { agentPathToFile, nameFolders } from './folders';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const panel = new ChatPanel(context.extensionUri);
  const mentions = new Mentions();
  context.subscriptions.push(mentions);
  let approvals: ApprovalController | undefined;
  let inline: InlineChats | undefined;
  const reviewViews = new ReviewViews();
  context.subscriptions.push(reviewViews);
  // Code blocks' Copy / Insert / Apply, path links, the editor's theme for their colours.
  const codeActions = new CodeActions(codeEditor(context.extensionUri), (message) => panel.post(message));
  context.subscriptions.push(vscode.window.onDidChangeActiveColorTheme(() => void codeActions.sendContext()));
  const host = new AgentHost(
    {
      post: (message) => panel.post(message),
      showError: (message) => void vscode.window.showErrorMessage(message),
      openDiff: (requestId) => void approvals?.openDiff(requestId),
      decideHunk: (ref, state) => void approvals?.decideHunk(ref, state),
      panelReady: () => approvals?.repost(),
      editedProposal: (requestId) => approvals?.editedProposal(requestId),
      openFile: (path) => {
        // "lib/util.py" with several folders: the folder named first (folders.ts).
        const folders = nameFolders((vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: f.uri.fsPath })));
        void vscode.window.showTextDocument(vscode.Uri.file(agentPathToFile(path, folders) ?? path), { preview: true });
      },
      mentions,
      sessions: sessionDialogs,
      review: reviewViews,
      backgroundConflicts: new BackgroundConflicts(reviewViews),
      code: codeActions,
      // The set-up card's buttons run the commands of the same names.
      setup: (message) => {
        const commands = {
          'install-server': 'agentls.installServer',
          'set-api-key': 'agentls.setApiKey',
          'restart-server': 'agentls.restartServer',
          'open-settings': 'agentls.openSettings',
          'show-log': 'agentls.showLog',
        } as const;
        void vscode.commands.executeCommand(commands[message.type], ...(message.type === 'set-api-key' && message.name ? [message.name] : []));
      },
    },
    context.workspaceState,
  );
  panel.attach(host);
  const keys = new ApiKeys(context.secrets, context.globalState);
  const server = new ServerManager(context, host, keys);
  manager = server;
  approvals = new ApprovalController(
    host,
    (uri) => vscode.Uri.parse(uri),
    (message) => console.warn(message),
    (message) => {
      panel.post(message);
      if (message.type === 'proposal-kept') inline?.kept(message.requestId, message.kept, message.total);
    },
  );
  const reviews = approvals;
  // Inline chat on a selection (Ctrl+I, "Agent: edit here…"): its proposals are drawn in place.
  inline = new InlineChats(host, vscode.Uri.joinPath(context.extensionUri, 'media', 'agentls.svg'));
  approvals.drawnInPlace = (sessionId) => inline?.owns(sessionId) ?? false;
  context.subscriptions.push(inline);

  // Bash (and other non-edit) requests are answered in the panel: show it, keep the focus.
  host.onEvent((event) => {
    if (event.type === 'permission-request' && !event.edit && !panel.visible) void panel.reveal(false);
  });

  const command = (id: string, run: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };

  command('agentls.revealPanel', () => panel.reveal(false));
  command('agentls.newSession', async () => {
    await host.newSession();
    await panel.reveal(true);
    panel.post({ type: 'focus-prompt' });
  });
  command('agentls.stop', () => host.cancel());
  const focusPrompt = async (): Promise<void> => {
    await panel.reveal(true);
    panel.post({ type: 'focus-prompt' });
  };
  command('agentls.focusPrompt', focusPrompt);
  // After an answer given in an editor (the palette, a lens, a key), the focus returns to the
  // prompt box, unless another proposal waits (its diff is where the user works next).
  context.subscriptions.push(
    reviews.onDidAnswer((requestId) => {
      const sessionId = host.findPermission(requestId)?.view.sessionId;
      if (sessionId && inline?.owns(sessionId)) return; // an inline chat's: the focus stays in the editor
      if (!reviews.waitingBesides(requestId)) void focusPrompt();
    }),
  );
  // A selection is context, not a prompt (issue 29 item 2): it goes into the panel's prompt box
  // as a chip (selectionChip.ts), the box takes the focus, and nothing is sent until Enter.
  command('agentls.askAboutSelection', async (uriArg, rangeArg) => {
    const active = vscode.window.activeTextEditor;
    const document =
      uriArg instanceof vscode.Uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uriArg.toString()) : active?.document;
    if (!document) {
      void vscode.window.showInformationMessage('agentls: open a file and select the code to ask about.');
      return;
    }
    let range: vscode.Range = rangeArg instanceof vscode.Range ? rangeArg : (active?.selection ?? new vscode.Range(0, 0, 0, 0));
    if (range.isEmpty) range = document.lineAt(range.start.line).range;
    const uri = document.uri.toString();
    const wire = { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
    const label = contextLabel(uri, wire); // calc.py:3-7
    const name = vscode.workspace.asRelativePath(document.uri, false) + label.slice(label.lastIndexOf(':')); // src/calc.py:3-7
    const session = vscode.workspace.getConfiguration('agentls').get<string>('selectionSession') === 'new' ? 'new' : 'current';
    await panel.reveal(true);
    panel.post({ type: 'add-selection', item: { label, detail: name, name, ref: { uri, range: wire } }, session });
  });
  const chats = inline;
  command('agentls.inlineChat', (uriArg, rangeArg) => chats.open(uriArg, rangeArg));
  command('agentls.inlineChat.submit', (reply) => chats.submit(reply));
  command('agentls.inlineChat.stop', (thread) => chats.stop(thread));
  command('agentls.inlineChat.close', (thread) => chats.closeCommand(thread));
  // The key of the chosen model's provider (or of the variable a caller names: the panel's "Set
  // API key" button), kept in secret storage and used by the running server at once.
  command('agentls.setApiKey', async (arg) => {
    const name = typeof arg === 'string' && validKeyName(arg) ? arg : (host.models.missingKey() ?? ANTHROPIC_KEY_ENV);
    const key = await vscode.window.showInputBox({
      title: `agentls: API key (${name})`,
      prompt: 'Kept in VS Code\'s secret storage; the running server uses it at once. Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    await keys.set(name, key);
    await server.useApiKey(name, key.trim());
    void vscode.window.showInformationMessage(key.trim() ? `agentls: the key for ${name} is saved and in use.` : `agentls: the key for ${name} is removed.`);
  });
  command('agentls.showHistory', () => {
    void panel.reveal(true).then(() => panel.post({ type: 'show-history' }));
  });
  command('agentls.openSettings', () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:agentls.agentls'));
  command('agentls.restartServer', () => server.restart());
  command('agentls.showLog', () => server.showLog());
  command('agentls.installServer', () => server.installServer());
  command('agentls.acceptEdit', (arg) => reviews.decide(arg, 'once'));
  command('agentls.acceptEditAlways', (arg) => reviews.decide(arg, 'always'));
  command('agentls.acceptEditAlwaysProject', (arg) => reviews.decide(arg, 'always', 'project'));
  command('agentls.rejectEdit', (arg) => reviews.decide(arg, 'reject'));
  command('agentls.showEditDiff', (arg) => reviews.openDiff(arg));
  command('agentls.acceptHunk', (arg) => reviews.decideHunk(arg, 'accepted'));
  command('agentls.rejectHunk', (arg) => reviews.decideHunk(arg, 'rejected'));
  command('agentls.resetHunk', (arg) => reviews.decideHunk(arg, 'pending'));
  command('agentls.nextHunk', () => reviews.nextHunk());

  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, panel),
    vscode.languages.registerCodeActionsProvider({ scheme: 'file' }, new SelectionActions(), SelectionActions.metadata),
    panel,
    reviews,
    new StatusBar(host),
    server,
    { dispose: () => host.dispose() },
  );
  void server.start();
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
