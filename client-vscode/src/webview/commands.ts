// Completion of /commands in the prompt box: typing "/" at the start offers the commands the
// server lists (agent/listCommands: the built-ins, the user's, a trusted workspace's), by name and
// description (and the agent type a command runs as), in the completion list it shares with the
// @-mentions (completion.ts).
import type { CommandInfo } from '../protocol/generated';
import { CompletionList } from './completion';

/** The partial command name being typed ("/rev" -> "rev", "/frontend:co" -> "frontend:co": a
 * Claude Code command in a subfolder), or undefined when the caret is not in a leading /name. */
export function commandQuery(text: string, caret: number): string | undefined {
  const match = /^\/([a-z0-9_:-]*)$/.exec(text.slice(0, caret));
  return match ? match[1] : undefined;
}

/** The commands whose name starts with the query, then those that contain it. */
export function matchCommands(commands: CommandInfo[], query: string): CommandInfo[] {
  const starts = commands.filter((c) => c.name.startsWith(query));
  const contains = commands.filter((c) => !c.name.startsWith(query) && c.name.includes(query));
  return [...starts, ...contains];
}

/** What the list says after a command's name: its description, and the agent type its turn runs
 * as when its front matter names one. */
export function commandDetail(command: CommandInfo): string {
  return command.agent ? `${command.description} (as ${command.agent})` : command.description;
}

export class CommandMenu {
  private readonly menu: CompletionList;
  private commands: CommandInfo[] = [];

  /** `ask` asks the host for the list (answered through setCommands). */
  constructor(
    private readonly box: HTMLTextAreaElement,
    private readonly ask: () => void,
  ) {
    this.menu = new CompletionList(box, 'commands', 'Commands');
    box.addEventListener('input', () => this.update());
    box.addEventListener('blur', () => this.close());
  }

  get list(): HTMLUListElement {
    return this.menu.el;
  }

  get open(): boolean {
    return this.menu.open;
  }

  setCommands(commands: CommandInfo[]): void {
    this.commands = commands;
    if (commandQuery(this.box.value, this.box.selectionStart ?? 0) !== undefined) this.update(true);
  }

  /** Show the matches of what is typed; the list is asked for again as a command starts. */
  update(keep = false): void {
    const query = commandQuery(this.box.value, this.box.selectionStart ?? 0);
    if (query === undefined) return this.close();
    if (query === '' && !this.menu.open) this.ask();
    this.menu.show(
      matchCommands(this.commands, query).map((command) => ({
        key: command.name,
        name: `/${command.name}`,
        description: commandDetail(command),
        kind: 'command',
        take: () => this.take(command.name),
      })),
      keep,
    );
  }

  /** A key while the list is open: true when the menu used it (the caller sends nothing). */
  onKey(e: KeyboardEvent): boolean {
    return this.menu.onKey(e);
  }

  private take(name: string): void {
    const rest = this.box.value.slice(this.box.selectionStart ?? 0).replace(/^\S*/, '');
    this.box.value = `/${name} ${rest.trimStart()}`;
    const caret = name.length + 2;
    this.box.setSelectionRange(caret, caret);
    this.close();
    this.box.dispatchEvent(new Event('input')); // the draft is saved
  }

  close(): void {
    this.menu.close();
  }
}
