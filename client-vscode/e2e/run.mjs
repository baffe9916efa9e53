// The extension end to end in a real VS Code (`npm run e2e`, `make extension-e2e`, part of
// `make test`): code-server (scripts/ensure-code-server.sh installs and caches it) with a fresh
// profile and extensions folder, the freshly packaged agentls.vsix installed into it, the
// workbench in headless Chromium driven by playwright-core, and `agentls serve` from the
// repository's .venv playing the scripted scenario `scripted:e2e`. The steps are in steps.mjs.
//
// Screenshots, code-server's log, the browser console and summary.json (timings, memory) go to
// client-vscode/test-artifacts/e2e/. Exit status 0 on success or skip, 1 on failure.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { descendants, killTree, memorySampler, processTable } from './procs.mjs';
import { SHAPES } from './background.mjs';
import { runSteps, TS_PROJECT } from './steps.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION_ROOT = resolve(HERE, '..');
const REPO = resolve(EXTENSION_ROOT, '..');
const ARTIFACTS = resolve(process.env.AGENTLS_E2E_ARTIFACTS ?? join(EXTENSION_ROOT, 'test-artifacts', 'e2e'));
const VSIX = join(EXTENSION_ROOT, 'agentls.vsix');
const SERVER_COMMAND = process.env.AGENTLS_E2E_SERVER ?? join(REPO, '.venv', 'bin', 'agentls');
const CHROMIUM = process.env.AGENTLS_E2E_CHROMIUM ?? '/usr/bin/chromium';
const RUN_TIMEOUT_MS = Number(process.env.AGENTLS_E2E_TIMEOUT_S ?? (process.env.AGENTLS_E2E_FIRST_RUN === '1' ? 900 : 600)) * 1000;
/** On CI (or when asked) a set-up that cannot be done fails the run instead of skipping it. */
const REQUIRED = !!process.env.CI || process.env.AGENTLS_E2E_REQUIRED === '1';
const KEEP = process.env.AGENTLS_E2E_KEEP === '1';
/** No server command, no agentls on PATH: the extension installs its bundled server (firstRun.mjs). */
const FIRST_RUN = process.env.AGENTLS_E2E_FIRST_RUN === '1';

const t0 = Date.now();
const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1);
const log = (...args) => console.log(`[e2e ${elapsed()}s]`, ...args);

function skip(reason) {
  if (REQUIRED) {
    console.error(`[e2e] FAILED: cannot run the VS Code end-to-end test: ${reason}`);
    process.exit(1);
  }
  console.log(`[e2e] SKIPPED: the VS Code end-to-end test: ${reason}`);
  process.exit(0);
}

function ensureCodeServer() {
  const result = spawnSync('bash', [join(REPO, 'scripts', 'ensure-code-server.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    timeout: 30 * 60 * 1000,
  });
  if (result.status === 3) skip('code-server cannot be installed here (see above)');
  if (result.status !== 0) {
    console.error(`[e2e] FAILED: scripts/ensure-code-server.sh exited with ${result.status ?? result.signal}`);
    process.exit(1);
  }
  return result.stdout.trim().split('\n').pop();
}

/** `git init` and one commit of everything in the folder (an identity of its own, no hooks). */
function gitInit(folder) {
  const git = (...args) => {
    const run = spawnSync('git', ['-c', 'user.name=agentls e2e', '-c', 'user.email=e2e@agentls.invalid', '-c', 'core.hooksPath=/dev/null', ...args], {
      cwd: folder,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${folder}: ${run.stdout}${run.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'The e2e workspace');
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

async function waitForHealth(url, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not answer ${url} within ${ms / 1000} s`);
}

/** The environment of code-server (and so of the extension host and `agentls serve`). */
function codeServerEnv(root) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Nothing of an outer VS Code (its CLI would forward --install-extension there), no API key.
    if (key.startsWith('VSCODE_') || key.startsWith('ANTHROPIC_') || key === 'AGENTLS_MODEL') continue;
    env[key] = value;
  }
  env.AGENTLS_DATA_DIR = join(root, 'agentls-data');
  env.XDG_CONFIG_HOME = join(root, 'xdg-config'); // no ~/.config/agentls/config.json or AGENTS.md
  if (FIRST_RUN) {
    env.PATH = (env.PATH ?? '')
      .split(':')
      .filter((dir) => dir && !existsSync(join(dir, 'agentls')))
      .join(':');
  }
  return env;
}

async function main() {
  if (process.platform !== 'linux') skip('it runs on Linux only');
  if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`make extension-package\` first`);
  if (!FIRST_RUN && !existsSync(SERVER_COMMAND)) throw new Error(`${SERVER_COMMAND} is missing: run \`make venv\` first`);
  const codeServer = ensureCodeServer();
  if (!existsSync(CHROMIUM)) skip(`${CHROMIUM} is missing`);
  log(`code-server: ${codeServer}`);

  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  const root = mkdtempSync(join(tmpdir(), 'agentls-e2e-'));
  const dirs = {
    root,
    userData: join(root, 'user-data'),
    extensions: join(root, 'extensions'),
    workspace: join(root, 'calc-project'),
  };
  for (const dir of [dirs.userData + '/User', dirs.extensions, join(root, 'agentls-data'), join(root, 'xdg-config')]) {
    mkdirSync(dir, { recursive: true });
  }
  // A workspace holding a failing test: the demo project (median of an even count is wrong).
  cpSync(join(REPO, 'server', 'agentls', 'demo', 'sample'), dirs.workspace, { recursive: true });
  // And a small TypeScript project for step 8 (a function exported from one file, used in the
  // other): the agent's references and rename come from VS Code's built-in TypeScript server.
  for (const [name, text] of Object.entries(TS_PROJECT)) writeFileSync(join(dirs.workspace, name), text);
  // And shapes.py, which step 20's background session edits in its own worktree.
  writeFileSync(join(dirs.workspace, 'shapes.py'), SHAPES);
  // A git repository with everything committed: background sessions (step 20) run in worktrees.
  gitInit(dirs.workspace);
  writeFileSync(
    join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'security.workspace.trust.enabled': false,
        'files.autoSave': 'off',
        'editor.codeLens': true,
        'agentls.model': 'scripted:e2e',
        // The steps wait for the proposal's diff editor (step 3 accepts from its title).
        'agentls.approvals.openDiff': true,
        ...(FIRST_RUN ? {} : { 'agentls.server.command': SERVER_COMMAND }),
        // Step 8: no syntax-only TypeScript server, whose answers while the project loads cover
        // the open file alone (references in app.ts would be missing on a busy machine).
        'typescript.tsserver.useSyntaxServer': 'never',
      },
      null,
      2,
    ),
  );
  const port = await freePort();
  const config = join(root, 'code-server.yaml');
  writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const args = [
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--extensions-dir',
    dirs.extensions,
    '--user-data-dir',
    dirs.userData,
    '--config',
    config,
  ];
  const env = codeServerEnv(root);

  let csPid;
  let browser;
  const sampler = memorySampler(() => csPid);
  const summary = { ok: false, steps: [], memory: undefined, runSeconds: undefined };
  let failure;
  const watchdog = setTimeout(() => {
    console.error(`[e2e] FAILED: the run took longer than ${RUN_TIMEOUT_MS / 1000} s; tearing down`);
    void teardown().finally(() => process.exit(1));
  }, RUN_TIMEOUT_MS);
  let tornDown = false;
  async function teardown() {
    if (tornDown) return;
    tornDown = true;
    await browser?.close().catch(() => undefined);
    if (csPid) await killTree(csPid);
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`[e2e] ${signal}: tearing down`);
      void teardown().finally(() => process.exit(1));
    });
  }

  try {
    log(`installing ${VSIX} into a fresh extensions folder`);
    const install = spawnSync(codeServer, [...args, '--install-extension', VSIX], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const manifest = JSON.parse(readFileSync(join(EXTENSION_ROOT, 'package.json'), 'utf8'));
    const installedDir = join(dirs.extensions, `${manifest.publisher}.${manifest.name}-${manifest.version}`);
    if (install.status !== 0 || !existsSync(join(installedDir, 'dist', 'extension.js'))) {
      throw new Error(`--install-extension failed (${install.status}): ${install.stdout}${install.stderr}`);
    }
    log(install.stdout.trim().split('\n').pop());

    const logFd = openSync(join(ARTIFACTS, 'code-server.log'), 'w');
    const child = spawn(codeServer, [...args, '--bind-addr', `127.0.0.1:${port}`, dirs.workspace], {
      env,
      cwd: root,
      detached: true, // its own process group, killed as one at teardown
      stdio: ['ignore', logFd, logFd],
    });
    csPid = child.pid;
    child.once('exit', (code, signal) => {
      if (!tornDown) log(`code-server exited early (${code ?? signal}); see ${ARTIFACTS}/code-server.log`);
    });
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, 30_000);
    log(`code-server ${csPid} listening on ${port}`);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: 60_000,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    await runSteps({
      browser,
      url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`,
      workspace: dirs.workspace,
      artifacts: ARTIFACTS,
      log,
      summary,
      firstRun: FIRST_RUN,
      userData: dirs.userData,
      // The `agentls serve` processes code-server's extension hosts started.
      serverPids: () => {
        const table = processTable();
        return descendants(csPid, table).filter((pid) => table.get(pid)?.name === 'agentls');
      },
    });
    summary.ok = true;
  } catch (err) {
    failure = err;
  } finally {
    clearTimeout(watchdog);
    summary.memory = sampler.stop();
    await teardown();
    summary.runSeconds = Number(elapsed());
    if (failure) {
      summary.error = String(failure?.stack ?? failure);
      // The extension host's and the server's logs (the output channel "agentls") for the post-mortem.
      try {
        cpSync(join(dirs.userData, 'logs'), join(ARTIFACTS, 'logs'), { recursive: true });
      } catch {
        // no logs
      }
    }
    writeFileSync(join(ARTIFACTS, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    if (KEEP || failure) log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  const m = summary.memory;
  log(
    `memory: machine used ${m.machineUsedBeforeMiB} MiB before, ${m.machineUsedPeakMiB} MiB peak` +
      ` (of ${m.machineTotalMiB}); peaks: code-server tree RSS ${m.codeServerTreeRssPeakMiB} MiB` +
      ` (PSS ${m.codeServerTreePssPeakMiB}; agentls serve RSS ${m.agentlsServeRssPeakMiB}),` +
      ` Chromium RSS ${m.chromiumTreeRssPeakMiB} MiB (PSS ${m.chromiumTreePssPeakMiB})`,
  );
  if (failure) {
    console.error(`[e2e] FAILED after ${summary.runSeconds} s:`, failure);
    console.error(`[e2e] screenshots and logs: ${ARTIFACTS}`);
    process.exit(1);
  }
  log(`PASSED in ${summary.runSeconds} s; screenshots in ${ARTIFACTS}`);
  process.exit(0);
}

main().catch((err) => {
  console.error('[e2e] FAILED:', err);
  process.exit(1);
});
