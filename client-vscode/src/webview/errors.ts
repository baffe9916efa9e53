// A failed turn's error as a card a person can act on: what happened (the server's sentence), the
// next step, Retry when it makes sense (agent/retry: the turn goes on from where it failed), and
// the details (the exception) behind a disclosure. Plain DOM; the item holds all it shows.
import type { PanelMessage } from '../model/messages';
import type { NoticeItem } from '../model/transcript';
import { el } from './dom';

/** What each kind of failure is called on the card's badge. */
const KINDS: Record<string, string> = {
  network: 'Network',
  auth: 'API key',
  rate_limit: 'Rate limit',
  overloaded: 'Overloaded',
  context_too_long: 'Context too long',
  bad_request: 'Request refused',
  internal: 'Internal error',
};

/** A button of the card: its codicon and label; a click posts its message (and disables it). */
function action(icon: string, label: string, title: string, onClick: () => void): HTMLButtonElement {
  const button = el('button', 'secondary');
  const glyph = el('span', `codicon codicon-${icon}`);
  glyph.setAttribute('aria-hidden', 'true');
  button.append(glyph, el('span', '', label));
  button.title = title;
  button.addEventListener('click', () => {
    button.disabled = true;
    onClick();
  });
  return button;
}

/** The card of a notice with a failure. `post` sends the card's actions to the extension: Retry
 * (agent/retry), Set API key for a key problem, Show log for a bug; without it (a sub-agent's
 * card, whose task the parent's turn retries) the card has no buttons. */
export function failureCard(item: NoticeItem, post?: (message: PanelMessage) => void): HTMLElement {
  const failure = item.failure;
  const card = el('div', 'notice error failure');
  card.setAttribute('role', 'alert');
  if (!failure) return card;
  card.dataset.kind = failure.kind;
  const head = el('div', 'failure-head');
  const icon = el('span', 'codicon codicon-error');
  icon.setAttribute('aria-hidden', 'true');
  head.append(icon, el('span', 'failure-message', item.text));
  const kind = KINDS[failure.kind];
  if (kind) head.append(el('span', 'failure-kind', kind));
  card.append(head);
  if (failure.nextStep) card.append(el('div', 'failure-next', failure.nextStep));
  if (post && !failure.retried && !item.reverted) {
    const actions = el('div', 'failure-actions');
    if (failure.kind === 'auth') {
      const key = action('key', 'Set API key', "Set the API key of this model's provider", () => post({ type: 'set-api-key' }));
      key.addEventListener('click', () => (key.disabled = false)); // it may be set again
      actions.append(key);
    }
    if (failure.kind === 'internal') actions.append(action('output', 'Show log', "Open agentls's log", () => post({ type: 'show-log' })));
    if (failure.retryable) {
      const retry = action('refresh', 'Retry', 'Run the turn again from where it failed (the steps it completed are kept)', () => post({ type: 'retry' }));
      retry.className = 'retry';
      actions.append(retry);
    }
    if (actions.childElementCount) card.append(actions);
  }
  if (failure.details) {
    const details = el('details', 'failure-details');
    details.append(el('summary', '', 'Details'), el('pre', '', failure.details));
    card.append(details);
  }
  return card;
}
