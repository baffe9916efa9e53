// The session's todo list (the agent's todowrite tool), pinned above the transcript: a summary
// line ("Todo · 2 of 5 done", the item in progress) that opens to the whole list. Also the plan
// mode notice. Plain DOM, no state of its own: renderPinned draws what the view holds.
import type { TodoItem } from '../protocol/generated';
import { el } from './dom';

const MARKS: Record<TodoItem['status'], string> = { pending: '○', in_progress: '◐', completed: '●' };
const LABELS: Record<TodoItem['status'], string> = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

/** "2 of 5 done", and what is in progress. */
export function todoSummary(todos: TodoItem[]): string {
  const done = todos.filter((t) => t.status === 'completed').length;
  const current = todos.find((t) => t.status === 'in_progress');
  return `Todo · ${done} of ${todos.length} done${current ? ` · ${current.content}` : ''}`;
}

/** The pinned box's content for a todo list and a mode; hidden when there is neither. */
export function renderPinned(box: HTMLDetailsElement, todos: TodoItem[] | undefined, mode: string | undefined): void {
  const open = box.open;
  box.replaceChildren();
  const list = todos ?? [];
  const planning = mode === 'plan';
  box.hidden = !list.length && !planning;
  if (box.hidden) return;
  const summary = el('summary', 'pinned-summary');
  if (planning) {
    summary.append(el('span', 'mode-badge', 'Plan mode'));
    summary.append(list.length ? ' ' : ' nothing changes until you approve the plan');
  }
  if (list.length) summary.append(el('span', 'todo-summary', todoSummary(list)));
  box.append(summary);
  if (list.length) {
    const ul = el('ul', 'todo-list');
    ul.setAttribute('aria-label', 'Todo list');
    for (const todo of list) {
      const li = el('li', `todo status-${todo.status}${todo.priority ? ` priority-${todo.priority}` : ''}`);
      li.title = LABELS[todo.status] + (todo.priority ? `, ${todo.priority} priority` : '');
      li.append(el('span', 'todo-mark', MARKS[todo.status]), el('span', 'todo-content', todo.content));
      ul.append(li);
    }
    box.append(ul);
  }
  box.open = open;
}
