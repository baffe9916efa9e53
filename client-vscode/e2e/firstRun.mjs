// The first run (AGENTLS_E2E_FIRST_RUN=1, issue 21): no agentls.server.command, no agentls on PATH,
// no .venv in the workspace. The extension offers to install its bundled server; the step clicks
// Install in the notification and waits until pip has put agentls into the extension's
// environment in global storage (its dependencies coming from the package index this machine
// reaches). The rest of the run then talks to that server.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const OFFER = 'the agentls server is not installed';

export async function installFromOffer({ page, userData, log, timeoutMs = 600_000 }) {
  const storage = join(userData, 'User', 'globalStorage', 'agentls.agentls');
  const marker = join(storage, 'server-installed.json');
  const agentls = join(storage, 'server-venv', 'bin', 'agentls');
  if (existsSync(agentls)) throw new Error(`${agentls} exists before the first run`);
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: OFFER });
  await toast.first().waitFor({ timeout: 60_000 });
  log(`  offered: ${(await toast.first().locator('.notification-list-item-message').innerText()).slice(0, 160)}`);
  await toast.first().locator('.monaco-button', { hasText: /^Install$/ }).click();
  const started = Date.now();
  const failed = page.locator('.notifications-toasts .notification-list-item', { hasText: /installing the server failed|No Python|pip failed|could not reach/ });
  while (!existsSync(marker)) {
    if (await failed.count()) throw new Error(`the install failed: ${await failed.first().innerText()}`);
    if (Date.now() - started > timeoutMs) throw new Error(`agentls was not installed within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const { version } = JSON.parse(readFileSync(marker, 'utf8'));
  if (!existsSync(agentls)) throw new Error(`${marker} written but ${agentls} is missing`);
  log(`  agentls ${version} installed into ${storage} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { agentls, seconds: (Date.now() - started) / 1000 };
}
