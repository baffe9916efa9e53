// e2e step 20 (steps.mjs): issue 34's "Done when" in the panel. Three prompts typed in the prompt
// box go to "Run in background" (e2e.json's prompts): a long survey (it stays running), a question
// (ask_user) and an edit of shapes.py in two hunks (which asks to be allowed). Each starts a
// session in its own git worktree and branch; the panel stays on the user's session, and its
// History lists the three with their state (running, waiting). Meanwhile the user types in
// shapes.py in their own tree and saves it: nothing else in their tree changes. Both questions
// are cards above the prompt box labelled with their session: the choice is picked in one, the
// edit allowed in the other; both sessions end done. History's "Review changes" of the edit's
// session lists its two changes; one is kept, the other undone, "Bring in kept changes" applies
// exactly the kept one to shapes.py, the user's own line still there. Screenshots of the list, the
// cards and the review at 300 and 600 px (panel-background-*.png).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The file the edit's session changes, committed in the e2e workspace (run.mjs). */
export const SHAPES = [
  '"""Area helpers."""',
  '',
  '',
  'def square(side: float) -> float:',
  '    """Return the area of a square with the given side."""',
  '    return side * side',
  '',
  '',
  'def rectangle(width: float, height: float) -> float:',
  '    """Return the area of a rectangle."""',
  '    return width * height',
  '',
  '',
  'def triangle(base: float, height: float) -> float:',
  '    """Return the area of a triangle with the given base and height."""',
  '    return base * height / 2',
  '',
].join('\n');
// e2e.json's prompts.
const SURVEY = 'Survey the project for a summary.';
const ASK = 'Choose a log format for the project.';
const HUNKS = 'Shorten the docstrings in shapes.py.';
const CHOICE = 'JSON lines';
// The edit's two changes (hunks), the first kept and the second undone.
const KEPT = ['    """Return the area of a square with the given side."""', '    """Area of a square."""'];
const UNDONE = ['    """Return the area of a triangle with the given base and height."""', '    """Area of a triangle."""'];
/** What the user types at the end of line 11 (rectangle's return) of shapes.py in their tree. */
const MINE = '  # width first';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function poll(what, fn, timeout = 15_000, interval = 150) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const value = await fn();
    if (value) return value;
    await sleep(interval);
  }
  throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** Every file of the user's tree (not .git, not Python's caches), path -> text. */
function snapshot(root) {
  const files = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      if (name === '.git' || name === '__pycache__') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return files;
}

function changedBetween(a, b) {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
}

export async function backgroundSessions({ page, panel, workspace, openPanel, activeSession, titleAction, setSidebarWidth, layoutProblems, panelShot, screenshot, log }) {
  const shapesPath = join(workspace, 'shapes.py');
  await openPanel();
  await setSidebarWidth(page, 300);
  if (await panel().locator('#history').isVisible()) await panel().locator('#history .history-back').click();
  const home = await activeSession(panel());
  const before = snapshot(workspace);

  // ---- three prompts typed in the prompt box, each sent with "Run in background" ------------
  const branches = {};
  for (const prompt of [SURVEY, ASK, HUNKS]) {
    const box = panel().locator('#prompt');
    await box.click();
    await box.pressSequentially(prompt, { delay: 5 });
    check((await box.inputValue()) === prompt, `the prompt box should read "${prompt}"`);
    const notices = panel().locator('.notice', { hasText: 'Started in the background on branch' });
    const seen = await notices.count();
    await panel().getByRole('button', { name: 'Run in background' }).click();
    const said = await poll(
      `the notice that "${prompt}" started in the background`,
      async () => (await notices.count()) > seen && (await notices.nth(seen).textContent()),
      60_000,
    );
    branches[prompt] = /on branch (\S+?),/.exec(said)?.[1];
    check(branches[prompt]?.startsWith('agentls/'), `the notice should name the branch: ${said}`);
    log(`  ${said.replace(/\s+/g, ' ').slice(0, 200)}`);
    check((await box.inputValue()) === '', 'the prompt box should be empty once the prompt is sent');
    check((await activeSession(panel())) === home, "the panel should stay on the user's session");
  }
  check(new Set(Object.values(branches)).size === 3, `three branches: ${Object.values(branches).join(', ')}`);

  // ---- History: the three listed with their state ---------------------------------------------
  /** History's background rows: per prompt, its session id, state and line; reopened to refresh. */
  const historyRows = async () => {
    const history = panel().locator('#history');
    if (!(await history.isVisible())) await titleAction(page, 'Session history').click();
    await history.waitFor({ timeout: 10_000 });
    const rows = await history.locator('.history-item').evaluateAll((els) =>
      els
        .filter((el) => el.querySelector('.history-background'))
        .map((el) => {
          const bg = el.querySelector('.history-background');
          return {
            id: el.dataset.sessionId,
            state: [...bg.classList].find((c) => c.startsWith('state-'))?.slice(6),
            line: bg.textContent ?? '',
            preview: el.querySelector('.history-preview')?.textContent ?? '',
            review: !!el.querySelector('.history-review-background'),
          };
        }),
    );
    const byPrompt = {};
    for (const [prompt, branch] of Object.entries(branches)) byPrompt[prompt] = rows.find((r) => r.line.includes(`${branch} `) || r.line.endsWith(branch));
    return byPrompt;
  };
  const closeHistory = async () => {
    const history = panel().locator('#history');
    if (await history.isVisible()) await history.locator('.history-back').click();
    await history.waitFor({ state: 'hidden' });
  };
  /** Poll History (closed and opened again now and then: it is not live) until `want` holds. */
  const historyUntil = async (what, want, timeout = 60_000) => {
    let last;
    let reopened = Date.now();
    try {
      return await poll(
        what,
        async () => {
          if (Date.now() - reopened > 3000) {
            await closeHistory();
            reopened = Date.now();
          }
          last = await historyRows();
          return want(last) ? last : undefined;
        },
        timeout,
        300,
      );
    } catch (err) {
      throw new Error(`${err.message}; History showed ${JSON.stringify(last)}`);
    }
  };
  const started = await historyUntil(
    'History listing the survey running and the other two waiting',
    (r) => r[SURVEY]?.state === 'running' && r[ASK]?.state === 'waiting' && r[HUNKS]?.state === 'waiting',
  );
  for (const [prompt, row] of Object.entries(started)) log(`  ${prompt} ${row.id}: ${row.line}`);
  const ids = Object.fromEntries(Object.entries(started).map(([p, r]) => [p, r.id]));
  check((await activeSession(panel())) === home, "the panel should still show the user's session");
  const layoutAt300 = await panel().locator('body').evaluate(layoutProblems);
  check(layoutAt300.problems.length === 0, `History with background sessions at ${layoutAt300.width} px: ${layoutAt300.problems.join('; ')}`);
  await panelShot('background-sessions-300');
  await setSidebarWidth(page, 600);
  await sleep(300);
  await panelShot('background-sessions-600');
  await setSidebarWidth(page, 300);
  await closeHistory();

  // ---- the questions: two cards above the prompt box, labelled with their session -------------
  const cards = panel().locator('.background-questions .background-question');
  const askCard = panel().locator(`.background-questions .background-question[data-session-id="${ids[ASK]}"]`);
  const editCard = panel().locator(`.background-questions .background-question[data-session-id="${ids[HUNKS]}"]`);
  await askCard.first().waitFor({ timeout: 30_000 });
  await editCard.waitFor({ timeout: 30_000 });
  const askLabel = (await askCard.first().locator('.background-question-label').textContent()) ?? '';
  log(`  cards: ${askLabel} | ${(await editCard.locator('.background-question-label').textContent()) ?? ''}`);
  check(askLabel.startsWith('Background: ') && askLabel.includes(`on ${branches[ASK]} asks:`), `the question should be labelled with its session: ${askLabel}`);
  check((await askCard.first().locator('.question-choice').count()) === 2, 'the question card should offer its two choices');
  check(((await editCard.textContent()) ?? '').includes('shapes.py'), 'the edit card should name shapes.py');
  const layoutCards = await panel().locator('body').evaluate(layoutProblems);
  check(layoutCards.problems.length === 0, `the question cards at ${layoutCards.width} px: ${layoutCards.problems.join('; ')}`);
  await panelShot('background-question-300');
  await setSidebarWidth(page, 600);
  await sleep(300);
  await panelShot('background-question-600');
  await setSidebarWidth(page, 300);

  // ---- the user keeps working in their own tree: shapes.py typed in and saved -----------------
  const tabs = await page.locator('.tabs-container .tab').allTextContents();
  log(`  editor tabs while the sessions wait: ${tabs.map((t) => t.trim()).join(' | ')}`);
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill('shapes.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'shapes.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  const shapesTab = page.locator('.tabs-container .tab', { hasText: /^shapes\.py/ }).filter({ hasNotText: 'proposed' });
  await shapesTab.first().waitFor();
  await page.locator('.editor-instance .view-line', { hasText: 'def triangle' }).first().waitFor();
  await page.locator('.editor-instance .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').fill(':11');
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  await page.keyboard.type(MINE, { delay: 5 });
  await page.keyboard.press('Control+S');
  const mine = SHAPES.replace('    return width * height\n', `    return width * height${MINE}\n`);
  await poll("the user's line saved in shapes.py", async () => readFileSync(shapesPath, 'utf8') === mine, 15_000);
  const during = snapshot(workspace);
  check(
    JSON.stringify(changedBetween(before, during)) === JSON.stringify(['shapes.py']),
    `only the user's own edit should have changed their tree, changed: ${changedBetween(before, during).join(', ')}`,
  );
  await screenshot('background-user-typing');

  // ---- the answers, in the cards -----------------------------------------------------------
  await openPanel();
  await askCard.first().locator('.question-choice', { hasText: CHOICE }).click();
  await editCard.getByRole('button', { name: 'Allow once' }).click();
  await poll('both cards gone', async () => (await cards.count()) === 0, 30_000);
  const finished = await historyUntil(
    'History listing the question and the edit sessions done',
    (r) => r[ASK]?.state === 'done' && r[HUNKS]?.state === 'done' && r[HUNKS].review,
    90_000,
  );
  for (const [prompt, row] of Object.entries(finished)) log(`  ${prompt}: ${row.line} · ${row.preview.slice(0, 80)}`);
  check(finished[ASK].preview.includes(CHOICE), `the question's session should go on with the answer: ${finished[ASK].preview}`);
  check(/· 1 file changed/.test(finished[HUNKS].line), `the edit's session should have one file changed: ${finished[HUNKS].line}`);
  check(['running', 'done'].includes(finished[SURVEY].state), `the survey should be running or done: ${finished[SURVEY].state}`);
  check((await activeSession(panel())) === home, "the panel should still show the user's session");
  const after = snapshot(workspace);
  check(
    JSON.stringify(changedBetween(during, after)) === '[]',
    `the background sessions should not touch the user's tree, changed: ${changedBetween(during, after).join(', ')}`,
  );

  // ---- Review changes: keep one hunk, undo the other, bring in the kept one -----------------
  await panel().locator(`#history .history-item[data-session-id="${ids[HUNKS]}"] .history-review-background`).click();
  const review = panel().locator('.background-review');
  const file = review.locator('.background-review-file[data-path="shapes.py"]');
  await file.waitFor({ timeout: 30_000 });
  const hunks = file.locator('.hunk-row');
  check((await hunks.count()) === 2, `the edit should be two changes, got ${await hunks.count()}`);
  check(((await hunks.nth(0).textContent()) ?? '').includes('Area of a square.'), 'change 1 is the square docstring');
  check(((await hunks.nth(1).textContent()) ?? '').includes('Area of a triangle.'), 'change 2 is the triangle docstring');
  await hunks.nth(1).getByRole('button', { name: /^Leave out change 2/ }).click();
  await hunks.nth(1).locator('.hunk-state', { hasText: 'left out' }).waitFor();
  check(readFileSync(shapesPath, 'utf8') === mine, 'nothing should be written before "Bring in kept changes"');
  const layoutReview = await panel().locator('body').evaluate(layoutProblems);
  check(layoutReview.problems.length === 0, `the review card at ${layoutReview.width} px: ${layoutReview.problems.join('; ')}`);
  await panelShot('background-review-300');
  await setSidebarWidth(page, 600);
  await sleep(300);
  await panelShot('background-review-600');
  await setSidebarWidth(page, 300);
  const bring = review.locator('.background-review-apply');
  check((await bring.textContent()) === 'Bring in kept changes', 'the card should offer "Bring in kept changes"');
  await bring.click();
  const applied = review.locator('.background-review-applied');
  await applied.waitFor({ timeout: 30_000 });
  log(`  ${(await review.locator('.background-review-result').textContent()) ?? ''}`);
  check(((await applied.textContent()) ?? '').includes('Applied 1 change to shapes.py'), 'the card should say one change was applied');
  check((await review.locator('.background-review-conflict').count()) === 0, 'no conflict');
  const expected = mine.replace(KEPT[0], KEPT[1]);
  check(expected.includes(UNDONE[0]), 'the undone change keeps its line');
  // Through the editor: the buffer has the kept change (saved as the agent's edits are, or not).
  const bufferText = async () => (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  await shapesTab.first().click();
  await poll('the kept change in the editor', async () => (await bufferText()).includes(KEPT[1]), 15_000);
  const buffer = await bufferText();
  check(!buffer.includes(UNDONE[1]) && buffer.includes(MINE.trim()), `the editor should have the kept change, the user's line, not the undone change:\n${buffer}`);
  if ((await shapesTab.first().getAttribute('class')).split(' ').includes('dirty')) {
    log('  shapes.py unsaved after the bring-in: saved now');
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+S');
  }
  await poll('exactly the kept change on disk', async () => readFileSync(shapesPath, 'utf8') === expected, 15_000);
  await screenshot('background-brought-in');
  check(
    JSON.stringify(changedBetween(before, snapshot(workspace))) === JSON.stringify(['shapes.py']),
    'the bring-in should change only shapes.py',
  );
  await openPanel();
  await panelShot('background-applied-300');
  await review.getByRole('button', { name: 'Close the review' }).click();
}
