// e2e step (steps.mjs): an answer's code block in the real VS Code panel. The scripted answer
// (e2e.json's prompt below) shows calc.py whole in a ```python calc.py fence and `calc.py:6`: the
// block is coloured as the editor colours calc.py (the workbench's theme, read by the extension), the
// path opens calc.py at line 6, Insert puts the block at the cursor (undone with Ctrl+Z), and Apply
// proposes it as calc.py's content: the diff editor opens, nothing is written until Accept.

export const CODE_PROMPT = 'Show calc.py with a check for empty lists.'; // e2e.json's prompts
const CHECK_LINE = 'raise ValueError("mean() of an empty list")';
const LAST_LINE = 'return (ordered[middle - 1] + ordered[middle]) / 2';

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

export async function codeBlocks({ page, panel, onDisk, sendPrompt, waitIdle, panelShot, screenshot, log }) {
  await sendPrompt(CODE_PROMPT);
  const block = panel.locator('.codeblock[data-path="calc.py"]').last();
  const code = block.locator('code');
  await poll('the whole block streamed in', async () => ((await code.textContent().catch(() => '')) ?? '').includes(LAST_LINE), 30_000);
  await waitIdle();
  await poll('the block coloured (its grammar and the theme from the extension)', async () =>
    (await code.getAttribute('class'))?.includes('highlighted'),
  );
  const colours = await code.evaluate((c) => {
    const def = [...c.querySelectorAll('span')].find((s) => s.textContent === 'def');
    return { def: def ? getComputedStyle(def).color : 'missing', text: getComputedStyle(c).color };
  });
  // The colours of calc.py's own editor: `def` and a string, as VS Code draws them.
  const calcTab = page.locator('.tabs-container .tab', { hasText: /^calc\.py/ }).filter({ hasNotText: 'proposed' });
  await calcTab.first().click();
  const editorColour = (text) =>
    page.locator('.editor-instance .view-lines').first().evaluate((lines, t) => {
      const span = [...lines.querySelectorAll('span span')].find((s) => s.textContent === t);
      return span ? getComputedStyle(span).color : 'missing';
    }, text);
  const inEditor = await editorColour('def');
  log(`  def ${colours.def} in the panel, ${inEditor} in the editor; text ${colours.text}`);
  check(colours.def === inEditor && colours.def !== colours.text, `def should be ${inEditor} as in the editor, got ${colours.def}`);
  const text = (await code.textContent()) ?? '';
  check(text.includes(CHECK_LINE), 'the block should hold the new calc.py');
  await panelShot('codeblock');

  // The path opens calc.py with the cursor on line 6.
  await panel.locator('.message.assistant a.path-link[data-path="calc.py"][data-line="6"]').last().click();
  const cursor = page.locator('[id="status.editor.selection"]');
  await poll('calc.py at line 6', async () =>
    /Ln 6\b/.test((await cursor.textContent().catch(() => '')) ?? '') &&
    ((await calcTab.first().getAttribute('class').catch(() => '')) ?? '').split(' ').includes('active'),
  );

  // Insert at the cursor, then Ctrl+Z in the editor takes it out again.
  const editorText = async () => (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  const before = onDisk();
  await block.locator('button[data-action="insert"]').click();
  await poll('the block inserted into calc.py', async () => (await editorText()).includes('median() of an empty list'));
  check(onDisk() === before, 'Insert changes the editor, not the file on disk');
  await screenshot('code-inserted');
  await page.keyboard.press('Control+Z');
  await poll('Ctrl+Z to take the insert out', async () => !(await editorText()).includes('median() of an empty list'));

  // Apply: a proposal reviewed in the diff editor; written only once accepted.
  const diffTab = page.locator('.tabs-container .tab', { hasText: 'proposed by agentls' });
  await block.locator('button[data-action="apply"]').click();
  await diffTab.first().waitFor({ timeout: 30_000 });
  check(onDisk() === before, 'nothing is written before the proposal is accepted');
  await sleep(300);
  await screenshot('code-apply-diff');
  await page.locator('.editor-actions [aria-label^="Accept proposed edit"]').first().click();
  await diffTab.first().waitFor({ state: 'detached', timeout: 15_000 });
  await poll('the applied block on disk', async () => onDisk() === text.replace(/\n?$/, '\n'));
  await panelShot('codeblock-applied');
}
