// The panel's HTML: one script (by nonce) and one stylesheet from the extension (with the codicon
// font it bundles, served from the same place), nothing remote. The session list, the set-up card
// and the pickers are added by the script (history.ts, setup.ts, composer.ts).

export interface PanelHtmlOptions {
  /** The webview's cspSource (where its local resources are served from). */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export function panelHtml(options: PanelHtmlOptions): string {
  const csp = contentSecurityPolicy(options.cspSource, options.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(options.styleUri)}">
<title>agentls</title>
</head>
<body>
<div id="app">
  <main id="transcript" tabindex="0" aria-label="Conversation"></main>
  <div id="announcer" class="visually-hidden" aria-live="polite" aria-label="Answers read aloud"></div>
  <footer class="composer">
    <div class="meta">
      <span id="activity" role="status"></span>
      <span id="usage" title="Cost and tokens of this session"></span>
    </div>
    <label class="visually-hidden" for="prompt">Prompt</label>
    <textarea id="prompt" rows="3" placeholder="Ask agentls… (Enter to send, Shift+Enter for a new line)"></textarea>
    <div class="composer-actions">
      <button id="stop" class="icon-button stop" title="Stop the running turn" aria-label="Stop the running turn" hidden disabled><span class="codicon codicon-debug-stop" aria-hidden="true"></span></button>
      <button id="send-background" class="icon-button" title="Run in background: a new session in its own git worktree and branch" aria-label="Run in background"><span class="codicon codicon-git-branch" aria-hidden="true"></span></button>
      <button id="send" class="icon-button send" title="Send (Enter)" aria-label="Send the prompt"><span class="codicon codicon-send" aria-hidden="true"></span></button>
    </div>
  </footer>
</div>
<script nonce="${attr(options.nonce)}" src="${attr(options.scriptUri)}"></script>
</body>
</html>
`;
}

export function makeNonce(random: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) out += chars[Math.floor(random() * chars.length)];
  return out;
}
