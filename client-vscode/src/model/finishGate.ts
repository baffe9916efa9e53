import type { FinishGateEvent } from '../protocol/generated';

/** How the finish gate's message to the model begins (session/finish_gate.py GATE_MARK): stored
 * as a user message, it is shown from the history as what the gate said, not as the user's. */
export const GATE_MARK = '[agentls finish gate';

/** How many problems the line names by place (file:line); the rest are counted. */
const NAMED = 3;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The finish gate's result as the small line the panel shows on the turn: the files checked
 * again before the turn could end, and the problems the turn introduced ("Checked 3 files: no new
 * errors", "2 errors left after 2 tries (b.py:1, b.py:5)"), and how loud it is. */
export function gateLine(event: FinishGateEvent): { level: 'info' | 'warning'; text: string } {
  const kind = event.level === 'warnings' ? 'errors or warnings' : 'errors';
  const problems = event.problems ?? [];
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  const count = (adjective: string): string =>
    [errors ? plural(errors, `${adjective}error`) : '', warnings ? plural(warnings, `${adjective}warning`) : ''].filter(Boolean).join(' and ');
  const places = problems.slice(0, NAMED).map((p) => `${p.path}:${p.line}`);
  if (problems.length > NAMED) places.push(`${problems.length - NAMED} more`);
  const where = places.length ? ` (${places.join(', ')})` : '';
  const unchecked = event.unchecked ? `; ${plural(event.unchecked, 'file')} not checked (no diagnostics in time)` : '';
  const checked = `Checked ${plural(event.checked, 'file')}`;
  switch (event.status) {
    case 'clean':
      return { level: 'info', text: `${checked}: no new ${kind}${unchecked}` };
    case 'sent-back':
      return {
        level: 'info',
        text: `${checked}: ${count('new ')}${where}, sent back to the agent (${event.attempt} of ${event.maxAttempts})${unchecked}`,
      };
    case 'left':
      return {
        level: 'warning',
        text: event.attempt
          ? `${count('')} left after ${event.attempt === 1 ? '1 try' : `${event.attempt} tries`}${where}${unchecked}`
          : `${count('new ')} left (finishGateSteps is 0)${where}${unchecked}`,
      };
  }
}
