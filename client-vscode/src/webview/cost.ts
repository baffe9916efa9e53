// What the session cost, in the footer: "$0.12 · 17k tokens" (with "~" when part of it is an
// estimate: a step stopped before the API reported its output), and on hover or focus the
// breakdown: the model, input, output, cache read and write, the sub-agents' share, the last turn.
import type { Usage } from '../protocol/generated';
import { formatCost, formatTokens, totalTokens, type SessionUsage } from '../model/transcript';

function row(label: string, value: string): HTMLElement {
  const tr = document.createElement('tr');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = label;
  const td = document.createElement('td');
  td.textContent = value;
  tr.append(th, td);
  return tr;
}

function cost(usage: Usage): string {
  return `${usage.estimated ? '~' : ''}${formatCost(usage.costUsd)}`;
}

function tokens(n: number | undefined): string {
  return (n ?? 0).toLocaleString('en-US');
}

/** The footer's usage: the total, and its breakdown in a tooltip shown on hover and focus. */
export class CostView {
  private readonly total: HTMLSpanElement;
  private readonly tip: HTMLDivElement;

  constructor(readonly el: HTMLElement) {
    el.removeAttribute('title'); // the breakdown says it
    el.classList.add('cost');
    el.tabIndex = 0;
    this.total = document.createElement('span');
    this.total.className = 'cost-total';
    this.tip = document.createElement('div');
    this.tip.className = 'cost-tip';
    this.tip.id = 'cost-breakdown';
    this.tip.setAttribute('role', 'tooltip');
    el.setAttribute('aria-describedby', this.tip.id);
    el.replaceChildren(this.total, this.tip);
  }

  /** Draw the usage of a session (nothing without one). */
  show(usage: SessionUsage | undefined, model: string | undefined): void {
    if (!usage) {
      this.total.textContent = '';
      this.tip.replaceChildren();
      this.el.hidden = true;
      return;
    }
    this.el.hidden = false;
    const session = usage.session;
    this.total.textContent = `${cost(session)} · ${formatTokens(totalTokens(session))} tokens`;
    const table = document.createElement('table');
    const body = document.createElement('tbody');
    if (model) body.append(row('Model', model));
    body.append(
      row('Input', tokens(session.inputTokens)),
      row('Output', tokens(session.outputTokens)),
      row('Cache read', tokens(session.cacheReadTokens)),
      row('Cache write', tokens(session.cacheWriteTokens)),
    );
    const sub = usage.subagents;
    if (sub) body.append(row('Sub-agents', `${cost(sub)} · ${formatTokens(totalTokens(sub))} tokens`));
    if (usage.turn.costUsd !== undefined) body.append(row('Last turn', cost(usage.turn)));
    body.append(row('Session', cost(session)));
    table.append(body);
    const parts: HTMLElement[] = [table];
    if (session.estimated) {
      const note = document.createElement('p');
      note.className = 'cost-note';
      note.textContent = '~ includes an estimate: a step was stopped before the API reported its output.';
      parts.push(note);
    }
    this.tip.replaceChildren(...parts);
  }
}
