// Installing the bundled server (src/install.ts) and choosing which agentls runs
// (src/serverCommand.ts), with real directories, real interpreters and a real pip in a real venv.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseInterpreter,
  compareVersions,
  findBundledWheel,
  InstallError,
  installNeed,
  installServer,
  installedVersion,
  lastLines,
  managedPaths,
  pipFailure,
} from '../../src/install';
import { resolveServerLaunch } from '../../src/serverCommand';

const posix = process.platform !== 'win32';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentls-install-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function touch(path: string, text = '', mode?: number): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  if (mode) chmodSync(path, mode);
}

/** A minimal wheel named agentls with an `agentls` console script, made with Python's zipfile. */
function makeWheel(outDir: string, version: string, requires: string[] = []): string {
  const path = join(outDir, `agentls-${version}-py3-none-any.whl`);
  const script = `
import sys, zipfile, hashlib, base64
path, version, requires = sys.argv[1], sys.argv[2], sys.argv[3:]
di = f"agentls-{version}.dist-info"
files = {
  "agentls_stub.py": "def main():\\n    print('stub')\\n",
  f"{di}/METADATA": "Metadata-Version: 2.1\\nName: agentls\\nVersion: " + version + "\\n" + "".join(f"Requires-Dist: {r}\\n" for r in requires),
  f"{di}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
  f"{di}/entry_points.txt": "[console_scripts]\\nagentls = agentls_stub:main\\n",
}
record = []
with zipfile.ZipFile(path, "w") as z:
  for name, text in files.items():
    data = text.encode()
    z.writestr(name, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(data)}")
  record.append(f"{di}/RECORD,,")
  z.writestr(f"{di}/RECORD", "\\n".join(record) + "\\n")
`;
  execFileSync('python3', ['-c', script, path, version, ...requires]);
  return path;
}

describe('versions and the bundled wheel', () => {
  it('orders releases, pre-releases and post-releases', () => {
    expect(compareVersions('0.2.0', '0.1.9')).toBeGreaterThan(0);
    expect(compareVersions('0.10.0', '0.9.0')).toBeGreaterThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0rc1', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('1.0.0b2', '1.0.0rc1')).toBeLessThan(0);
    expect(compareVersions('1.0.0.post1', '1.0.0')).toBeGreaterThan(0);
  });

  it('finds the newest agentls wheel in a directory, and none in a missing one', () => {
    const wheels = join(dir, 'wheels');
    touch(join(wheels, 'agentls-0.9.0-py3-none-any.whl'));
    touch(join(wheels, 'agentls-0.10.0-py3-none-any.whl'));
    touch(join(wheels, 'other-9.0.0-py3-none-any.whl'));
    expect(findBundledWheel(wheels)).toEqual({ path: join(wheels, 'agentls-0.10.0-py3-none-any.whl'), version: '0.10.0' });
    expect(findBundledWheel(join(dir, 'nowhere'))).toBeUndefined();
  });

  it('says install, update or current from what the environment holds', () => {
    const storage = join(dir, 'need');
    const paths = managedPaths(storage, 'linux');
    expect(paths.agentls).toBe(join(storage, 'server-venv', 'bin', 'agentls'));
    const wheel = { path: '/x/agentls-0.2.0-py3-none-any.whl', version: '0.2.0' };
    expect(installNeed(wheel, paths)).toBe('install');
    expect(installNeed(undefined, paths)).toBe('unavailable');
    touch(paths.agentls);
    expect(installNeed(wheel, paths)).toBe('update'); // nothing says what is installed
    touch(paths.marker, JSON.stringify({ version: '0.1.0' }));
    expect(installedVersion(paths)).toBe('0.1.0');
    expect(installNeed(wheel, paths)).toBe('update');
    touch(paths.marker, JSON.stringify({ version: '0.2.0' }));
    expect(installNeed(wheel, paths)).toBe('current');
    expect(installNeed({ ...wheel, version: '0.1.5' }, paths)).toBe('current'); // never downgrades
    expect(installNeed(undefined, paths)).toBe('current');
  });
});

describe('which agentls runs', () => {
  it('the setting, then the workspace .venv, then PATH, then the extension-installed one', () => {
    const root = join(dir, 'launch');
    const workspace = join(root, 'w');
    const pathDir = join(root, 'bin');
    const managed = join(root, 'storage', 'server-venv', 'bin', 'agentls');
    mkdirSync(pathDir, { recursive: true });
    mkdirSync(workspace, { recursive: true });
    const resolve = (setting: string, trusted = true) =>
      resolveServerLaunch(setting, undefined, [workspace], undefined, 'linux', trusted, { agentls: managed, pathVar: pathDir });

    // Nothing anywhere: `agentls` from PATH, which the caller finds missing and offers to install.
    expect(resolve('')).toEqual({ command: 'agentls', args: ['serve'], origin: 'path' });
    touch(managed, '', 0o755);
    expect(resolve('')).toEqual({ command: managed, args: ['serve'], origin: 'managed' });
    touch(join(pathDir, 'agentls'), '', 0o755);
    expect(resolve('').origin).toBe('path');
    touch(join(workspace, '.venv', 'bin', 'agentls'), '', 0o755);
    expect(resolve('')).toEqual({ command: join(workspace, '.venv', 'bin', 'agentls'), args: ['serve'], origin: 'venv' });
    expect(resolve('/opt/agentls')).toEqual({ command: '/opt/agentls', args: ['serve'], origin: 'setting' });
    // An untrusted workspace's .venv never runs; the extension's own install does.
    rmSync(join(pathDir, 'agentls'));
    expect(resolve('', false)).toMatchObject({ command: managed, origin: 'managed' });
  });
});

describe.runIf(posix)('which interpreter installs it', () => {
  it('takes the first that runs and is Python 3.11 or newer', async () => {
    const old = join(dir, 'py', 'python3.9');
    touch(old, '#!/bin/sh\necho 3.9.18\n', 0o755);
    const chosen = await chooseInterpreter([
      { command: join(dir, 'py', 'missing'), source: 'python-extension' },
      { command: old, source: 'python-extension' },
      { command: 'python3', source: 'path' },
    ]);
    expect(chosen).toEqual({ command: 'python3', source: 'path' });
  });

  it('says when Python is too old, naming it', async () => {
    const old = join(dir, 'py', 'python3.10');
    touch(old, '#!/bin/sh\necho 3.10.4\n', 0o755);
    const err = await chooseInterpreter([{ command: old, source: 'path' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InstallError);
    expect((err as InstallError).kind).toBe('too-old');
    expect((err as InstallError).message).toContain(`${old} is Python 3.10.4`);
    expect((err as InstallError).message).toContain('3.11 or newer');
  });

  it('says when there is no Python at all', async () => {
    const err = await chooseInterpreter([{ command: join(dir, 'no-python3'), source: 'path' }]).catch((e: unknown) => e);
    expect((err as InstallError).kind).toBe('no-python');
    expect((err as InstallError).message).toMatch(/No Python found .*no-python3/);
  });
});

describe('what a failed pip says', () => {
  it('no network when the index cannot be reached, else pip failed with its last lines', () => {
    const offline = pipFailure({
      code: 1,
      output:
        "WARNING: Retrying after connection broken by 'NewConnectionError(': Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'\nERROR: No matching distribution found for pygls\n",
    });
    expect(offline.kind).toBe('no-network');
    expect(offline.message).toContain('could not reach the package index');
    const failed = pipFailure({ code: 2, output: 'one\n\ntwo\nthree\nfour\nfive\nsix\nseven\nERROR: boom\n' });
    expect(failed.kind).toBe('pip-failed');
    expect(failed.message).toBe('pip failed (exit 2):\nthree\nfour\nfive\nsix\nseven\nERROR: boom');
    expect(lastLines('a\n\n b \n', 2)).toBe('a\n b');
  });
});

describe.runIf(posix)('installing into a real virtual environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it('installs, records the version, updates to a newer wheel, and says why pip failed', async () => {
    const storage = join(dir, 'storage');
    const wheels = join(dir, 'real-wheels');
    mkdirSync(wheels, { recursive: true });
    const paths = managedPaths(storage);
    const interpreter = { command: 'python3', source: 'path' as const };
    // pip sees no configuration and no index: only the wheel itself.
    process.env.PIP_CONFIG_FILE = '/dev/null';
    process.env.PIP_NO_INDEX = '1';
    const steps: string[] = [];
    const v1 = { path: makeWheel(wheels, '0.2.0'), version: '0.2.0' };
    expect(installNeed(v1, paths)).toBe('install');
    await installServer({ interpreter, paths, wheel: v1, report: (s) => steps.push(s) });
    expect(steps).toEqual(['creating a virtual environment with python3', 'pip install agentls 0.2.0 and its dependencies']);
    expect(execFileSync(paths.agentls).toString().trim()).toBe('stub');
    expect(installNeed(v1, paths)).toBe('current');
    expect(resolveServerLaunch('', undefined, [], undefined, undefined, true, { agentls: paths.agentls, pathVar: '' })).toMatchObject({
      command: paths.agentls,
      origin: 'managed',
    });

    // A newer wheel whose dependency is not in the (absent) index: pip's own words come back.
    const v2 = { path: makeWheel(wheels, '0.3.0', ['agentls-test-missing-dependency']), version: '0.3.0' };
    expect(installNeed(v2, paths)).toBe('update');
    const failed = await installServer({ interpreter, paths, wheel: v2 }).catch((e: unknown) => e);
    expect((failed as InstallError).kind).toBe('pip-failed');
    expect((failed as InstallError).message).toContain('agentls-test-missing-dependency');
    expect(installedVersion(paths)).toBe('0.2.0');

    // The same with an index that refuses connections: no network.
    delete process.env.PIP_NO_INDEX;
    process.env.PIP_INDEX_URL = 'http://127.0.0.1:9/simple';
    process.env.PIP_RETRIES = '1'; // pip names the connection error only when it retries
    const offline = await installServer({ interpreter, paths, wheel: v2 }).catch((e: unknown) => e);
    expect((offline as InstallError).kind).toBe('no-network');

    // The update itself, reusing the environment (no new venv step).
    process.env.PIP_NO_INDEX = '1';
    const v3 = { path: makeWheel(wheels, '0.4.0'), version: '0.4.0' };
    steps.length = 0;
    await installServer({ interpreter, paths, wheel: v3, report: (s) => steps.push(s) });
    expect(steps).toEqual(['pip install agentls 0.4.0 and its dependencies']);
    expect(installedVersion(paths)).toBe('0.4.0');
    expect(installNeed(v3, paths)).toBe('current');

    // Another window installing at the same time: this one waits its turn.
    mkdirSync(paths.lock);
    const busy = await installServer({ interpreter, paths, wheel: v3 }).catch((e: unknown) => e);
    expect((busy as InstallError).kind).toBe('busy');
    rmSync(paths.lock, { recursive: true });

    // A wheel that is gone.
    const gone = await installServer({ interpreter, paths, wheel: { path: join(wheels, 'nope.whl'), version: '9' } }).catch((e: unknown) => e);
    expect((gone as InstallError).kind).toBe('no-wheel');
  }, 120_000);
});
