// The hunks of a proposed edit and the edit sent back for part of it (issue 20). The server makes a
// proposal's WorkspaceEdit one TextEdit per hunk (server/agentls/workspace/hunks.py, in hunk order,
// each replacing whole lines), so a hunk here is simply one of a file's TextEdits: where it sits in
// the file as it is and in the proposed text, and which subset the user accepted. A proposal the
// user edited goes back as the user's whole text instead. No vscode import: unit-tested directly.
import { fileChanges, type FileChange, type LspPosition, type LspTextEdit } from './edits';

export type HunkState = 'pending' | 'accepted' | 'rejected';

export interface ProposalHunk {
  /** Its place among the file's TextEdits (what a partial accept names). */
  index: number;
  edit: LspTextEdit;
  /** 0-based first line in the file as it is now. */
  oldStart: number;
  /** 0-based first line in the proposed text, and how many lines it puts there (0: a deletion). */
  newStart: number;
  newLines: number;
}

const newlines = (text: string): number => text.split('\n').length - 1;

/** A file's hunks, in order, with their lines in the current and in the proposed text. */
export function proposalHunks(change: FileChange): ProposalHunk[] {
  const order = change.edits
    .map((edit, index) => ({ edit, index }))
    .sort((a, b) => a.edit.range.start.line - b.edit.range.start.line || a.edit.range.start.character - b.edit.range.start.character);
  let shift = 0;
  return order.map(({ edit, index }) => {
    const { start, end } = edit.range;
    const hunk = { index, edit, oldStart: start.line, newStart: start.line + shift, newLines: newlines(edit.newText) };
    shift += newlines(edit.newText) - (end.line - start.line);
    return hunk;
  });
}

/** The hunk a line of the current file (`side: 'old'`) or of the proposed text is in, if any. */
export function hunkAtLine(hunks: readonly ProposalHunk[], line: number, side: 'old' | 'new'): ProposalHunk | undefined {
  return hunks.find((h) => {
    const start = side === 'old' ? h.oldStart : h.newStart;
    const count = side === 'old' ? Math.max(h.edit.range.end.line - h.edit.range.start.line, 1) : Math.max(h.newLines, 1);
    return line >= start && line < start + count;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The TextDocumentEdit's uri, if the entry of documentChanges is one. */
function documentUri(change: unknown): string | undefined {
  if (!isRecord(change) || 'kind' in change || !isRecord(change.textDocument)) return undefined;
  return typeof change.textDocument.uri === 'string' ? change.textDocument.uri : undefined;
}

/**
 * The proposal with, for each file, only the TextEdits `keep` says yes to (index: the TextEdit's
 * place among that file's edits, as in fileChanges). Same documents, same versions; a file with
 * none kept is left out, with its CreateFile. Undefined when nothing is kept.
 */
export function subsetEdit(edit: unknown, keep: (uri: string, index: number) => boolean): Record<string, unknown> | undefined {
  if (!isRecord(edit)) return undefined;
  const counters = new Map<string, number>();
  const filter = (uri: string, edits: unknown): unknown[] =>
    (Array.isArray(edits) ? edits : []).filter(() => {
      const index = counters.get(uri) ?? 0;
      counters.set(uri, index + 1);
      return keep(uri, index);
    });
  const out: Record<string, unknown> = {};
  const kept = new Set<string>();
  if (Array.isArray(edit.documentChanges)) {
    const changes: unknown[] = [];
    for (const change of edit.documentChanges) {
      const uri = documentUri(change);
      if (uri === undefined || !isRecord(change)) {
        changes.push(change);
        continue;
      }
      const edits = filter(uri, change.edits);
      if (edits.length) {
        kept.add(uri);
        changes.push({ ...change, edits });
      }
    }
    // A CreateFile only for a file some of whose text is kept.
    out.documentChanges = changes.filter(
      (c) => !(isRecord(c) && c.kind === 'create' && typeof c.uri === 'string' && !kept.has(c.uri)),
    );
  }
  if (isRecord(edit.changes)) {
    const changes: Record<string, unknown[]> = {};
    for (const [uri, edits] of Object.entries(edit.changes)) {
      const chosen = filter(uri, edits);
      if (chosen.length) {
        kept.add(uri);
        changes[uri] = chosen;
      }
    }
    out.changes = changes;
  }
  return kept.size ? out : undefined;
}

/** Where a text ends, as an LSP position (UTF-16 columns, like JS strings). */
export function endOf(text: string): LspPosition {
  const lines = text.split('\n');
  return { line: lines.length - 1, character: lines[lines.length - 1].length };
}

/**
 * The proposal with one file's TextEdits replaced by a single edit that turns the file's current
 * text (`original`; '' for a file the proposal creates) into `text`, the user's version of it.
 */
export function replacementEdit(edit: unknown, uri: string, original: string, text: string): Record<string, unknown> | undefined {
  if (!isRecord(edit)) return undefined;
  const whole: LspTextEdit = { range: { start: { line: 0, character: 0 }, end: endOf(original) }, newText: text };
  const out: Record<string, unknown> = { ...edit };
  let replaced = false;
  if (Array.isArray(edit.documentChanges)) {
    out.documentChanges = edit.documentChanges.flatMap((change: unknown) => {
      if (documentUri(change) !== uri || !isRecord(change)) return [change];
      if (replaced) return [];
      replaced = true;
      return [{ ...change, edits: [whole] }];
    });
  }
  if (isRecord(edit.changes) && uri in edit.changes) {
    out.changes = { ...edit.changes, [uri]: [whole] };
    replaced = true;
  }
  return replaced ? out : undefined;
}

/** The files of a proposal and their hunks (what the review lenses are built from). */
export function proposalFiles(edit: unknown): { change: FileChange; hunks: ProposalHunk[] }[] {
  return fileChanges(edit).map((change) => ({ change, hunks: proposalHunks(change) }));
}

/** What the hunk decisions amount to: undefined while some are pending. */
export function outcome(states: readonly HunkState[]): 'all' | 'none' | 'some' | undefined {
  if (states.some((s) => s === 'pending')) return undefined;
  const accepted = states.filter((s) => s === 'accepted').length;
  if (accepted === states.length) return 'all';
  return accepted === 0 ? 'none' : 'some';
}

/** How a waiting hunk is drawn in the file's own editor (issue 29 item 4): the lines it removes
 * (marked), and its added lines as text after a line: paired with the removed lines one by one
 * (the last removed line takes the rest), or, for a hunk that only adds, after the line above it
 * (`before` the first line when it adds at the top). */
export interface HunkMarks {
  removed: number[];
  added: { line: number; text: string; before?: boolean }[];
}

export const SHOWN_ADDED_CHARS = 160;

const clip = (text: string): string => (text.length > SHOWN_ADDED_CHARS ? `${text.slice(0, SHOWN_ADDED_CHARS - 1)}…` : text);

/** The lines a hunk's text puts in the file ('a\nb\n' -> ['a', 'b']). */
export function addedLines(hunk: ProposalHunk): string[] {
  const lines = hunk.edit.newText.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function hunkMarks(hunk: ProposalHunk): HunkMarks {
  const { start, end } = hunk.edit.range;
  const oldCount = end.line - start.line + (end.character > 0 ? 1 : 0);
  const removed = Array.from({ length: oldCount }, (_, i) => start.line + i);
  const added = addedLines(hunk);
  if (!added.length) return { removed, added: [] };
  if (!removed.length) {
    const text = clip(added.join('  ⏎  '));
    return { removed, added: start.line > 0 ? [{ line: start.line - 1, text }] : [{ line: 0, text, before: true }] };
  }
  const marks = removed.flatMap((line, i) => {
    if (i >= added.length) return [];
    const rest = i === removed.length - 1 ? added.slice(i) : [added[i]];
    return [{ line, text: clip(rest.join('  ⏎  ')) }];
  });
  return { removed, added: marks };
}

/** A hunk as the panel's proposal card lists it (webview/proposals.ts), with Accept / Reject each. */
export interface CardHunk {
  /** Which file of the proposal and which of its hunks (what decide-hunk names). */
  file: number;
  hunk: number;
  path: string;
  /** "line 3", "lines 3-4" (1-based, of the file as it is). */
  where: string;
  removed: string[];
  added: string[];
  state: HunkState;
}

/** The hunks of a proposal's files for the card: the lines each removes (read from the file's
 * text when the proposal came) and adds. */
export function cardHunks(files: readonly { path: string; base: string; hunks: readonly ProposalHunk[]; states: readonly HunkState[] }[]): CardHunk[] {
  return files.flatMap((f, file) => {
    const lines = f.base.split('\n');
    return f.hunks.map((h, hunk) => {
      const { removed } = hunkMarks(h);
      const first = (removed[0] ?? h.oldStart) + 1;
      const last = removed.length ? removed[removed.length - 1] + 1 : first;
      return {
        file,
        hunk,
        path: f.path,
        where: last > first ? `lines ${first}-${last}` : `line ${first}`,
        removed: removed.map((l) => lines[l] ?? ''),
        added: addedLines(h),
        state: f.states[hunk] ?? 'pending',
      };
    });
  });
}

/** What the card says once a proposal of several hunks was answered hunk by hunk. */
export function keptLabel(kept: number, total: number): string {
  if (kept === total) return total === 1 ? 'Accepted' : `All ${total} hunks kept`;
  if (kept === 0) return 'Rejected';
  return `${kept} of ${total} hunks kept`;
}
