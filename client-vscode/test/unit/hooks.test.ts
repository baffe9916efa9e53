import { describe, expect, it } from 'vitest';
import { hookLine } from '../../src/model/hooks';
import { applyEvent, emptyView, type NoticeItem } from '../../src/model/transcript';
import type { HookEvent } from '../../src/protocol/generated';

function hook(over: Partial<HookEvent>): HookEvent {
  return {
    type: 'hook',
    sessionId: 's',
    event: 'PreToolUse',
    command: '~/.claude/hooks/no-rm.sh',
    source: '/home/u/.claude/settings.json',
    durationMs: 14,
    outcome: 'ok',
    ...over,
  };
}

describe("a hook's run in the transcript", () => {
  it('says the event, the tool, the command, how it ended and how long it took', () => {
    expect(hookLine(hook({ tool: 'Bash', exitCode: 0 }))).toEqual({ level: 'info', text: 'Hook PreToolUse Bash: ~/.claude/hooks/no-rm.sh ok (14 ms)' });
  });

  it('warns of a hook that blocked, with its exit code and the first line of its reason', () => {
    const line = hookLine(hook({ tool: 'Bash', outcome: 'blocked', exitCode: 2, message: 'rm is not allowed here\nuse trash/' }));
    expect(line).toEqual({ level: 'warning', text: 'Hook PreToolUse Bash: ~/.claude/hooks/no-rm.sh blocked (exit 2, 14 ms): rm is not allowed here' });
  });

  it('shows a failure or a timeout as an error, and cuts a long command', () => {
    const long = `python3 ${'x'.repeat(100)}.py`;
    const line = hookLine(hook({ event: 'Stop', command: long, outcome: 'timeout', message: 'timed out after 60 s' }));
    expect(line.level).toBe('error');
    expect(line.text).toBe(`Hook Stop: ${long.slice(0, 59)}… timeout (14 ms): timed out after 60 s`);
  });

  it('is a notice on the session, as each hook ran', () => {
    const view = emptyView('s');
    applyEvent(view, hook({ event: 'Stop', outcome: 'blocked', exitCode: 2, message: 'Run the tests first.' }));
    const [item] = view.items as NoticeItem[];
    expect(item.kind).toBe('notice');
    expect(item.level).toBe('warning');
    expect(item.text).toBe('Hook Stop: ~/.claude/hooks/no-rm.sh blocked (exit 2, 14 ms): Run the tests first.');
  });
});
