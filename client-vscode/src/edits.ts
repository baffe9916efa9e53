// LSP WorkspaceEdits as plain data: which files they touch and what each file looks like after
// them. Used for the diff view of a proposed edit; no vscode import, so it is unit-tested directly.

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspTextEdit {
  range: LspRange;
  newText: string;
}

/** What a WorkspaceEdit does to one file. */
export interface FileChange {
  uri: string;
  edits: LspTextEdit[];
  /** The edit creates the file (a CreateFile operation before its text edits). */
  created: boolean;
  /** The edit deletes the file. */
  deleted: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPosition(value: unknown): value is LspPosition {
  return isRecord(value) && typeof value.line === 'number' && typeof value.character === 'number';
}

function asTextEdits(value: unknown): LspTextEdit[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (e): e is LspTextEdit =>
      isRecord(e) &&
      typeof e.newText === 'string' &&
      isRecord(e.range) &&
      isPosition(e.range.start) &&
      isPosition(e.range.end),
  );
}

/** The files a WorkspaceEdit (as JSON) touches, in order, with their text edits merged per file. */
export function fileChanges(edit: unknown): FileChange[] {
  const byUri = new Map<string, FileChange>();
  const get = (uri: string): FileChange => {
    let change = byUri.get(uri);
    if (!change) {
      change = { uri, edits: [], created: false, deleted: false };
      byUri.set(uri, change);
    }
    return change;
  };
  if (!isRecord(edit)) return [];
  if (Array.isArray(edit.documentChanges)) {
    for (const change of edit.documentChanges) {
      if (!isRecord(change)) continue;
      if (change.kind === 'create' && typeof change.uri === 'string') {
        get(change.uri).created = true;
      } else if (change.kind === 'delete' && typeof change.uri === 'string') {
        get(change.uri).deleted = true;
      } else if (change.kind === 'rename' && typeof change.newUri === 'string') {
        get(change.newUri).created = true;
      } else if (isRecord(change.textDocument) && typeof change.textDocument.uri === 'string') {
        get(change.textDocument.uri).edits.push(...asTextEdits(change.edits));
      }
    }
  }
  if (isRecord(edit.changes)) {
    for (const [uri, edits] of Object.entries(edit.changes)) get(uri).edits.push(...asTextEdits(edits));
  }
  return [...byUri.values()];
}

/** The offset of an LSP position (UTF-16 code units, like JS strings) in text, clamped to it. */
export function offsetAt(text: string, position: LspPosition): number {
  let offset = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) lineEnd = text.length;
  // A position past the end of its line means the line's end (LSP), not the next line.
  if (lineEnd > offset && text[lineEnd - 1] === '\r') lineEnd -= 1;
  return Math.min(offset + Math.max(position.character, 0), lineEnd);
}

/** The text after applying edits that all refer to the original text (LSP semantics). */
export function applyTextEdits(text: string, edits: readonly LspTextEdit[]): string {
  const resolved = edits
    .map((edit, index) => ({
      start: offsetAt(text, edit.range.start),
      end: offsetAt(text, edit.range.end),
      newText: edit.newText,
      index,
    }))
    .map((e) => (e.end < e.start ? { ...e, end: e.start } : e))
    // By start; inserts at the same place keep their order.
    .sort((a, b) => a.start - b.start || a.index - b.index);
  let out = '';
  let cursor = 0;
  for (const edit of resolved) {
    if (edit.start < cursor) throw new Error('overlapping text edits');
    out += text.slice(cursor, edit.start) + edit.newText;
    cursor = edit.end;
  }
  return out + text.slice(cursor);
}

/** The first line an edit changes (where a CodeLens for it goes). */
export function firstChangedLine(change: FileChange): number {
  let line = Number.POSITIVE_INFINITY;
  for (const edit of change.edits) line = Math.min(line, edit.range.start.line);
  return Number.isFinite(line) ? line : 0;
}

/** Proposed content of a file: the current text (undefined if it does not exist) after the change. */
export function proposedText(current: string | undefined, change: FileChange): string {
  if (change.deleted) return '';
  const base = change.created && current === undefined ? '' : (current ?? '');
  return applyTextEdits(base, change.edits);
}

/**
 * The result of a unified diff applied to text, for when a request has a `diff` but no `edit`:
 * hunks are located by their context, not their line numbers, so a slightly moved file still works.
 * Returns undefined when a hunk does not match.
 */
export function applyUnifiedDiff(text: string, diff: string): string | undefined {
  const lines = text.split('\n');
  const hunks: { oldLines: string[]; newLines: string[]; start: number }[] = [];
  let current: { oldLines: string[]; newLines: string[]; start: number } | undefined;
  const diffLines = diff.split('\n');
  if (diffLines[diffLines.length - 1] === '') diffLines.pop();
  for (const raw of diffLines) {
    const header = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(raw);
    if (header) {
      current = { oldLines: [], newLines: [], start: Math.max(Number(header[1]) - 1, 0) };
      hunks.push(current);
      continue;
    }
    if (!current || raw.startsWith('---') || raw.startsWith('+++') || raw.startsWith('\\')) continue;
    const body = raw.slice(1);
    if (raw.startsWith('+')) current.newLines.push(body);
    else if (raw.startsWith('-')) current.oldLines.push(body);
    else if (raw.startsWith(' ') || raw === '') {
      current.oldLines.push(body);
      current.newLines.push(body);
    }
  }
  if (!hunks.length) return undefined;
  let offset = 0;
  for (const hunk of hunks) {
    const at = findLines(lines, hunk.oldLines, hunk.start + offset);
    if (at < 0) return undefined;
    lines.splice(at, hunk.oldLines.length, ...hunk.newLines);
    offset += hunk.newLines.length - hunk.oldLines.length;
  }
  return lines.join('\n');
}

function findLines(lines: string[], needle: string[], near: number): number {
  const matches = (at: number): boolean => needle.every((line, i) => lines[at + i] === line);
  for (let distance = 0; distance <= lines.length; distance++) {
    for (const at of [near - distance, near + distance]) {
      if (at >= 0 && at + needle.length <= lines.length && matches(at)) return at;
    }
  }
  return -1;
}
