// Matching for @-mentions, shared by the extension (file paths) and the panel (mention kinds).
// Pure functions: unit-tested without VS Code.

/** A fuzzy score of `text` for `query` (the query's characters in order, case-insensitive), or
 * undefined when they are not all there. Higher is better: runs of adjacent characters, matches
 * at a word start, and matches in the file name (after the last "/") count more. */
export function fuzzyScore(text: string, query: string): number | undefined {
  const t = text.toLowerCase();
  const q = query.toLowerCase();
  if (!q) return 0;
  // The best of the in-order matches that start at each place the query's first character is.
  let best: number | undefined;
  for (let from = t.indexOf(q[0]); from >= 0; from = t.indexOf(q[0], from + 1)) {
    const score = scoreFrom(t, q, from);
    if (score === undefined) break; // a later start cannot match either
    if (best === undefined || score > best) best = score;
  }
  return best === undefined ? undefined : best - t.length / 1000; // shorter wins a tie
}

function scoreFrom(t: string, q: string, from: number): number | undefined {
  const nameStart = t.lastIndexOf('/') + 1;
  let score = 0;
  let at = from;
  let previous = -2;
  for (const ch of q) {
    const found = t.indexOf(ch, at);
    if (found < 0) return undefined;
    let points = 1;
    if (found === previous + 1) points += 3;
    if (found === 0 || '/._- '.includes(t[found - 1])) points += 2;
    if (found >= nameStart) points += 1;
    score += points;
    previous = found;
    at = found + 1;
  }
  return score;
}

/** The texts that match, best first, at most `limit`. */
export function fuzzyRank(texts: readonly string[], query: string, limit: number): string[] {
  const scored: [string, number][] = [];
  for (const text of texts) {
    const score = fuzzyScore(text, query);
    if (score !== undefined) scored.push([text, score]);
  }
  scored.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return scored.slice(0, limit).map(([text]) => text);
}
