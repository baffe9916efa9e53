import { describe, expect, it } from 'vitest';
import { WorkspaceEditApplier, type EditableDocument } from '../../src/applyEdit';

class Doc implements EditableDocument {
  saves = 0;
  constructor(
    readonly uri: string,
    public version: number,
    public isDirty: boolean,
    private readonly saveWorks = true,
  ) {}
  save(): Promise<boolean> {
    this.saves += 1;
    if (this.saveWorks) this.isDirty = false;
    return Promise.resolve(this.saveWorks);
  }
}

function setup(docs: Doc[], opens: Doc[] = []) {
  const applied: unknown[] = [];
  const logs: string[] = [];
  const open = [...docs];
  const applier = new WorkspaceEditApplier<unknown>({
    textDocuments: () => open,
    asUri: (uri) => uri,
    convert: async (edit) => edit,
    applyEdit: async (edit) => {
      applied.push(edit);
      // VS Code marks what it edited dirty, and opens files that were not open.
      for (const doc of open) doc.isDirty = true;
      for (const doc of opens) {
        doc.isDirty = true;
        open.push(doc);
      }
      return true;
    },
    log: (m) => logs.push(m),
  });
  return { applier, applied, logs };
}

const edit = (...uris: [string, number | null][]) => ({
  documentChanges: uris.map(([uri, version]) => ({
    textDocument: { uri, version },
    edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'x' }],
  })),
});

describe('workspace/applyEdit with savesEdits', () => {
  it('saves a document that had no unsaved changes, and one the edit opened', async () => {
    const clean = new Doc('file:///w/clean.py', 3, false);
    const opened = new Doc('file:///w/closed.py', 1, false);
    const { applier } = setup([clean], [opened]);
    const result = await applier.apply({ edit: edit(['file:///w/clean.py', 3], ['file:///w/closed.py', null]) });
    expect(result).toEqual({ applied: true });
    expect(clean.saves).toBe(1);
    expect(opened.saves).toBe(1);
  });

  it('never saves a document the user had unsaved changes in', async () => {
    const dirty = new Doc('file:///w/dirty.py', 7, true);
    const { applier } = setup([dirty]);
    expect(await applier.apply({ edit: edit(['file:///w/dirty.py', 7]) })).toEqual({ applied: true });
    expect(dirty.saves).toBe(0);
    expect(dirty.isDirty).toBe(true);
  });

  it('refuses an edit made for another version of an open document', async () => {
    const doc = new Doc('file:///w/a.py', 5, false);
    const { applier, applied } = setup([doc]);
    const result = await applier.apply({ edit: edit(['file:///w/a.py', 4]) });
    expect(result.applied).toBe(false);
    expect(result.failureReason).toMatch(/version 5.*version 4/);
    expect(applied).toEqual([]);
  });

  it('applies edits one at a time, in order', async () => {
    const order: string[] = [];
    const applier = new WorkspaceEditApplier<string>({
      textDocuments: () => [],
      asUri: (u) => u,
      convert: async (e) => {
        const label = (e as { label: string }).label;
        await new Promise((r) => setTimeout(r, label === 'first' ? 20 : 0));
        return label;
      },
      applyEdit: async (label) => {
        order.push(label);
        return true;
      },
      log: () => undefined,
    });
    await Promise.all([applier.apply({ edit: { label: 'first' } }), applier.apply({ edit: { label: 'second' } })]);
    expect(order).toEqual(['first', 'second']);
  });

  it('reports a save that failed in the log, and still says applied', async () => {
    const doc = new Doc('file:///w/ro.py', 1, false, false);
    const { applier, logs } = setup([doc]);
    expect(await applier.apply({ edit: edit(['file:///w/ro.py', 1]) })).toEqual({ applied: true });
    expect(logs[0]).toContain('did not succeed');
  });
});
