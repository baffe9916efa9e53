// Review R2b: installing the server while the extension host's working directory is a hostile
// repository (VS Code started with `code .` in it). `python -m venv` and `python -m pip` put the
// current directory first on sys.path: a repository's venv/ or pip/ package would run instead of
// Python's. The install runs Python isolated (-I), so none of the repository's code runs.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installServer, managedPaths, pythonVersion, run, type Runner } from '../../src/install';

const home = process.cwd();
afterEach(() => process.chdir(home));

function hostileRepo(): { repo: string; marker: string } {
  const repo = mkdtempSync(join(tmpdir(), 'agentls-hostile-'));
  const marker = join(repo, 'PWNED');
  for (const name of ['venv', 'pip', 'encodings_extra']) {
    mkdirSync(join(repo, name));
    writeFileSync(join(repo, name, '__init__.py'), `open(${JSON.stringify(marker)}, "w").write("${name}")\n`);
    writeFileSync(join(repo, name, '__main__.py'), '');
  }
  writeFileSync(join(repo, 'sitecustomize.py'), `open(${JSON.stringify(marker)}, "w").write("site")\n`);
  return { repo, marker };
}

describe('installing from a hostile working directory', () => {
  it('runs none of its modules: venv is Python own, pip is not reached here', async () => {
    const { repo, marker } = hostileRepo();
    const storage = mkdtempSync(join(tmpdir(), 'agentls-storage-'));
    const wheel = join(storage, 'agentls-0.1.0-py3-none-any.whl');
    writeFileSync(wheel, 'not a wheel');
    const seen: string[][] = [];
    // The venv step runs for real; pip (which would need the network) is answered here.
    const runner: Runner = async (command, args, onOutput) => {
      seen.push(args);
      if (args.includes('pip')) return { code: 1, output: 'no pip in this test' };
      return run(command, args, onOutput);
    };
    process.chdir(repo);
    const failed = await installServer({
      interpreter: { command: 'python3', source: 'path' },
      paths: managedPaths(storage),
      wheel: { path: wheel, version: '0.1.0' },
      runner,
    }).catch((err: unknown) => err);
    expect(existsSync(marker)).toBe(false);
    expect(String(failed)).toContain('pip failed');
    expect(existsSync(managedPaths(storage).python)).toBe(true);
    expect(seen.every((args) => args[0] === '-I')).toBe(true);
    expect(await pythonVersion('python3')).toBeDefined();
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
