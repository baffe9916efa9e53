// Diagnostics forwarding: whatever any language server in VS Code reports for a file (Pylance,
// ESLint, ...) is pushed to agentls with agent/diagnostics, so the agent sees the effect of its edits.
// The vscode parts come in through DiagnosticsSource, so this is unit-tested without VS Code.
import type { DiagnosticsParams } from './protocol/generated';

/** The subset of vscode.Diagnostic read here. */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3. */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  tags?: readonly number[];
}

export interface DiagnosticsSource<U extends { scheme: string; toString(): string }> {
  get(uri: U): readonly EditorDiagnostic[];
  all(): readonly [U, readonly EditorDiagnostic[]][];
  /** The open document's version, if it is open. */
  version(uri: U): number | undefined;
  /** The uri as the language client sends it to the server. */
  asProtocolUri(uri: U): string;
}

/** Our own server's diagnostics (only published to clients without diagnosticsPush) are not echoed. */
const OWN_SOURCE = 'agentls';

export function toLspDiagnostic(d: EditorDiagnostic): Record<string, unknown> {
  const out: Record<string, unknown> = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    message: d.message,
    severity: d.severity + 1,
  };
  if (d.source) out.source = d.source;
  if (d.code !== undefined) out.code = typeof d.code === 'object' ? d.code.value : d.code;
  if (d.tags?.length) out.tags = [...d.tags];
  return out;
}

export class DiagnosticsForwarder<U extends { scheme: string; toString(): string }> {
  private readonly pending = new Map<string, U>();
  private timer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly source: DiagnosticsSource<U>,
    private readonly send: (params: DiagnosticsParams) => void,
    private readonly delayMs = 20,
  ) {}

  /** From vscode.languages.onDidChangeDiagnostics: changes within delayMs go out together. */
  changed(uris: readonly U[]): void {
    for (const uri of uris) {
      if (uri.scheme === 'file') this.pending.set(uri.toString(), uri);
    }
    if (this.pending.size && !this.timer) {
      this.timer = setTimeout(() => this.flush(), this.delayMs);
    }
  }

  /** Everything VS Code knows now (when the server (re)starts). */
  pushAll(): void {
    for (const [uri] of this.source.all()) this.changed([uri]);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const uris = [...this.pending.values()];
    this.pending.clear();
    for (const uri of uris) {
      const diagnostics = this.source
        .get(uri)
        .filter((d) => d.source !== OWN_SOURCE)
        .map(toLspDiagnostic);
      const params: DiagnosticsParams = { uri: this.source.asProtocolUri(uri), diagnostics };
      const version = this.source.version(uri);
      if (version !== undefined) params.version = version;
      this.send(params);
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.pending.clear();
  }
}
