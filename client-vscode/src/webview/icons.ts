// VS Code's own icons (codicons, from @vscode/codicons, bundled into webview.css) and the icon
// buttons of the panel: the icon shows, the label is the button's accessible name and tooltip.

export function icon(name: string, ...extra: string[]): HTMLSpanElement {
  const span = document.createElement('span');
  span.className = ['codicon', `codicon-${name}`, ...extra].join(' ');
  span.setAttribute('aria-hidden', 'true');
  return span;
}

export function iconButton(name: string, label: string, onClick?: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'icon-button';
  b.title = label;
  b.setAttribute('aria-label', label);
  b.append(icon(name));
  if (onClick) b.addEventListener('click', onClick);
  return b;
}
