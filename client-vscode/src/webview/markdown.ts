// The model's Markdown as the panel shows it: markdown-it (html off, so model output cannot
// inject markup), its code fences as code blocks with actions and colours (codeblocks.ts), and
// the file paths in it as links (paths.ts).
import MarkdownIt from 'markdown-it';
import type { CodeMessage } from '../model/codeBlocks';
import { codeBlock, repaintAll, type CodeBlockContext } from './codeblocks';
import { Highlighter } from './highlight';
import { linkPaths } from './paths';

const md = new MarkdownIt({ html: false, linkify: false, breaks: false });
// A fence is drawn as a placeholder carrying its info string; markdown() puts the block in.
md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  return `<pre class="md-fence" data-info="${md.utils.escapeHtml(token.info)}"><code>${md.utils.escapeHtml(token.content)}</code></pre>\n`;
};
md.renderer.rules.code_block = (tokens, idx) => `<pre class="md-fence" data-info=""><code>${md.utils.escapeHtml(tokens[idx].content)}</code></pre>\n`;

let context: CodeBlockContext | undefined;

/** Set once by the panel: where the blocks' actions go, and the session Apply proposes in. */
export function configureMarkdown(post: (message: CodeMessage) => void, sessionId: () => string | undefined): Highlighter {
  const highlighter = new Highlighter(post, () => repaintAll());
  context = { post, highlighter, sessionId };
  return highlighter;
}

/** `text` rendered into a new element of class `className`. */
export function markdown(text: string, className: string): HTMLElement {
  const el = document.createElement('div');
  el.className = className;
  el.innerHTML = md.render(text);
  if (!context) return el;
  const ctx = context;
  for (const pre of [...el.querySelectorAll<HTMLElement>('pre.md-fence')]) {
    // "In src/app.py:" right before a block names its file (a paragraph ending with a colon).
    const before = pre.previousElementSibling;
    const text = before?.tagName === 'P' ? (before.textContent ?? '').trim() : '';
    const intro = text.endsWith(':') ? text : undefined;
    pre.replaceWith(codeBlock(ctx, pre.dataset.info ?? '', pre.textContent ?? '', intro));
  }
  linkPaths(el, ctx.post);
  return el;
}
