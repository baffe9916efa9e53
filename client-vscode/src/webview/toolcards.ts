// What a tool card says, calmly: its one-line title (relative paths, as links; a sub-agent's
// description, never "task task:"), its status ("Rejected", not "failed", for a call the user
// turned down, with their note), the todo list's updates folded into the pinned list, and a
// sub-agent's result without the internal "[sub-agent …, session ses_…]" line.
import type { CodeMessage } from '../model/codeBlocks';
import type { ToolItem } from '../model/transcript';
import { linkPaths, pathLink, relativePaths, wholePath } from './paths';

const STATUS_LABELS: Record<string, string> = {
  pending: 'pending',
  running: 'running',
  completed: 'done',
  error: 'failed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

/** What the server's result of a rejected call starts with (session/calls.py). */
const REJECTED_RESULT = /^The user rejected this \S+ call\b/;

/** The call was turned down by the user (answered Reject), not failed: the answer, or, in a
 * session loaded from its history (no answers kept), the result the server gave the model. */
export function wasRejected(item: ToolItem): boolean {
  if (item.permission) return item.permission.state === 'reject';
  return item.status === 'error' && REJECTED_RESULT.test(item.output ?? '');
}

/** The status word of the card's line, and the class its colour comes from. */
export function toolStatus(item: ToolItem): { text: string; className: string } {
  if (item.tool === 'ask_user' && item.permission?.state === 'pending') return { text: 'needs your answer', className: `status-${item.status}` };
  if (item.tool === 'ask_user' && item.permission?.state === 'reject') return { text: 'skipped', className: `status-${item.status}` };
  if (item.permission?.state === 'pending') return { text: 'needs approval', className: `status-${item.status}` };
  if (wasRejected(item)) return { text: 'Rejected', className: 'status-rejected' };
  if (item.permission?.state === 'timeout' && item.status === 'error') return { text: 'not approved', className: 'status-rejected' };
  return { text: STATUS_LABELS[item.status] ?? item.status, className: `status-${item.status}` };
}

/** The note the user gave with a Reject (the server's result says "Their feedback: …"). */
export function rejectionNote(item: ToolItem): string | undefined {
  if (!wasRejected(item) || !item.output) return undefined;
  const m = /Their feedback: ([\s\S]*)$/.exec(item.output);
  return m?.[1].trim() || undefined;
}

/** The card's title: a sub-agent's description; else the call's title without a repeat of the
 * tool's name ("edit calc.py" -> "calc.py"), paths relative to the workspace. */
export function toolTitle(item: ToolItem): string {
  if (item.tool === 'task') {
    const description = item.input.description;
    if (typeof description === 'string' && description.trim()) return description.trim();
    return item.title.replace(/^task\s*:?\s*/i, '').trim() || 'Sub-agent';
  }
  const title = relativePaths(item.title.trim());
  const tool = item.tool.toLowerCase();
  for (const prefix of [tool + ': ', tool + ' ']) {
    if (title.toLowerCase().startsWith(prefix)) return title.slice(prefix.length);
  }
  return title;
}

/** The tool's name on the card ("Sub-agent explorer" for a task). */
export function toolName(item: ToolItem): string {
  if (item.tool === 'task') return item.agent ? `Sub-agent ${item.agent}` : 'Sub-agent';
  return item.tool;
}

export function titleElement(item: ToolItem, post: (message: CodeMessage) => void): HTMLElement {
  const span = document.createElement('span');
  span.className = 'tool-title';
  const text = toolTitle(item);
  span.title = text;
  const path = item.tool === 'task' ? undefined : wholePath(text);
  if (path) span.append(pathLink(path, text, post)); // "calc.py": the title is the file
  else span.textContent = text;
  if (item.tool !== 'task' && !path) linkPaths(span, post);
  return span;
}

/** A call's input as "name value" lines (a nested value as compact JSON), not a JSON document. */
export function inputFields(input: Record<string, unknown>): HTMLElement {
  const list = document.createElement('dl');
  list.className = 'input-fields';
  for (const [key, value] of Object.entries(input)) {
    const name = document.createElement('dt');
    name.textContent = key;
    const shown = document.createElement('dd');
    shown.textContent = typeof value === 'string' ? relativePaths(value) : JSON.stringify(value);
    list.append(name, shown);
  }
  return list;
}

/** A todowrite call whose update is shown by the pinned todo list, not by a card of its own
 * (one that waits for an answer or failed keeps its card). */
export function foldsIntoTodoList(item: ToolItem): boolean {
  return item.tool === 'todowrite' && item.status !== 'error' && item.permission?.state !== 'pending';
}

const SUB_AGENT_LINE = /\n*\[sub-agent [^\]\n]*\]\s*$/;

/** A task call's result as the user reads it: the sub-agent's answer, without the line naming
 * its internal session. */
export function subAgentResult(output: string): string {
  return output.replace(SUB_AGENT_LINE, '').trim();
}

/** Tools whose output lists files (a path per line, grep's with `:line`). */
const LISTS_FILES = new Set(['glob', 'grep', 'list']);
/** Past this, an output is shown as it is (linking every path of a huge listing costs too much). */
const MAX_LINKED_OUTPUT = 50_000;

/** A call's output; a file listing's paths are links that open the file (at grep's line). */
export function outputBlock(item: ToolItem, post: (message: CodeMessage) => void): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = `tool-output${item.isError ? ' error' : ''}`;
  const output = item.output || '(no output)';
  pre.textContent = output;
  if (LISTS_FILES.has(item.tool) && !item.isError && output.length <= MAX_LINKED_OUTPUT) linkPaths(pre, post, true);
  return pre;
}
