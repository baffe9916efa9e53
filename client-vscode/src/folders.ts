/**
 * Every workspace folder, as the server names them (server/agentls/workspace/folders.py): the
 * language client sends all of VS Code's workspace folders in initialize and each change as
 * workspace/didChangeWorkspaceFolders (we never pin `workspaceFolder` in the client's options).
 * With several folders the agent names a file "<folder>/<path>"; these turn such a name back
 * into a file.
 */
import { posix } from 'node:path';

export interface FolderRef {
  readonly name: string;
  readonly path: string; // the folder's file system path
}

function cleanName(name: string | undefined, path: string): string {
  const candidate = (name ?? '').trim();
  if (candidate && !/[\\/]/.test(candidate) && candidate !== '.' && candidate !== '..') return candidate;
  return path.replace(/[\\/]+$/, '').split(/[\\/]/).pop() || 'root';
}

/** The folders with the names the server gives them: the editor's name, else the directory's; a
 * repeated one gets "-2", "-3" (compared without case); a repeated path is left out. */
export function nameFolders(folders: readonly { name?: string; path: string }[]): FolderRef[] {
  const out: FolderRef[] = [];
  const paths = new Set<string>();
  const taken = new Set<string>();
  for (const folder of folders) {
    if (paths.has(folder.path)) continue;
    paths.add(folder.path);
    const base = cleanName(folder.name, folder.path);
    let unique = base;
    for (let n = 2; taken.has(unique.toLowerCase()); n++) unique = `${base}-${n}`;
    taken.add(unique.toLowerCase());
    out.push({ name: unique, path: folder.path });
  }
  return out;
}

/** The file a path the agent shows names: absolute as it is; with several folders, in the folder
 * its first segment names; otherwise (or naming none) in the first folder. Undefined without a
 * folder to resolve a relative path in. */
export function agentPathToFile(path: string, folders: readonly FolderRef[]): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return path;
  const first = folders[0];
  if (!first) return undefined;
  if (folders.length > 1) {
    const [head, ...rest] = path.split('/');
    const folder = folders.find((f) => f.name === head);
    if (folder) return rest.length ? `${folder.path}/${rest.join('/')}` : folder.path;
  }
  return `${first.path}/${path}`;
}

/** The absolute path a path names (see agentPathToFile) when it lies inside one of the folders;
 * undefined for anything outside them all ("..", another absolute path). */
export function insideFolders(path: string, folders: readonly FolderRef[]): string | undefined {
  const named = agentPathToFile(path, folders);
  if (named === undefined) return undefined;
  const full = posix.normalize(named);
  const inside = folders.some((f) => full.startsWith(posix.normalize(f.path).replace(/\/+$/, '') + '/'));
  return inside ? full : undefined;
}
