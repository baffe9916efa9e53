// Matching for @-mentions: the workspace's files, kept in memory by the extension (mentions.ts)
// and searched at each keystroke. Pure: unit-tested and benchmarked without VS Code.
//
// Ranking: the files whose name starts with the query come first (an exact name, then the
// shorter name, then the shallower path); then those whose name holds it; then every other file
// whose path holds the query's characters in order, as fuzzysort (a maintained Sublime-like fuzzy
// matcher) scores them.
import * as fuzzysort from 'fuzzysort';

/** A path's file name (after the last "/"). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function depth(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/** The workspace-relative paths (with "/"), searchable. Adding and removing is cheap; the
 * fuzzy matcher's prepared snapshot is rebuilt at the first search after a change. */
export class PathIndex {
  private readonly paths = new Map<string, string>(); // path -> its lower-cased file name
  private snapshot: fuzzysort.Snapshot | undefined;

  constructor(paths: Iterable<string> = []) {
    for (const path of paths) this.paths.set(path, baseName(path).toLowerCase());
  }

  get size(): number {
    return this.paths.size;
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  add(path: string): void {
    if (this.paths.has(path)) return;
    this.paths.set(path, baseName(path).toLowerCase());
    this.snapshot = undefined;
  }

  delete(path: string): void {
    if (this.paths.delete(path)) this.snapshot = undefined;
  }

  /** Every path under `folder` goes (a deleted folder). */
  deleteUnder(folder: string): void {
    const prefix = folder.endsWith('/') ? folder : folder + '/';
    for (const path of this.paths.keys()) if (path.startsWith(prefix)) this.delete(path);
  }

  /** The best `limit` paths for `query`, best first (see the ranking above). An empty query
   * gives none: the caller offers something else (the open editors). */
  search(query: string, limit: number): string[] {
    const q = query.trim().toLowerCase();
    if (!q || limit <= 0) return [];
    const starts: string[] = [];
    const holds: string[] = [];
    const pathPrefix = q.includes('/');
    for (const [path, name] of this.paths) {
      if (name.startsWith(q) || (pathPrefix && path.toLowerCase().startsWith(q))) starts.push(path);
      else if (name.includes(q)) holds.push(path);
    }
    starts.sort((a, b) => compareNamed(a, b, q));
    const out = starts.slice(0, limit);
    if (out.length < limit) {
      holds.sort((a, b) => compareNamed(a, b, q));
      out.push(...holds.slice(0, limit - out.length));
    }
    if (out.length >= limit) return out;
    const taken = new Set(out);
    this.snapshot ??= fuzzysort.snapshot([...this.paths.keys()]);
    // A few more than needed: the ones already taken by name are in there too.
    const fuzzy = fuzzysort.go(q, this.snapshot, { limit: limit + out.length, threshold: 0 });
    for (const result of fuzzy) {
      if (out.length >= limit) break;
      if (!taken.has(result.target)) out.push(result.target);
    }
    return out;
  }
}

/** Among names that start with (or hold) the query: the exact name (or the name less its extension)
 * first, then the shorter name, the shallower path, the path in order. */
function compareNamed(a: string, b: string, q: string): number {
  const na = baseName(a).toLowerCase();
  const nb = baseName(b).toLowerCase();
  const exact = (n: string): number => (n === q || n.slice(0, n.lastIndexOf('.')) === q ? 0 : 1);
  return exact(na) - exact(nb) || na.length - nb.length || depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The paths that match `query`, best first, at most `limit` (a one-off PathIndex). */
export function rankPaths(paths: readonly string[], query: string, limit: number): string[] {
  return new PathIndex(paths).search(query, limit);
}
