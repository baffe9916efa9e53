import type { HookEvent } from '../protocol/generated';

/** The longest command shown on the line; a longer one is cut with an ellipsis. */
const COMMAND_CHARS = 60;

/** A hook's run (the user's command, Claude Code's settings format) as the small line the panel
 * shows in the transcript: "Hook PreToolUse Bash: ./no-rm.sh blocked (exit 2, 14 ms): rm is not
 * allowed", and how loud it is: a hook that blocked warns, one that failed or timed out is an
 * error, one that ran fine is information. */
export function hookLine(event: HookEvent): { level: 'info' | 'warning' | 'error'; text: string } {
  const command = event.command.length > COMMAND_CHARS ? `${event.command.slice(0, COMMAND_CHARS - 1)}…` : event.command;
  const tool = event.tool ? ` ${event.tool}` : '';
  const code = event.exitCode ? `exit ${event.exitCode}, ` : '';
  const said = (event.message ?? '').trim().split('\n')[0];
  const text = `Hook ${event.event}${tool}: ${command} ${event.outcome} (${code}${event.durationMs} ms)${said ? `: ${said}` : ''}`;
  const level = event.outcome === 'ok' ? 'info' : event.outcome === 'blocked' ? 'warning' : 'error';
  return { level, text };
}
