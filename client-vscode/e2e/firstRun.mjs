// The first run (AGENTLS_E2E_FIRST_RUN=1, issues 21, 26): no agentls.server.command, no agentls on
// PATH, no .venv in the workspace. The panel's set-up card offers to install the bundled server
// (saying what Install does; a notification offers it too); the step clicks Install in the card,
// sees its progress, and waits until pip has put agentls into the extension's environment in
// global storage (its dependencies coming from the package index this machine reaches). The rest
// of the run then talks to that server.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const OFFER = 'the agentls server is not installed';

export async function installFromOffer({ page, userData, log, panel, openView, screenshot, timeoutMs = 600_000 }) {
  const storage = join(userData, 'User', 'globalStorage', 'agentls.agentls');
  const marker = join(storage, 'server-installed.json');
  const agentls = join(storage, 'server-venv', 'bin', 'agentls');
  if (existsSync(agentls)) throw new Error(`${agentls} exists before the first run`);
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: OFFER });
  await toast.first().waitFor({ timeout: 60_000 });
  log(`  offered: ${(await toast.first().locator('.notification-list-item-message').innerText()).slice(0, 160)}`);
  // The panel's card, which stays (the notification may vanish): Install, and what it does.
  await openView();
  const card = panel().locator('#setup');
  await card.filter({ hasText: 'Install the agentls server' }).waitFor({ timeout: 30_000 });
  const what = (await card.locator('.setup-what').textContent()) ?? '';
  if (!/virtual environment/.test(what) || !/pip/.test(what)) throw new Error(`the card should say what Install does: ${what}`);
  await screenshot?.('setup-card');
  await card.getByRole('button', { name: 'Install', exact: true }).click();
  await card.filter({ hasText: 'Installing agentls' }).waitFor({ timeout: 30_000 });
  log(`  installing: ${((await card.textContent()) ?? '').replace(/\s+/g, ' ').slice(0, 160)}`);
  await screenshot?.('setup-installing');
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
  // The card stays until the server runs, then leaves the panel to the conversation.
  await card.waitFor({ state: 'hidden', timeout: 60_000 });
  return { agentls, seconds: (Date.now() - started) / 1000 };
}
