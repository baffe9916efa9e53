import { describe, expect, it } from 'vitest';
import { gateLine } from '../../src/model/finishGate';
import { applyEvent, emptyView, viewFromMessages, type NoticeItem } from '../../src/model/transcript';
import type { FinishGateEvent, GateProblem, MessageInfo } from '../../src/protocol/generated';

const error = (path: string, line: number): GateProblem => ({ path, line, severity: 'error', message: 'x', source: 'Pyright' });

function gate(over: Partial<FinishGateEvent>): FinishGateEvent {
  return { type: 'finish-gate', sessionId: 's', status: 'clean', level: 'errors', checked: 3, attempt: 0, maxAttempts: 2, problems: [], ...over };
}

describe('the finish gate line on a turn', () => {
  it('says how many files were checked and that nothing new was found', () => {
    expect(gateLine(gate({}))).toEqual({ level: 'info', text: 'Checked 3 files: no new errors' });
    expect(gateLine(gate({ checked: 1, level: 'warnings' })).text).toBe('Checked 1 file: no new errors or warnings');
  });

  it('names the places of what went back to the agent, and which try it was', () => {
    const line = gateLine(gate({ status: 'sent-back', attempt: 1, checked: 2, problems: [error('b.py', 1)] }));
    expect(line).toEqual({ level: 'info', text: 'Checked 2 files: 1 new error (b.py:1), sent back to the agent (1 of 2)' });
  });

  it('warns of the errors left after the last try, a few by place and the rest counted', () => {
    const problems = [error('b.py', 1), error('b.py', 5), error('c.py', 2), error('d.py', 9)];
    const line = gateLine(gate({ status: 'left', attempt: 2, problems }));
    expect(line).toEqual({ level: 'warning', text: '4 errors left after 2 tries (b.py:1, b.py:5, c.py:2, 1 more)' });
    const warned = gateLine(gate({ status: 'left', attempt: 1, problems: [{ ...error('a.py', 2), severity: 'warning' }] }));
    expect(warned.text).toBe('1 warning left after 1 try (a.py:2)');
    expect(gateLine(gate({ status: 'left', problems: [error('a.py', 1)] })).text).toBe('1 new error left (finishGateSteps is 0) (a.py:1)');
  });

  it('says the files whose diagnostics did not come in time', () => {
    expect(gateLine(gate({ checked: 2, unchecked: 1 })).text).toBe('Checked 2 files: no new errors; 1 file not checked (no diagnostics in time)');
  });

  it('is a notice on the turn, one per check', () => {
    const view = emptyView('s');
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm1', prompt: 'rename compute' });
    applyEvent(view, gate({ status: 'sent-back', attempt: 1, checked: 2, problems: [error('b.py', 1)] }));
    applyEvent(view, gate({ attempt: 1, checked: 2 }));
    const notices = view.items.filter((i): i is NoticeItem => i.kind === 'notice');
    expect(notices.map((n) => [n.level, n.text])).toEqual([
      ['info', 'Checked 2 files: 1 new error (b.py:1), sent back to the agent (1 of 2)'],
      ['info', 'Checked 2 files: no new errors'],
    ]);
  });
});

describe('the finish gate in a session loaded from its history', () => {
  it("shows the gate's message to the agent as a notice, not as the user's prompt", () => {
    const told = '[agentls finish gate, check 1 of 2] These errors are new since your change:\nb.py:1: error [Pyright] "compute" is unknown import symbol';
    const view = viewFromMessages('s', [
      { id: 'u1', role: 'user', createdAt: 1, parts: [{ type: 'text', text: 'rename compute' }] },
      { id: 'u2', role: 'user', createdAt: 2, parts: [{ type: 'text', text: told }] },
    ] satisfies MessageInfo[]);
    expect(view.items.map((i) => [i.kind, i.kind === 'user' || i.kind === 'notice' ? i.text : ''])).toEqual([
      ['user', 'rename compute'],
      ['notice', told],
    ]);
  });
});
