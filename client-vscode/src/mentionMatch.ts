// Matching for @-mentions: the workspace's files, kept in memory by the extension (mentions.ts)
// and searched at each keystroke. Pure: unit-tested and benchmarked without VS Code.
//
// Ranking: the files whose name starts with the query come first (an exact name, then the
// shorter name, then the shallower path); then those whose name holds it; then every other file
// whose path holds the query's characters in order, by a fuzzy score (runs of adjacent
// characters, word starts, the characters in the file name). One pass over the paths keeps only
// the best of each tier; as the query grows by a keystroke, only the paths that matched the
// shorter one are looked at again.
/** A path's file name (after the last "/"). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function depth(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/** A path with what ranking it needs, computed once. */
interface Entry {
  path: string;
  lower: string; // the path, lower-cased
  name: string; // the file name, lower-cased
  stem: string; // the name less its extension
  depth: number;
  mask: number; // which of a-z, 0-9 and "._-/" the path has (charMask)
}

/** A bit for each letter a-z, each digit 0-9 (as one bit per pair) and "._-/", so that a path
 * that lacks a character of the query is passed over without a look at its text. */
function charMask(text: string): number {
  let mask = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) mask |= 1 << (c - 97);
    else if (c >= 48 && c <= 57) mask |= 1 << (26 + ((c - 48) >> 1));
    else if (c === 46 || c === 95 || c === 45 || c === 47) mask |= 1 << 31;
  }
  return mask;
}

function entry(path: string): Entry {
  const name = baseName(path).toLowerCase();
  const dot = name.lastIndexOf('.');
  const lower = path.toLowerCase();
  return { path, lower, name, stem: dot > 0 ? name.slice(0, dot) : name, depth: depth(path), mask: charMask(lower) };
}

/** The workspace-relative paths (with "/"), searchable; adding and removing is cheap. */
export class PathIndex {
  private readonly list: Entry[] = [];
  private readonly at = new Map<string, number>(); // path -> its place in list
  /** The last search's query and the entries that matched it (the pool of the next keystroke). */
  private last: { q: string; matched: Entry[] } | undefined;

  constructor(paths: Iterable<string> = []) {
    for (const path of paths) this.add(path);
  }

  get size(): number {
    return this.list.length;
  }

  has(path: string): boolean {
    return this.at.has(path);
  }

  add(path: string): void {
    if (this.at.has(path)) return;
    this.at.set(path, this.list.length);
    this.list.push(entry(path));
    this.last = undefined;
  }

  delete(path: string): void {
    const i = this.at.get(path);
    if (i === undefined) return;
    const moved = this.list.pop() as Entry;
    if (i < this.list.length) {
      this.list[i] = moved;
      this.at.set(moved.path, i);
    }
    this.at.delete(path);
    this.last = undefined;
  }

  /** Every path under `folder` goes (a deleted folder). */
  deleteUnder(folder: string): void {
    const prefix = folder.endsWith('/') ? folder : folder + '/';
    for (const path of [...this.at.keys()]) if (path.startsWith(prefix)) this.delete(path);
  }

  /** The best `limit` paths for `query`, best first (see the ranking above). An empty query
   * gives none: the caller offers something else (the open editors). */
  search(query: string, limit: number): string[] {
    const q = query.trim().toLowerCase();
    if (!q || limit <= 0) return [];
    const pool = this.last && q.startsWith(this.last.q) ? this.last.matched : this.list;
    const need = charMask(q);
    const matched: Entry[] = [];
    const others: Entry[] = [];
    const starts = new Best(limit, byName(q));
    const holds = new Best(limit, byName(q));
    const pathPrefix = q.includes('/');
    for (const e of pool) {
      if ((e.mask & need) !== need) continue; // a character of the query is not in the path
      if (e.name.startsWith(q) || (pathPrefix && e.lower.startsWith(q))) starts.offer(e, 0);
      else if (e.name.includes(q)) holds.offer(e, 0);
      else if (inOrder(e.lower, q)) others.push(e);
      else continue;
      matched.push(e);
    }
    this.last = { q, matched };
    const out = [...starts.items, ...holds.items];
    if (out.length < limit) {
      // Scored only when the names do not fill the list.
      const fuzzy = new Best(limit - out.length, byScore);
      for (const e of others) fuzzy.offer(e, fuzzyScore(e, q) ?? 0);
      out.push(...fuzzy.items);
    }
    return out.slice(0, limit).map((s) => s.entry.path);
  }
}

/** A fuzzy score of the path for `q` (its characters in order, case-insensitive), higher is
 * better; undefined when they are not all there. The characters are matched in the file name
 * when they all are there (a large bonus), else in the whole path; each counts more after the
 * previous one (a run) and at a word start. */
function fuzzyScore(e: Entry, q: string): number | undefined {
  const inName = greedy(e.lower, e.lower.length - e.name.length, q);
  if (inName !== undefined) return 1000 + inName - e.path.length / 1000;
  const inPath = greedy(e.lower, 0, q);
  return inPath === undefined ? undefined : inPath - e.path.length / 1000;
}

/** `q`'s characters are in `text` in order. */
function inOrder(text: string, q: string): boolean {
  let at = 0;
  for (let i = 0; i < q.length; i++) {
    at = text.indexOf(q[i], at) + 1;
    if (at === 0) return false;
  }
  return true;
}

function greedy(text: string, from: number, q: string): number | undefined {
  let score = 0;
  let previous = -2;
  let at = from;
  for (let i = 0; i < q.length; i++) {
    const found = text.indexOf(q[i], at);
    if (found < 0) return undefined;
    score += 1 + (found === previous + 1 ? 3 : 0) + (found === 0 || '/._- '.includes(text[found - 1]) ? 2 : 0);
    previous = found;
    at = found + 1;
  }
  return score;
}

type Scored = { entry: Entry; score: number };

/** Among names that start with (or hold) the query: the exact name (or the name less its
 * extension) first, then the shorter name, the shallower path, the path in order. */
function byName(q: string): (a: Scored, b: Scored) => number {
  const exact = (e: Entry): number => (e.name === q || e.stem === q ? 0 : 1);
  return (a, b) =>
    exact(a.entry) - exact(b.entry) ||
    a.entry.name.length - b.entry.name.length ||
    a.entry.depth - b.entry.depth ||
    (a.entry.path < b.entry.path ? -1 : a.entry.path > b.entry.path ? 1 : 0);
}

function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || (a.entry.path < b.entry.path ? -1 : a.entry.path > b.entry.path ? 1 : 0);
}

/** The best `limit` of what is offered, in order. */
class Best {
  readonly items: Scored[] = [];

  constructor(
    private readonly limit: number,
    private readonly compare: (a: Scored, b: Scored) => number,
  ) {}

  offer(entry: Entry, score: number): void {
    const items = this.items;
    const s = { entry, score };
    if (items.length >= this.limit && this.compare(s, items[items.length - 1]) >= 0) return;
    let at = items.length;
    while (at > 0 && this.compare(s, items[at - 1]) < 0) at--;
    items.splice(at, 0, s);
    if (items.length > this.limit) items.pop();
  }
}

/** The paths that match `query`, best first, at most `limit` (a one-off PathIndex). */
export function rankPaths(paths: readonly string[], query: string, limit: number): string[] {
  return new PathIndex(paths).search(query, limit);
}
