// The Fork button on an answer (a new session with the history up to that message). The session
// list, its search and each session's Rename / Delete / Export are in history.ts.
import type { SessionActionMessage } from '../model/sessionActions';

function button(label: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.className = 'secondary session-action';
  b.type = 'button';
  b.textContent = text;
  b.title = label;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

/** The Fork button of an answer: a new session with the history up to this message. */
export function forkButton(
  sessionId: string,
  messageId: string,
  post: (message: SessionActionMessage) => void,
): HTMLButtonElement {
  const b = button('Fork: a new session from here', 'Fork', () => post({ type: 'fork-session', sessionId, messageId }));
  // The label is drawn by CSS (.fork::before): the answer's text stays only its text (copy, tests).
  b.textContent = '';
  b.classList.add('fork');
  return b;
}
