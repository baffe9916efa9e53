// What "Agent: fix the problems here" and "Fix all problems in this file" send (issue 29 item 3):
// the instruction names each diagnostic (line, source, code, message), and the server's own
// selection actions that VS Code replaces with its own are recognised. No vscode import: unit-tested.

export interface Problem {
  /** 0-based line. */
  line: number;
  message: string;
  source?: string;
  code?: string | number;
  severity?: 'error' | 'warning' | 'information' | 'hint';
}

export const MAX_PROBLEMS = 50;

/** One problem as the prompt lists it: "- line 3 (pyright reportAttributeAccessIssue, error): ...". */
export function problemLine(p: Problem): string {
  const tags = [[p.source, p.code === undefined || p.code === '' ? undefined : String(p.code)].filter(Boolean).join(' '), p.severity]
    .filter(Boolean)
    .join(', ');
  return `- line ${p.line + 1}${tags ? ` (${tags})` : ''}: ${p.message.replace(/\s*\n\s*/g, ' ')}`;
}

/** The instruction of a fix: the problems by line, at most MAX_PROBLEMS of them. */
export function fixInstruction(problems: readonly Problem[], wholeFile: boolean, path: string): string {
  const sorted = [...problems].sort((a, b) => a.line - b.line);
  const shown = sorted.slice(0, MAX_PROBLEMS).map(problemLine);
  const more = sorted.length > MAX_PROBLEMS ? [`(and ${sorted.length - MAX_PROBLEMS} more)`] : [];
  const head = wholeFile
    ? `Fix the problems the editor reports in ${path}:`
    : `Fix the problems the editor reports in the selected code of ${path}:`;
  return [head, ...shown, ...more].join('\n');
}

/** The server's selection actions the VS Code extension offers itself instead: "Ask agent about
 * this" (a chip in the panel's prompt box) and the fix (only where there are problems). */
export const REPLACED_SERVER_ACTIONS = new Set(['Ask agent about this', 'Agent: fix the problems here']);
