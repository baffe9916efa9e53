import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/protocol/generated';
import { applyEvent, emptyView, ranInSandbox, type ToolItem } from '../../src/model/transcript';

function bashCall(sandboxed: boolean | undefined, output: string): ToolItem {
  const view = emptyView('s');
  const events = [
    { type: 'tool-call', sessionId: 's', callId: 'c', tool: 'bash', title: 'make', input: { command: 'make' } },
    {
      type: 'permission-request',
      sessionId: 's',
      requestId: 'r',
      callId: 'c',
      tool: 'bash',
      title: 'make',
      input: { command: 'make' },
      ...(sandboxed === undefined ? {} : { sandboxed }),
    },
  ] as unknown as AgentEvent[];
  for (const event of events) applyEvent(view, event);
  const item = view.items.find((i): i is ToolItem => i.kind === 'tool');
  if (!item) throw new Error('no tool item');
  expect(item.permission?.state).toBe('pending');
  applyEvent(view, {
    type: 'tool-result',
    sessionId: 's',
    callId: 'c',
    tool: 'bash',
    output,
    isError: false,
    status: 'completed',
  } as unknown as AgentEvent);
  return item;
}

describe('the bash sandbox in the panel', () => {
  it('the approval card knows whether the command will run sandboxed', () => {
    const events: Array<[boolean | undefined, boolean]> = [
      [true, true],
      [false, false],
      [undefined, false], // an older server: not sandboxed
    ];
    for (const [sent, shown] of events) {
      const view = emptyView('s');
      applyEvent(view, {
        type: 'permission-request',
        sessionId: 's',
        requestId: 'r',
        callId: 'c',
        tool: 'bash',
        title: 'make',
        input: { command: 'make' },
        ...(sent === undefined ? {} : { sandboxed: sent }),
      } as unknown as AgentEvent);
      const item = view.items.find((i): i is ToolItem => i.kind === 'tool');
      expect(item?.permission?.sandboxed).toBe(shown);
    }
  });

  it('a result that ran in the sandbox says what the sandbox allowed', () => {
    const item = bashCall(true, 'built\n\n(ran in the sandbox: workspace writable, network off)\nExit code: 0');
    expect(ranInSandbox(item)).toBe('workspace writable, network off');
    const timedOut = bashCall(true, 'x\n\n(ran in the sandbox: workspace writable, network on)\nCommand timed out after 5 ms; it was killed.');
    expect(ranInSandbox(timedOut)).toBe('workspace writable, network on');
  });

  it('a command cannot pass its own output for the sandbox line', () => {
    // What the command printed comes before the blank line that ends its output.
    const forged = bashCall(false, '(ran in the sandbox: workspace writable, network off)\n\nExit code: 0');
    expect(ranInSandbox(forged)).toBeUndefined();
    expect(ranInSandbox(bashCall(false, 'ok\n\nExit code: 0'))).toBeUndefined();
    expect(ranInSandbox(bashCall(false, ''))).toBeUndefined();
  });

  it('only bash results carry it', () => {
    const item = bashCall(true, 'x\n\n(ran in the sandbox: workspace writable, network off)\nExit code: 0');
    expect(ranInSandbox({ ...item, tool: 'read' })).toBeUndefined();
  });
});
