// workspace/applyEdit, handled here instead of by vscode-languageclient so that the client can keep
// its `savesEdits` promise: after VS Code applies the server's edit (on the undo stack, so Ctrl+Z
// undoes it), every document it touched that had no unsaved changes before is saved, so disk equals
// the buffer and the agent's commands see the edit. A document the user was editing stays unsaved.
import { fileChanges } from './edits';

export interface EditableDocument {
  readonly uri: { toString(): string };
  readonly version: number;
  readonly isDirty: boolean;
  save(): PromiseLike<boolean>;
}

export interface ApplyEditDeps<WorkspaceEdit> {
  /** The documents open in VS Code now. */
  textDocuments(): readonly EditableDocument[];
  /** A protocol uri as VS Code's uri string. */
  asUri(uri: string): string;
  convert(edit: unknown): Promise<WorkspaceEdit>;
  applyEdit(edit: WorkspaceEdit): PromiseLike<boolean>;
  log(message: string): void;
}

export interface ApplyEditResult {
  applied: boolean;
  failureReason?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Versions the edit expects: uri -> version (only for TextDocumentEdits that name one). */
function expectedVersions(edit: unknown): Map<string, number> {
  const out = new Map<string, number>();
  if (!isRecord(edit) || !Array.isArray(edit.documentChanges)) return out;
  for (const change of edit.documentChanges) {
    if (!isRecord(change) || !isRecord(change.textDocument)) continue;
    const { uri, version } = change.textDocument;
    if (typeof uri === 'string' && typeof version === 'number') out.set(uri, version);
  }
  return out;
}

export class WorkspaceEditApplier<WorkspaceEdit> {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ApplyEditDeps<WorkspaceEdit>) {}

  /** One edit at a time, in the order they arrive. */
  apply(params: { edit: unknown; label?: string }): Promise<ApplyEditResult> {
    const run = this.queue.then(() => this.applyNow(params.edit));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async applyNow(edit: unknown): Promise<ApplyEditResult> {
    const deps = this.deps;
    const open = new Map(deps.textDocuments().map((d) => [d.uri.toString(), d]));
    for (const [uri, version] of expectedVersions(edit)) {
      const doc = open.get(deps.asUri(uri));
      if (doc && doc.version !== version) {
        return {
          applied: false,
          failureReason: `The document changed while the edit was on its way (version ${doc.version}, the edit is for version ${version}).`,
        };
      }
    }
    const changes = fileChanges(edit);
    const cleanBefore = new Set<string>();
    for (const change of changes) {
      if (change.deleted) continue;
      const uri = deps.asUri(change.uri);
      if (!open.get(uri)?.isDirty) cleanBefore.add(uri);
    }
    const converted = await deps.convert(edit);
    const applied = await deps.applyEdit(converted);
    if (!applied) return { applied: false, failureReason: 'VS Code did not apply the edit.' };
    for (const doc of deps.textDocuments()) {
      const uri = doc.uri.toString();
      if (!cleanBefore.has(uri) || !doc.isDirty) continue;
      try {
        if (!(await doc.save())) deps.log(`agentls: saving ${uri} after the agent's edit did not succeed`);
      } catch (err) {
        deps.log(`agentls: saving ${uri} after the agent's edit failed: ${String(err)}`);
      }
    }
    return { applied: true };
  }
}
