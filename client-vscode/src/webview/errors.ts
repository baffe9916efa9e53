// A failed turn's error as a card a person can act on: what happened (the server's sentence), the
// next step, Retry when it makes sense (agent/retry: the turn goes on from where it failed), and
// the details (the exception) behind a disclosure. Plain DOM; the item holds all it shows.
import type { NoticeItem } from '../model/transcript';

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

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The card of a notice with a failure; `retry` asks for agent/retry (none: no Retry, as in a
 * sub-agent's card, whose task the parent's turn retries). */
export function failureCard(item: NoticeItem, retry?: () => void): HTMLElement {
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
  if (retry && failure.retryable && !failure.retried && !item.reverted) {
    const actions = el('div', 'failure-actions');
    const button = el('button', 'retry');
    const label = el('span', 'codicon codicon-refresh');
    label.setAttribute('aria-hidden', 'true');
    button.append(label, ' Retry');
    button.title = 'Run the turn again from where it failed (the steps it completed are kept)';
    button.addEventListener('click', () => {
      button.disabled = true;
      retry();
    });
    actions.append(button);
    card.append(actions);
  }
  if (failure.details) {
    const details = el('details', 'failure-details');
    details.append(el('summary', '', 'Details'), el('pre', '', failure.details));
    card.append(details);
  }
  return card;
}
