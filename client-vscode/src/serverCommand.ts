// Which `agentls` to start, and with what environment. No vscode import (unit-tested).
import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export interface ServerLaunch {
  command: string;
  args: string[];
  /** Where the command came from, for messages. */
  origin: 'setting' | 'venv' | 'path' | 'managed';
  /** Why a workspace's own program was passed over (an untrusted workspace), for the log. */
  note?: string;
}

export function venvCandidates(folder: string, platform: NodeJS.Platform = process.platform): string[] {
  return platform === 'win32'
    ? [join(folder, '.venv', 'Scripts', 'agentls.exe'), join(folder, 'venv', 'Scripts', 'agentls.exe')]
    : [join(folder, '.venv', 'bin', 'agentls'), join(folder, 'venv', 'bin', 'agentls')];
}

/**
 * The setting `agentls.server.command` if set; else the first workspace folder's .venv (or venv);
 * else `agentls` on PATH; else, when `managed` names it and it exists, the agentls the extension
 * installed in its own environment (install.ts). The arguments are `agentls.server.args` (default:
 * serve). Nothing found: `agentls` with origin 'path', which the caller sees is not there.
 *
 * In an untrusted workspace (`trusted` false) no program of the workspace's own is started: not
 * its .venv's agentls, nor a command setting that points into it with `${workspaceFolder}`; the
 * one on PATH runs instead. (VS Code already ignores the workspace's own values of the server
 * settings there: package.json's restrictedConfigurations.)
 */
export function resolveServerLaunch(
  setting: string | undefined,
  args: string[] | undefined,
  workspaceFolders: readonly string[],
  exists: (path: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
  trusted = true,
  managed?: { agentls: string; pathVar: string | undefined },
): ServerLaunch {
  const serverArgs = args && args.length ? [...args] : ['serve'];
  const configured = setting?.trim();
  const untrustedNote = 'the workspace is not trusted, so none of its own programs is started';
  if (configured && (trusted || !configured.includes('${workspaceFolder}'))) {
    const expanded = configured.replace(/\$\{workspaceFolder\}/g, workspaceFolders[0] ?? '.');
    return { command: expanded, args: serverArgs, origin: 'setting' };
  }
  const onPath = (note?: string): ServerLaunch => {
    if (managed && !commandExists('agentls', managed.pathVar, exists, platform) && exists(managed.agentls)) {
      return { command: managed.agentls, args: serverArgs, origin: 'managed', ...(note ? { note } : {}) };
    }
    return { command: 'agentls', args: serverArgs, origin: 'path', ...(note ? { note } : {}) };
  };
  if (!trusted) return onPath(untrustedNote);
  for (const folder of workspaceFolders) {
    for (const candidate of venvCandidates(folder, platform)) {
      if (exists(candidate)) return { command: candidate, args: serverArgs, origin: 'venv' };
    }
  }
  return onPath();
}

/**
 * Whether `command` can be spawned: an absolute path that exists, or a bare name found in one of
 * PATH's directories.
 */
export function commandExists(
  command: string,
  pathVar: string | undefined,
  exists: (path: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (isAbsolute(command) || command.includes('/') || (platform === 'win32' && command.includes('\\'))) {
    return exists(command);
  }
  const names = platform === 'win32' ? [command, `${command}.exe`, `${command}.cmd`] : [command];
  for (const dir of (pathVar ?? '').split(platform === 'win32' ? ';' : delimiter)) {
    if (!dir) continue;
    for (const name of names) if (exists(join(dir, name))) return true;
  }
  return false;
}

/** The server's environment: ours, plus the API key from SecretStorage when one is stored. */
export function serverEnv(base: NodeJS.ProcessEnv, apiKey: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (apiKey) env.ANTHROPIC_API_KEY = apiKey;
  return env;
}

/**
 * initializationOptions.agent (and the `agent` of didChangeConfiguration) from the settings, with
 * `workspaceTrusted` (vscode.workspace.isTrusted) when given: the server applies the workspace's
 * .agentls/config.json in full only when it is true.
 */
export function agentOptions(
  model: string | undefined,
  permissions: unknown,
  workspaceTrusted?: boolean,
  review?: string,
): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (workspaceTrusted !== undefined) options.workspaceTrusted = workspaceTrusted;
  // Review "after" (the server's `review` setting): only the two values the server knows.
  if (review === 'before' || review === 'after') options.review = review;
  if (model && model.trim()) options.model = model.trim();
  if (
    permissions &&
    typeof permissions === 'object' &&
    (Array.isArray(permissions) ? permissions.length > 0 : Object.keys(permissions).length > 0)
  ) {
    options.permissions = permissions;
  }
  return options;
}
