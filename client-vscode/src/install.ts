// Installing the server the .vsix carries (dist/wheel/agentls-<version>-py3-none-any.whl, built by
// scripts/build-wheel.mjs) into a virtual environment in the extension's global storage: which
// interpreter, whether an install or an update is due, running venv + pip, and what went wrong in
// words a user can act on. No vscode import (unit-tested with real directories and processes); the
// notifications live in installUi.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface ManagedPaths {
  /** The virtual environment. */
  venv: string;
  python: string;
  agentls: string;
  /** What was installed there: { version, wheel }. */
  marker: string;
  /** A directory that exists while one window installs (two windows must not run pip at once). */
  lock: string;
}

export function managedPaths(storage: string, platform: NodeJS.Platform = process.platform): ManagedPaths {
  const venv = join(storage, 'server-venv');
  const bin = platform === 'win32' ? join(venv, 'Scripts') : join(venv, 'bin');
  return {
    venv,
    python: join(bin, platform === 'win32' ? 'python.exe' : 'python'),
    agentls: join(bin, platform === 'win32' ? 'agentls.exe' : 'agentls'),
    marker: join(storage, 'server-installed.json'),
    lock: join(storage, 'server-install.lock'),
  };
}

export interface BundledWheel {
  path: string;
  version: string;
}

/** The agentls wheel in `dir` (the newest if there are several), or undefined. */
export function findBundledWheel(dir: string): BundledWheel | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let best: BundledWheel | undefined;
  for (const name of names) {
    const match = /^agentls-([^-]+)-.+\.whl$/.exec(name);
    if (!match) continue;
    if (!best || compareVersions(match[1], best.version) > 0) best = { path: join(dir, name), version: match[1] };
  }
  return best;
}

/**
 * Compares two versions such as 0.1.0, 0.2.0rc1, 1.0.post2 by their release numbers, then a
 * pre-release (a, b, rc) before the release, a post-release after it. Negative, 0 or positive.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): { release: number[]; rank: number; n: number } => {
    const m = /^(\d+(?:\.\d+)*)(?:[.-]?(a|b|rc|post|dev)\.?(\d*))?/i.exec(v.trim());
    if (!m) return { release: [0], rank: 0, n: 0 };
    const ranks: Record<string, number> = { dev: -4, a: -3, b: -2, rc: -1, post: 1 };
    return { release: m[1].split('.').map(Number), rank: m[2] ? ranks[m[2].toLowerCase()] : 0, n: Number(m[3] || 0) };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const d = (x.release[i] ?? 0) - (y.release[i] ?? 0);
    if (d) return d;
  }
  return x.rank - y.rank || x.n - y.n;
}

/** The version recorded after the last successful install, if the environment is still there. */
export function installedVersion(paths: ManagedPaths, exists: (path: string) => boolean = existsSync): string | undefined {
  if (!exists(paths.agentls)) return undefined;
  try {
    const marker: unknown = JSON.parse(readFileSync(paths.marker, 'utf8'));
    const version = (marker as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the managed environment needs: 'install' when it has no agentls, 'update' when the bundled
 * wheel is newer than what was installed (or nothing says what was), else 'current'. With no
 * bundled wheel (a development build) nothing can be done: 'current' or 'unavailable'.
 */
export function installNeed(
  bundled: BundledWheel | undefined,
  paths: ManagedPaths,
  exists: (path: string) => boolean = existsSync,
): 'install' | 'update' | 'current' | 'unavailable' {
  const present = exists(paths.agentls);
  if (!bundled) return present ? 'current' : 'unavailable';
  if (!present) return 'install';
  const installed = installedVersion(paths, exists);
  return installed === undefined || compareVersions(bundled.version, installed) > 0 ? 'update' : 'current';
}

export type InstallErrorKind = 'no-python' | 'too-old' | 'venv-failed' | 'no-network' | 'pip-failed' | 'no-wheel' | 'busy';

export class InstallError extends Error {
  constructor(
    readonly kind: InstallErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'InstallError';
  }
}

export interface Interpreter {
  command: string;
  /** Where it came from, for messages: the Python extension's selection or PATH. */
  source: 'python-extension' | 'path';
}

export interface RunResult {
  code: number | null;
  output: string;
  /** Set when the program could not be started at all (ENOENT...). */
  error?: string;
}

export type Runner = (command: string, args: string[], onOutput?: (chunk: string) => void) => Promise<RunResult>;

/** Runs a program without a shell, collecting stdout and stderr together. */
export const run: Runner = (command, args, onOutput) =>
  new Promise((resolve) => {
    let output = '';
    let child;
    try {
      child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    } catch (err) {
      resolve({ code: null, output, error: String(err) });
      return;
    }
    const collect = (data: Buffer): void => {
      const text = data.toString();
      output += text;
      onOutput?.(text);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (err) => resolve({ code: null, output, error: err.message }));
    child.on('close', (code) => resolve({ code, output }));
  });

/** The interpreter's version, from running it; undefined when it does not run. */
export async function pythonVersion(command: string, runner: Runner = run): Promise<[number, number, number] | undefined> {
  const result = await runner(command, ['-I', '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])']);
  if (result.error || result.code !== 0) return undefined;
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(result.output);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/**
 * The first candidate that runs and is at least Python 3.11. None runs: 'no-python'; some run but
 * all are older: 'too-old', naming them.
 */
export async function chooseInterpreter(candidates: Interpreter[], runner: Runner = run): Promise<Interpreter> {
  const old: string[] = [];
  for (const candidate of candidates) {
    const version = await pythonVersion(candidate.command, runner);
    if (!version) continue;
    if (version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1])) return candidate;
    old.push(`${candidate.command} is Python ${version.join('.')}`);
  }
  const need = `Python ${MIN_PYTHON.join('.')} or newer`;
  if (old.length) {
    throw new InstallError('too-old', `agentls needs ${need}; ${old.join(', ')}. Install a newer Python or select one in the Python extension.`);
  }
  const tried = candidates.map((c) => c.command).join(', ') || 'python3';
  throw new InstallError('no-python', `No Python found to install agentls with (tried ${tried}). Install ${need} and put python3 on PATH, or select an interpreter in the Python extension.`);
}

const NETWORK_SIGNS = [
  /Failed to establish a new connection/i,
  /Temporary failure in name resolution/i,
  /Name or service not known/i,
  /Network is unreachable/i,
  /Connection refused/i,
  /ConnectTimeoutError|Read timed out|timed out/i,
  /ProxyError/i,
  /Could not fetch URL/i,
  /SSLError|CERTIFICATE_VERIFY_FAILED/i,
];

/** The last `count` non-empty lines of a program's output. */
export function lastLines(output: string, count = 6): string {
  return output
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim())
    .slice(-count)
    .join('\n');
}

/** A failed pip: 'no-network' when the output says the index could not be reached, else 'pip-failed' with pip's last lines. */
export function pipFailure(result: RunResult): InstallError {
  if (result.error) return new InstallError('pip-failed', `pip could not be started: ${result.error}`);
  if (NETWORK_SIGNS.some((sign) => sign.test(result.output))) {
    return new InstallError(
      'no-network',
      `pip could not reach the package index to fetch agentls' dependencies (check the network, a proxy, or pip's index-url):\n${lastLines(result.output, 3)}`,
    );
  }
  return new InstallError('pip-failed', `pip failed (exit ${result.code ?? '?'}):\n${lastLines(result.output)}`);
}

export interface InstallOptions {
  interpreter: Interpreter;
  paths: ManagedPaths;
  wheel: BundledWheel;
  /** Each step, for the progress notification. */
  report?: (step: string) => void;
  /** Everything the programs print, for the log. */
  log?: (text: string) => void;
  runner?: Runner;
  exists?: (path: string) => boolean;
}

// A lock older than this is taken to be left by a window that died while installing.
const STALE_LOCK_MS = 15 * 60 * 1000;

/**
 * Creates the environment with the interpreter (unless it already has a python), then pip installs
 * the wheel, its dependencies coming from the user's package index (pip's own configuration), and
 * records the version. One install at a time: another window's running install is 'busy'.
 */
export async function installServer(options: InstallOptions): Promise<void> {
  const { paths } = options;
  mkdirSync(join(paths.lock, '..'), { recursive: true });
  try {
    mkdirSync(paths.lock);
  } catch {
    let age = 0;
    try {
      age = Date.now() - statSync(paths.lock).mtimeMs;
    } catch {
      // gone meanwhile
    }
    if (age < STALE_LOCK_MS) {
      throw new InstallError('busy', 'Another VS Code window is installing the agentls server; retry when it has finished.');
    }
    rmSync(paths.lock, { recursive: true, force: true });
    mkdirSync(paths.lock);
  }
  try {
    await installLocked(options);
  } finally {
    rmSync(paths.lock, { recursive: true, force: true });
  }
}

async function installLocked(options: InstallOptions): Promise<void> {
  const { interpreter, paths, wheel } = options;
  const runner = options.runner ?? run;
  const exists = options.exists ?? existsSync;
  const log = options.log ?? (() => undefined);
  if (!exists(wheel.path)) throw new InstallError('no-wheel', `The bundled agentls wheel is missing: ${wheel.path}. Reinstall the extension.`);
  if (!exists(paths.python)) {
    options.report?.(`creating a virtual environment with ${interpreter.command}`);
    log(`$ ${interpreter.command} -I -m venv ${paths.venv}\n`);
    // -I (isolated): not the current directory's modules (it may be a workspace with a venv/ or
    // pip/ package of its own), nor PYTHON* variables, nor the user's site-packages.
    const venv = await runner(interpreter.command, ['-I', '-m', 'venv', paths.venv], log);
    if (venv.error || venv.code !== 0 || !exists(paths.python)) {
      const detail = venv.error ?? lastLines(venv.output, 4);
      throw new InstallError(
        'venv-failed',
        `Could not create a virtual environment with ${interpreter.command}${detail ? `:\n${detail}` : ''}` +
          (/ensurepip|python3-venv/.test(detail) ? '\n(On Debian or Ubuntu: apt install python3-venv.)' : ''),
      );
    }
  }
  options.report?.(`pip install agentls ${wheel.version} and its dependencies`);
  const args = ['-I', '-m', 'pip', 'install', '--upgrade', wheel.path];
  log(`$ ${paths.python} ${args.join(' ')}\n`);
  const pip = await runner(paths.python, args, log);
  if (pip.error || pip.code !== 0) throw pipFailure(pip);
  if (!exists(paths.agentls)) throw new InstallError('pip-failed', `pip finished but ${paths.agentls} is not there:\n${lastLines(pip.output)}`);
  mkdirSync(join(paths.marker, '..'), { recursive: true });
  writeFileSync(paths.marker, JSON.stringify({ version: wheel.version, wheel: wheel.path }));
}
