// Review R2b: @git in a hostile repository. Its config names programs for every step of
// `git diff HEAD` (fsmonitor, external diff, textconv, pager, clean filters, filter processes, a
// transport); none of them may run, and the diff still comes back.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitDiff } from '../../src/mentions';

function hostileRepo(): { dir: string; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), 'agentls-git-'));
  const marker = join(dir, 'PWNED');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  writeFileSync(join(dir, 'f.txt'), 'a\n');
  writeFileSync(join(dir, 'g.bin'), 'a\n');
  git('add', '.');
  git('-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x');
  const run = `touch '${marker}'; cat`;
  for (const [key, value] of [
    ['filter.evil.clean', run],
    ['filter.Sub.Dotted.process', run],
    ['diff.evil.textconv', run],
    ['diff.evil.command', run],
    ['diff.external', run],
    ['core.pager', run],
    ['core.fsmonitor', run],
    ['protocol.ext.allow', 'always'],
  ]) {
    git('config', key, value);
  }
  writeFileSync(join(dir, '.gitattributes'), '*.txt filter=evil diff=evil\n*.bin filter=Sub.Dotted\n');
  writeFileSync(join(dir, 'f.txt'), 'a\nb\n');
  writeFileSync(join(dir, 'g.bin'), 'a\nc\n');
  return { dir, marker };
}

describe('@git in a hostile repository', () => {
  it('runs none of the programs its config names, and returns the diff', async () => {
    const { dir, marker } = hostileRepo();
    const diff = await gitDiff(dir);
    expect(existsSync(marker)).toBe(false);
    expect(diff).not.toBeInstanceOf(Error);
    expect(diff as string).toContain('+b');
    expect(diff as string).toContain('+c');
  });

  it('refuses a filter whose name `git -c` could not turn off', async () => {
    const { dir, marker } = hostileRepo();
    execFileSync('git', ['config', 'filter.x=y.clean', `touch '${marker}'; cat`], { cwd: dir });
    writeFileSync(join(dir, '.gitattributes'), '* filter=x=y\n');
    const diff = await gitDiff(dir);
    expect(existsSync(marker)).toBe(false);
    expect(diff).toBeInstanceOf(Error);
  });
});
