// Review R2b: @git in a hostile repository. Its config names programs for every step of
// `git diff HEAD` (fsmonitor, external diff, textconv, pager, clean filters, filter processes, a
// transport); none of them may run, and the diff still comes back.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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

describe('@git reads only this folder and its own repository', () => {
  const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' });
  const commit = (cwd: string): void => {
    git(cwd, 'add', '-A');
    git(cwd, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x');
  };
  const SECRET = 'PRIVATE-KEY-123';

  function layout(): { base: string; repo: string; home: string } {
    const base = mkdtempSync(join(tmpdir(), 'agentls-gitwt-'));
    const repo = join(base, 'home', 'repo');
    const home = join(base, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), `${SECRET}\n`);
    return { base, repo, home };
  }

  it('refuses a core.worktree naming another directory, an ancestor included', async () => {
    for (const target of ['.ssh', '.']) {
      const { repo, home } = layout();
      git(repo, 'init', '-q');
      writeFileSync(join(repo, 'id_rsa'), 'x\n');
      mkdirSync(join(repo, '.ssh'));
      writeFileSync(join(repo, '.ssh', 'id_rsa'), 'x\n');
      commit(repo);
      git(repo, 'config', 'core.worktree', join(home, target));
      const diff = await gitDiff(repo);
      expect(diff).toBeInstanceOf(Error);
      expect(String(diff)).not.toContain(SECRET);
    }
  });

  it("refuses a .git file naming another repository's git directory", async () => {
    const { base, repo } = layout();
    const other = join(base, 'secret-store');
    mkdirSync(other);
    git(other, 'init', '-q');
    writeFileSync(join(other, 'passwords.txt'), `${SECRET}\n`);
    commit(other);
    writeFileSync(join(repo, '.git'), `gitdir: ${join(other, '.git')}\n`);
    const diff = await gitDiff(repo);
    expect(diff).toBeInstanceOf(Error);
    expect(String(diff)).not.toContain(SECRET);
  });

  it('still diffs a subfolder of a repository, a linked worktree and a submodule', async () => {
    const { base, repo } = layout();
    git(repo, 'init', '-q');
    mkdirSync(join(repo, 'sub'));
    writeFileSync(join(repo, 'sub', 'a.txt'), 'a\n');
    commit(repo);
    writeFileSync(join(repo, 'sub', 'a.txt'), 'a\nsub-change\n');
    expect(String(await gitDiff(join(repo, 'sub')))).toContain('+sub-change');
    const linked = join(base, 'linked');
    git(repo, 'worktree', 'add', '-q', linked);
    writeFileSync(join(linked, 'sub', 'a.txt'), 'a\nlinked-change\n');
    expect(String(await gitDiff(linked))).toContain('+linked-change');
    const lib = join(base, 'lib');
    mkdirSync(lib);
    git(lib, 'init', '-q');
    writeFileSync(join(lib, 'l.txt'), 'l\n');
    commit(lib);
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
    writeFileSync(join(repo, 'lib', 'l.txt'), 'l\nsubmodule-change\n');
    expect(String(await gitDiff(join(repo, 'lib')))).toContain('+submodule-change');
  });
});
