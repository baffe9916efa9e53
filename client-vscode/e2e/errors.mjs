// e2e step (steps.mjs): the model's API down, then back, in the real VS Code panel. The scripted
// answer to the prompt below (e2e.json's prompts, `fail_once`) fails the first time as a refused
// connection does: the panel shows the error card (what happened, the next step, Retry, the
// details closed); Retry runs the turn again (agent/retry) and the answer comes, with no second
// prompt in the transcript and no Retry left on the card. It runs in a new session (the scenario's
// turns count the prompts of the session they are in).

export const DOWN_PROMPT = 'Answer once the API is back.'; // e2e.json's prompts
const ANSWER = 'The API is back: this answer came through on Retry.';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function poll(what, fn, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

export async function apiDownRetry({ page, panel, sendPrompt, waitIdle, screenshot, log }) {
  const session = () => panel.locator('#app').getAttribute('data-session');
  const earlier = await session();
  await page.locator('.part.sidebar .title-actions [aria-label^="New session"]').first().click();
  await poll('the new session', async () => (await session()) !== earlier);
  await waitIdle();
  await sendPrompt(DOWN_PROMPT);
  const card = panel.locator('#transcript .notice.failure').last();
  await card.waitFor({ timeout: 30_000 });
  await waitIdle();
  const message = (await card.locator('.failure-message').textContent()) ?? '';
  log(`  error card: ${message}`);
  check(message === "The model's API could not be reached: the connection was refused.", `the card should say what happened, not: ${message}`);
  check(((await card.locator('.failure-next').textContent()) ?? '').startsWith('Check your network connection'), 'the card should say what to do');
  check(!(await card.locator('details.failure-details').evaluate((d) => d.open)), 'the details should stay closed until asked for');
  check(((await card.locator('details.failure-details pre').textContent()) ?? '').includes('ConnectionRefusedError'), 'the details should hold the exception');
  check(!(await panel.locator('#transcript').innerText()).includes('ConnectionRefusedError'), 'no raw exception should show while the details are closed');
  await screenshot('api-down-error-card');
  await card.locator('button.retry').click();
  await poll('the answer after Retry', async () => (await panel.locator('.message.assistant').allInnerTexts()).some((t) => t.includes(ANSWER)), 30_000);
  await waitIdle();
  check((await card.locator('button.retry').count()) === 0, 'the card should keep no Retry once the turn was retried');
  check((await panel.locator('.message.user', { hasText: DOWN_PROMPT }).count()) === 1, 'Retry should add no second prompt');
  await screenshot('api-down-retried');
}
