// Checkpoints in the panel: a Restore button on each of the user's messages opens a form with a
// choice of code, conversation or both and a preview (agent/revert dryRun: the files it restores,
// the files changed since that are not overwritten, the commands not undone); Restore asks the
// extension to revert, which reloads the transcript and puts the message back in the prompt box.
// A Redo bar (agent/unrevert) stays until the next prompt.
import type { CheckpointMessage, CheckpointResult, RevertScope } from '../model/checkpoints';
import type { UserItem } from '../model/transcript';
import type { RevertResult } from '../protocol/generated';
import { el } from './dom';

type Preview = Extract<CheckpointResult, { type: 'revert-preview' }>;
type Reverted = Extract<CheckpointResult, { type: 'reverted' }>;

interface Form {
  sessionId: string;
  scope: RevertScope;
  preview?: RevertResult;
  error?: string;
  loading: boolean;
  sending: boolean;
}

const SCOPES: { scope: RevertScope; label: string; title: string }[] = [
  { scope: 'both', label: 'Code and conversation', title: 'Restore the files and drop this message and everything after it' },
  { scope: 'code', label: 'Code only', title: 'Restore the files the agent changed since this message; keep the conversation' },
  { scope: 'conversation', label: 'Conversation only', title: 'Drop this message and everything after it; keep the files' },
];

function button(text: string, className: string, onClick: () => void, label?: string): HTMLButtonElement {
  const b = el('button', className, text);
  b.type = 'button';
  if (label) b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

/** A file as the server names it (agent/revert's are file uris), as a path to read. */
export function shownPath(path: string): string {
  if (!path.startsWith('file://')) return path;
  try {
    return decodeURIComponent(new URL(path).pathname);
  } catch {
    return path;
  }
}

function list(className: string, heading: string, items: string[], code = false): HTMLElement {
  const box = el('div', className);
  box.append(el('div', 'restore-heading', heading));
  const ul = el('ul', 'restore-list');
  for (const item of items) {
    const li = el('li', '');
    li.append(code ? el('code', '', item) : item);
    ul.append(li);
  }
  box.append(ul);
  return box;
}

export class Restore {
  /** Open forms: messageId -> its state. */
  private readonly forms = new Map<string, Form>();
  /** The element of each user message's Restore box now in the transcript. */
  private readonly boxes = new Map<string, { box: HTMLElement; sessionId: string }>();
  /** The session whose last revert can be redone (until its next prompt). */
  private redoable?: string;
  /** The message that revert put back in the prompt box. */
  private restoredPrompt?: string;
  readonly redoBar: HTMLElement;
  private readonly redoText: HTMLElement;
  private readonly redoButton: HTMLButtonElement;

  constructor(
    private readonly post: (message: CheckpointMessage) => void,
    /** After a Redo: the message is back in the transcript, so not in the prompt box too. */
    private readonly redone: (prompt: string) => void = () => undefined,
  ) {
    this.redoBar = el('div', 'redo-bar');
    this.redoBar.setAttribute('role', 'status');
    this.redoBar.hidden = true;
    this.redoText = el('span', 'redo-text');
    this.redoButton = button('Redo', 'secondary', () => this.redo(), 'Redo: undo the restore');
    this.redoBar.append(this.redoText, this.redoButton);
  }

  /** The Restore box under a user message (none for a message not stored yet, or undone). */
  forMessage(sessionId: string, item: UserItem): HTMLElement | null {
    const messageId = item.messageId;
    if (!messageId || item.reverted) return null;
    const box = el('div', 'restore');
    box.dataset.messageId = messageId;
    this.boxes.set(messageId, { box, sessionId });
    this.fill(box, sessionId, messageId);
    return box;
  }

  private refill(messageId: string): void {
    const shown = this.boxes.get(messageId);
    if (shown?.box.isConnected) this.fill(shown.box, shown.sessionId, messageId);
  }

  private fill(box: HTMLElement, sessionId: string, messageId: string): void {
    const form = this.forms.get(messageId);
    box.classList.toggle('open', !!form);
    if (!form) {
      // The label is drawn by CSS (.restore-open::before): the message's text stays only its text.
      const open = button('', 'secondary restore-open', () => this.ask(sessionId, messageId, 'both'), 'Restore to before this message');
      open.title = 'Restore: back to just before this message (you choose code, conversation or both)';
      box.replaceChildren(open);
      return;
    }
    const panel = el('div', 'restore-form');
    panel.setAttribute('role', 'group');
    panel.setAttribute('aria-label', 'Restore to before this message');
    const scopes = el('div', 'restore-scopes');
    for (const choice of SCOPES) {
      const b = button(choice.label, 'secondary restore-scope', () => this.ask(sessionId, messageId, choice.scope));
      b.title = choice.title;
      b.dataset.scope = choice.scope;
      b.setAttribute('aria-pressed', String(form.scope === choice.scope));
      b.disabled = form.sending;
      scopes.append(b);
    }
    panel.append(scopes, this.previewOf(form));
    const confirm = button(form.sending ? 'Restoring…' : 'Restore', 'restore-confirm', () => this.confirm(messageId));
    confirm.disabled = form.loading || form.sending || !!form.error;
    const cancel = button('Cancel', 'secondary restore-cancel', () => {
      this.forms.delete(messageId);
      this.refill(messageId);
    });
    cancel.disabled = form.sending;
    const buttons = el('div', 'buttons');
    buttons.append(confirm, cancel);
    panel.append(buttons);
    box.replaceChildren(panel);
  }

  private previewOf(form: Form): HTMLElement {
    const out = el('div', 'restore-preview');
    out.setAttribute('aria-live', 'polite');
    if (form.error) {
      out.append(el('div', 'restore-error', form.error));
      return out;
    }
    const p = form.preview;
    if (form.loading || !p) {
      out.append(el('div', 'progress', 'Checking what it would touch…'));
      return out;
    }
    if (form.scope !== 'conversation') {
      if (p.files.length) out.append(list('restore-files', 'Files restored:', p.files.map(shownPath), true));
      else out.append(el('div', 'restore-none', 'No file to restore.'));
      const conflicts = (p.conflicts ?? []).map((c) => shownPath(c.path));
      if (conflicts.length) {
        out.append(list('restore-conflicts', 'Changed by you since, so not overwritten (opened in the merge editor):', conflicts, true));
      }
      if (p.bashNotUndone) {
        const commands = p.bashCommands ?? [];
        out.append(
          commands.length
            ? list('restore-bash', 'Not undone (commands run since):', commands, true)
            : el('div', 'restore-bash', 'Commands run since are not undone.'),
        );
      }
    }
    if (form.scope !== 'code') out.append(el('div', 'restore-conversation', 'This message and everything after it leave the conversation; Redo brings them back.'));
    if (p.note) out.append(el('div', 'restore-note', p.note));
    return out;
  }

  private ask(sessionId: string, messageId: string, scope: RevertScope): void {
    this.forms.set(messageId, { sessionId, scope, loading: true, sending: false });
    this.post({ type: 'revert-preview', sessionId, messageId, scope });
    this.refill(messageId);
  }

  private confirm(messageId: string): void {
    const form = this.forms.get(messageId);
    if (!form || form.loading || form.sending) return;
    form.sending = true;
    this.post({ type: 'revert', sessionId: form.sessionId, messageId, scope: form.scope });
    this.refill(messageId);
  }

  /** The extension's answer to a preview (or a failed revert). */
  previewed(message: Preview): void {
    const form = this.forms.get(message.messageId);
    if (!form || form.scope !== message.scope) return; // the user chose another scope since
    form.loading = false;
    form.sending = false;
    form.preview = message.preview;
    form.error = message.error;
    this.refill(message.messageId);
  }

  /** A revert went through: the transcript was reloaded; offer Redo. */
  reverted(message: Reverted): void {
    this.forms.delete(message.messageId);
    this.refill(message.messageId); // a code-only restore leaves the message in the transcript
    this.redoable = message.sessionId;
    this.restoredPrompt = message.scope === 'code' ? undefined : (message.result.prompt ?? undefined);
    const files = message.result.files.length;
    const conflicts = message.result.conflicts?.length ?? 0;
    let what =
      message.scope === 'conversation'
        ? 'Conversation restored.'
        : `${files === 1 ? '1 file' : `${files} files`} restored${message.scope === 'both' ? ' and the conversation with them' : ''}.`;
    if (message.scope !== 'conversation' && conflicts) {
      what += ` ${conflicts === 1 ? '1 file you changed since is' : `${conflicts} files you changed since are`} in the merge editor.`;
    }
    this.redoText.textContent = what;
    this.redoButton.disabled = false;
    this.redoBar.hidden = false;
  }

  private redo(): void {
    if (!this.redoable) return;
    this.redoButton.disabled = true;
    this.post({ type: 'unrevert', sessionId: this.redoable });
  }

  /** Redo's answer: done, or failed (the button again). */
  unreverted(sessionId: string, error?: string): void {
    if (error) {
      this.redoButton.disabled = false;
      return;
    }
    if (this.redoable === sessionId && this.restoredPrompt) this.redone(this.restoredPrompt);
    this.done(sessionId);
  }

  /** Redo went through, or a prompt was sent (the server keeps no redo past it). */
  done(sessionId: string): void {
    if (this.redoable !== sessionId) return;
    this.redoable = undefined;
    this.restoredPrompt = undefined;
    this.redoBar.hidden = true;
  }

  /** The panel shows another session: its Redo is not this one's. */
  showing(sessionId: string | undefined): void {
    this.redoBar.hidden = !this.redoable || this.redoable !== sessionId;
  }
}
