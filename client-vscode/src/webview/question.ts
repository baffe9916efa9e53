// ask_user's card: the agent's question, its choices as buttons, a field for an answer in the
// user's own words, and Skip. The answer goes back as agent/approve: decision "once" with the
// answer in `feedback` (a choice's text or the words typed); Skip is "reject".
import { el } from './dom';

export type QuestionAnswer = (decision: 'once' | 'reject', answer?: string) => void;

/** What the user has typed into each open question (by request id), kept across re-renders. */
const drafts = new Map<string, string>();

/** The question's choices as ask_user sent them (strings only). */
export function choicesOf(input: Record<string, unknown>): string[] {
  const choices = input.choices;
  return Array.isArray(choices) ? choices.filter((c): c is string => typeof c === 'string' && c.trim() !== '') : [];
}

/** The card's pending part: the question, a button per choice, the free-text answer, Skip. */
export function questionBlock(requestId: string, input: Record<string, unknown>, answer: QuestionAnswer): HTMLElement {
  const question = typeof input.question === 'string' ? input.question : '';
  const block = el('div', 'permission pending question');
  block.setAttribute('role', 'group');
  block.setAttribute('aria-label', 'Question from agentls');
  block.append(el('div', 'permission-title', 'agentls asks:'), el('div', 'question-text', question));
  const send = (decision: 'once' | 'reject', words?: string): void => {
    drafts.delete(requestId);
    answer(decision, words);
  };
  const choices = choicesOf(input);
  if (choices.length) {
    const list = el('div', 'question-choices');
    list.setAttribute('role', 'list');
    choices.forEach((choice, n) => {
      const button = el('button', 'question-choice', choice);
      button.setAttribute('role', 'listitem');
      button.dataset.choice = String(n);
      button.addEventListener('click', () => send('once', choice));
      list.append(button);
    });
    block.append(list);
  }
  const field = el('input', 'feedback question-answer');
  field.type = 'text';
  field.placeholder = choices.length ? 'Or answer in your own words' : 'Your answer';
  field.setAttribute('aria-label', 'Your answer to the agent');
  field.value = drafts.get(requestId) ?? '';
  const reply = el('button', '', 'Send');
  reply.dataset.action = 'answer';
  reply.disabled = !field.value.trim();
  const skip = el('button', 'secondary', 'Skip');
  skip.dataset.action = 'skip';
  skip.title = 'Do not answer: the agent goes on with its own judgement';
  field.addEventListener('input', () => {
    drafts.set(requestId, field.value);
    reply.disabled = !field.value.trim();
  });
  field.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && field.value.trim()) {
      e.preventDefault();
      send('once', field.value.trim());
    }
  });
  reply.addEventListener('click', () => {
    if (field.value.trim()) send('once', field.value.trim());
  });
  skip.addEventListener('click', () => send('reject'));
  const buttons = el('div', 'buttons');
  buttons.append(reply, skip);
  block.append(field, buttons);
  if (!choices.length) queueMicrotask(() => field.focus());
  return block;
}

/** The card's line once the question is closed. */
export function questionResolved(state: string): string {
  switch (state) {
    case 'once':
    case 'always':
      return 'Answered';
    case 'reject':
      return 'Skipped';
    case 'timeout':
      return 'No answer in time';
    case 'unattended':
      return 'Not asked: no one at a terminal';
    default:
      return 'Cancelled';
  }
}
