// The composer's pickers, as in Copilot Chat and Continue: the mode (build / plan) and the model
// (models.ts) on one line under the prompt box, beside Stop and Send, each shrinking before
// anything overflows (panel.css: the sidebar's default width is about 300 px).
import { icon } from './icons';

/** The line under the prompt box that holds the pickers (before Stop and Send). */
export function pickerRow(actions: HTMLElement): HTMLDivElement {
  const row = document.createElement('div');
  row.className = 'composer-pickers';
  actions.prepend(row);
  return row;
}

/** Plan mode on/off for the active session (agent/setMode): it shows the mode it is in. */
export function modeButton(): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.id = 'mode';
  b.className = 'secondary mode chip';
  b.setAttribute('aria-pressed', 'false');
  b.setAttribute('aria-label', 'Plan mode');
  b.title = 'Build mode: the agent reads, edits and runs commands (each change as your rules say). Click for plan mode: it only reads and plans; nothing changes until you approve its plan.';
  showMode(b, false);
  return b;
}

export function showMode(b: HTMLButtonElement, planning: boolean): void {
  if (b.dataset.mode === (planning ? 'plan' : 'build')) return;
  b.dataset.mode = planning ? 'plan' : 'build';
  const label = document.createElement('span');
  label.className = 'chip-label';
  label.textContent = planning ? 'Plan' : 'Build';
  b.replaceChildren(icon(planning ? 'checklist' : 'tools'), label);
  b.title = planning
    ? 'Plan mode: the agent only reads and plans; nothing changes until you approve its plan. Click for build mode.'
    : 'Build mode: the agent reads, edits and runs commands (each change as your rules say). Click for plan mode: it only reads and plans.';
}
