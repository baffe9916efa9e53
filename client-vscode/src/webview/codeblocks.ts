// A code block in an answer: a bar with its language or file and the actions Copy, Insert (at the
// cursor of the active editor) and Apply (the block proposed as the new content of the file it
// names, reviewed like the agent's own edits); the code coloured by highlight.ts.
// The file a block names: its fence's info string (```python calc.py, ```py:calc.py,
// ```ts title="src/app.ts"), else a path the paragraph right before it mentions ("In calc.py:").
import type { CodeMessage } from '../model/codeBlocks';
import type { Highlighter } from './highlight';
import { lastPath, wholePath, type PathRef } from './paths';

export interface CodeBlockContext {
  post(message: CodeMessage): void;
  highlighter: Highlighter;
  /** The session an Apply is proposed in (the one the panel shows). */
  sessionId(): string | undefined;
}

export interface FenceInfo {
  lang: string;
  file?: PathRef;
}

/** The language and the file of a fence's info string. */
export function parseInfo(info: string): FenceInfo {
  const words = info.trim().split(/\s+/).filter(Boolean);
  let lang = '';
  let file: PathRef | undefined;
  words.forEach((word, i) => {
    const keyed = /^(?:file|path|title|filename|name)=["']?([^"']+)["']?$/i.exec(word);
    if (keyed) {
      file ??= wholePath(keyed[1]);
      return;
    }
    if (i === 0) {
      const colon = /^([\w+#-]+):(.+)$/.exec(word); // py:calc.py
      if (colon && wholePath(colon[2])) {
        lang = colon[1];
        file = wholePath(colon[2]);
        return;
      }
      const path = /[./]/.test(word) ? wholePath(word) : undefined;
      if (path) {
        file = path; // ```calc.py: the language from its extension
        lang = word.slice(word.lastIndexOf('.') + 1);
        return;
      }
      lang = word;
      return;
    }
    file ??= wholePath(word.replace(/^["']|["']$/g, ''));
  });
  return { lang: lang.toLowerCase(), file };
}

/** An icon button (a codicon), named for screen readers by its title. */
function button(action: string, icon: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'codeblock-action icon';
  b.dataset.action = action;
  b.title = title;
  b.setAttribute('aria-label', title);
  setIcon(b, icon);
  return b;
}

function setIcon(b: HTMLButtonElement, icon: string): void {
  const glyph = document.createElement('span');
  glyph.className = `codicon codicon-${icon}`;
  glyph.setAttribute('aria-hidden', 'true');
  b.replaceChildren(glyph);
}

/** The block for a fence of `text`, with the path the text before it named (if any). */
export function codeBlock(ctx: CodeBlockContext, info: string, text: string, before?: string): HTMLElement {
  const parsed = parseInfo(info);
  const file = parsed.file ?? (before ? lastPath(before) : undefined);
  const lang = parsed.lang;
  const block = document.createElement('div');
  block.className = 'codeblock';
  block.dataset.lang = lang;
  if (file) block.dataset.path = file.path;
  const bar = document.createElement('div');
  bar.className = 'codeblock-bar';
  const label = document.createElement('span');
  label.className = 'codeblock-label';
  label.textContent = file?.path ?? lang;
  if (file) label.title = file.path;
  const actions = document.createElement('span');
  actions.className = 'codeblock-actions';
  const copy = button('copy', 'copy', 'Copy');
  const insert = button('insert', 'insert', 'Insert at cursor');
  copy.addEventListener('click', () => {
    ctx.post({ type: 'copy-code', text });
    setIcon(copy, 'check');
    copy.title = 'Copied';
    setTimeout(() => {
      setIcon(copy, 'copy');
      copy.title = 'Copy';
    }, 1500);
  });
  insert.addEventListener('click', () => ctx.post({ type: 'insert-code', text }));
  actions.append(copy, insert);
  if (file) {
    const apply = button('apply', 'merge-into', `Apply to ${file.path}: the block becomes its content (you review the diff first)`);
    apply.addEventListener('click', () => {
      const sessionId = ctx.sessionId();
      ctx.post(sessionId ? { type: 'apply-code', sessionId, path: file.path, text } : { type: 'apply-code', path: file.path, text });
    });
    actions.append(apply);
  }
  bar.append(label, actions);
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  pre.append(code);
  block.append(bar, pre);
  block.addEventListener('agentls-repaint', () => ctx.highlighter.paint(code, text, lang));
  ctx.highlighter.paint(code, text, lang);
  return block;
}

/** Colour every block again (a theme or a grammar arrived). */
export function repaintAll(root: ParentNode = document): void {
  for (const block of root.querySelectorAll('.codeblock')) block.dispatchEvent(new Event('agentls-repaint'));
}
