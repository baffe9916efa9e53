// File paths in answers and tool cards: `calc.py:12`, `src/app.py`, an absolute path inside the
// workspace. They become links that open the file at that line (open-path; the extension opens
// only files inside the workspace), and are shown relative to the workspace folder.
import type { CodeMessage } from '../model/codeBlocks';

/** A path with a file extension, optionally `:line` or `:line:column`. */
const PATH = /(?<![\w@/.:-])((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?::(\d+)(?::\d+)?)?(?![\w/])/g;
const WHOLE = new RegExp(`^${PATH.source}$`);
/** Looks like a domain or a version, not a file: "example.com", "v1.2", "e.g.". */
const NOT_A_FILE = /^(?:[\w-]+\.)?(?:com|org|net|io|dev|e\.g|i\.e)$/i;

let workspaceRoot: string | undefined;

/** The workspace folder (from the extension's code-context), for relative paths. */
export function setWorkspaceRoot(root: string | undefined): void {
  workspaceRoot = root?.replace(/\/+$/, '');
}

/** `text` with the workspace folder's absolute prefix taken off its paths. */
export function relativePaths(text: string): string {
  if (!workspaceRoot) return text;
  return text.split(workspaceRoot + '/').join('');
}

export interface PathRef {
  path: string;
  line?: number;
}

/** The path in `text` if that is all it is (an inline code span, a fence's info). */
export function wholePath(text: string): PathRef | undefined {
  const m = WHOLE.exec(text.trim());
  return m ? refOf(m[1], m[2]) : undefined;
}

/** A path as a link opens it: relative to the workspace; none for an absolute path outside it. */
function refOf(path: string, line: string | undefined): PathRef | undefined {
  if (NOT_A_FILE.test(path)) return undefined;
  const relative = relativePaths(path);
  if (relative.startsWith('/')) return undefined;
  return { path: relative, line: line ? Number(line) : undefined };
}

/** The last path mentioned in `text` (the sentence before a code block: "In src/app.py:"). */
export function lastPath(text: string): PathRef | undefined {
  let found: PathRef | undefined;
  for (const m of text.matchAll(PATH)) found = refOf(m[1], m[2]) ?? found;
  return found;
}

export function pathLink(ref: PathRef, text: string, post: (message: CodeMessage) => void): HTMLAnchorElement {
  const a = document.createElement('a');
  a.className = 'path-link';
  a.href = '#';
  a.textContent = text;
  a.dataset.path = ref.path;
  if (ref.line) a.dataset.line = String(ref.line);
  a.title = ref.line ? `Open ${ref.path} at line ${ref.line}` : `Open ${ref.path}`;
  a.addEventListener('click', (e) => {
    e.preventDefault();
    e.stopPropagation(); // in a card's summary: open the file, not the card
    post(ref.line ? { type: 'open-path', path: ref.path, line: ref.line } : { type: 'open-path', path: ref.path });
  });
  return a;
}

/** Turn the paths in `root`'s text into links: an inline code span that is a path, and paths in
 * prose that have a directory or a line (`src/app.py`, `calc.py:12`; a bare "calc.py" in a
 * sentence stays text). Code blocks and existing links are left alone, unless `listing` (a
 * tool's output that lists files: every path in it is linked). */
export function linkPaths(root: HTMLElement, post: (message: CodeMessage) => void, listing = false): void {
  for (const code of [...root.querySelectorAll('code')]) {
    if (code.closest('pre, a')) continue;
    const ref = wholePath(code.textContent ?? '');
    if (!ref) continue;
    const link = pathLink(ref, '', post);
    code.replaceWith(link);
    code.textContent = relativePaths(code.textContent ?? '');
    link.append(code);
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node.parentElement?.closest(listing ? 'a' : 'pre, a, code, .codeblock') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(node as Text);
  for (const node of texts) linkText(node, post, listing);
}

/** `listing`: a tool's list of files (glob, grep), where a bare "calc.py" is a file too. */
function linkText(node: Text, post: (message: CodeMessage) => void, listing: boolean): void {
  const text = node.data;
  const parts: (string | Node)[] = [];
  let last = 0;
  for (const m of text.matchAll(PATH)) {
    const [whole, path, line] = m;
    const ref = refOf(path, line);
    if (!ref || (!listing && !path.includes('/') && !line)) continue;
    const start = m.index ?? 0;
    parts.push(text.slice(last, start));
    parts.push(pathLink(ref, relativePaths(whole), post));
    last = start + whole.length;
  }
  if (!last) return;
  parts.push(text.slice(last));
  node.replaceWith(...parts.filter((p) => p !== ''));
}
