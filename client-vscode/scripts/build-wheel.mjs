#!/usr/bin/env node
// Builds the agentls wheel that the .vsix carries (dist/wheel/agentls-<version>-py3-none-any.whl):
// the extension installs it into a virtual environment of its own on first use (src/install.ts).
// The sources are copied to a temporary directory first, so setuptools' build/ and *.egg-info stay
// out of the checkout.  Python: $AGENTLS_PYTHON, else the repository's .venv, else python3.
//   node scripts/build-wheel.mjs
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(root, '..');
const out = join(root, 'dist', 'wheel');
const venvPython = join(repo, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
const python = process.env.AGENTLS_PYTHON || (existsSync(venvPython) ? venvPython : 'python3');

const work = mkdtempSync(join(tmpdir(), 'agentls-wheel-'));
try {
  const skip = (path) => !/(__pycache__|\.egg-info|\.mypy_cache|\.ruff_cache)$/.test(path) && !path.endsWith('.pyc');
  for (const name of ['pyproject.toml', 'README.md']) cpSync(join(repo, name), join(work, name));
  cpSync(join(repo, 'server'), join(work, 'server'), { recursive: true, filter: skip });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = spawnSync(python, ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '--wheel-dir', out, work], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error(`build-wheel: ${python} -m pip wheel failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(1);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const wheels = readdirSync(out).filter((name) => /^agentls-.+\.whl$/.test(name));
if (wheels.length !== 1) {
  console.error(`build-wheel: expected one agentls wheel in ${out}, found ${wheels.length}`);
  process.exit(1);
}
console.log(`built ${join(basename(root), 'dist', 'wheel', wheels[0])}`);
