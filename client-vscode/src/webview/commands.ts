// Completion of /commands in the prompt box: typing "/" at the start offers the commands the
// server lists (agent/listCommands: the built-ins, the user's, a trusted workspace's), by name and
// description (and the agent type a command runs as); arrows move, Tab or Enter takes one,
// Escape closes. Plain DOM.
import type { CommandInfo } from '../protocol/generated';

/** The partial command name being typed ("/rev" -> "rev"), or undefined when the caret is not
 * in a leading /name. */
export function commandQuery(text: string, caret: number): string | undefined {
  const match = /^\/([a-z0-9_-]*)$/.exec(text.slice(0, caret));
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
  readonly list: HTMLUListElement;
  private commands: CommandInfo[] = [];
  private shown: CommandInfo[] = [];
  private selected = 0;

  /** `ask` asks the host for the list (answered through setCommands). */
  constructor(
    private readonly box: HTMLTextAreaElement,
    private readonly ask: () => void,
  ) {
    this.list = document.createElement('ul');
    this.list.id = 'commands';
    this.list.className = 'commands';
    this.list.setAttribute('role', 'listbox');
    this.list.setAttribute('aria-label', 'Commands');
    this.list.hidden = true;
    box.before(this.list);
    box.addEventListener('input', () => this.update());
    box.addEventListener('blur', () => this.close());
    this.list.addEventListener('mousedown', (e) => {
      const item = (e.target as HTMLElement).closest<HTMLElement>('[data-command]');
      if (!item) return;
      e.preventDefault(); // the box keeps its focus
      this.take(item.dataset.command ?? '');
    });
  }

  get open(): boolean {
    return !this.list.hidden;
  }

  setCommands(commands: CommandInfo[]): void {
    this.commands = commands;
    if (commandQuery(this.box.value, this.box.selectionStart ?? 0) !== undefined) this.update();
  }

  /** Show the matches of what is typed; the list is asked for again as a command starts. */
  update(): void {
    const query = commandQuery(this.box.value, this.box.selectionStart ?? 0);
    if (query === undefined) return this.close();
    if (query === '' && this.list.hidden) this.ask();
    this.shown = matchCommands(this.commands, query);
    this.selected = Math.min(this.selected, Math.max(0, this.shown.length - 1));
    if (!this.shown.length) return this.close();
    this.list.replaceChildren(
      ...this.shown.map((command, i) => {
        const li = document.createElement('li');
        li.className = `command${i === this.selected ? ' selected' : ''}`;
        li.dataset.command = command.name;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === this.selected));
        const name = document.createElement('span');
        name.className = 'command-name';
        name.textContent = `/${command.name}`;
        const description = document.createElement('span');
        description.className = 'command-description';
        description.textContent = commandDetail(command);
        li.append(name, ' ', description);
        return li;
      }),
    );
    this.list.hidden = false;
  }

  /** A key while the list is open: true when the menu used it (the caller sends nothing). */
  onKey(e: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      this.selected = (this.selected + step + this.shown.length) % this.shown.length;
      this.update();
    } else if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && !e.isComposing)) {
      this.take(this.shown[this.selected].name);
    } else if (e.key === 'Escape') {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
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
    this.list.hidden = true;
    this.selected = 0;
  }
}
