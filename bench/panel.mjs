#!/usr/bin/env node
// The VS Code panel's speed, on the real webview bundle (client-vscode/dist/webview.js) in headless
// Chromium through playwright-core, opened as client-vscode/test/browser opens it (openPanel: the
// panel's page, a stand-in for VS Code's webview API). Run by bench/panel_mentions.py and
// bench/panel_transcript.py (`make bench BENCH=panel_mentions`), which turn the JSON it prints into
// figures.
//
//   node bench/panel.mjs mentions   [--files N] [--runs N]
//   node bench/panel.mjs transcript [--messages N] [--runs N] [--deltas N]
//
// mentions: a workspace of N generated paths (100,000) in the extension's in-memory file index
// (src/mentionMatch.ts, run here in Node as the extension host runs it). Measured: the index's
// build, its search at each keystroke of a few words typed after "@", and keystroke -> list shown
// in the panel: the time from the keydown in the page to the next frame after the list shows the
// extension's answer (the answer computed in Node by the same index, reached through
// page.exposeFunction as the panel reaches the extension through postMessage).
//
// transcript: a session of N messages (2,000; the recorded demo session's 6 messages repeated),
// made into the panel's view by the extension's own viewFromMessages. Measured: open = the `state`
// message handled (the whole transcript rendered) and laid out, and to the next frame; a streamed
// text delta = the message handled plus the panel's render frame (its requestAnimationFrame
// callback) and the layout after it; a scroll step = scrollTop moved by one screen and laid out.
import { build } from '../client-vscode/node_modules/esbuild/lib/main.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const client = resolve(dirname(fileURLToPath(import.meta.url)), '../client-vscode');
const args = process.argv.slice(2);
const mode = args[0];
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};

/** The extension's own modules, bundled for Node (placed two folders under client-vscode, so the
 * test support's extensionRoot and playwright-core resolve as they do for the tests). */
async function modules() {
  const out = join(client, 'test-artifacts/bench/panel-bench.mjs'); // git-ignored
  mkdirSync(dirname(out), { recursive: true });
  await build({
    stdin: {
      contents: [
        "export { PathIndex } from './src/mentionMatch';",
        "export { viewFromMessages } from './src/model/transcript';",
        "export { openPanel } from './test/support/browserPanel';",
      ].join('\n'),
      resolveDir: client,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    external: ['playwright-core'],
    logLevel: 'warning',
  });
  return import(pathToFileURL(out).href);
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (v) => Math.round(v * 1000) / 1000;
  return { min: round(sorted[0]), median: round(median), max: round(sorted.at(-1)), n: values.length, samples: values.map(round) };
};

// ---- mentions -------------------------------------------------------------------------------

const WORDS = ['calc', 'parser', 'render', 'session', 'client', 'model', 'store', 'util', 'config', 'handler', 'view', 'index', 'test', 'schema', 'token'];
const EXTS = ['.py', '.ts', '.md', '.json', '.tsx', '.go'];

/** N workspace paths, as a large monorepo has them: packages, nested folders, words in names. */
function workspacePaths(n) {
  let seed = 100_000; // mulberry32: the same paths every run
  const rand = (k) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % k;
  };
  const paths = new Set(['src/calc.py', 'src/calc_total.py']);
  while (paths.size < n) {
    const w = () => WORDS[rand(WORDS.length)];
    const dir = `packages/${w()}-${rand(40)}/src/${w()}${rand(3) ? '' : `/${w()}s`}`;
    paths.add(`${dir}/${w()}_${w()}${rand(100)}${EXTS[rand(EXTS.length)]}`);
  }
  return [...paths];
}

async function mentions() {
  const files = option('files', 100_000);
  const runs = option('runs', 3);
  const { PathIndex, openPanel } = await modules();
  const paths = workspacePaths(files);
  const built = [];
  let index;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    index = new PathIndex(paths);
    index.search('x', 1); // the fuzzy matcher's snapshot is made at the first search
    built.push(performance.now() - t);
  }
  const typed = ['calc_total', 'rendhand', 'session_view', 'cfg', 'token_schema'];
  const search = [];
  for (let r = 0; r < runs; r++) {
    for (const word of typed) {
      for (let k = 1; k <= word.length; k++) {
        const t = performance.now();
        index.search(word.slice(0, k), 12);
        search.push(performance.now() - t);
      }
    }
  }
  const top = index.search('calc', 3);

  // Keystroke -> list shown, in the panel at 300 px.
  const errors = [];
  const { browser, page, http } = await openPanel({ viewport: { width: 300, height: 700 } }, errors);
  const items = (query) =>
    index.search(query, 12).map((path) => ({ label: path.slice(path.lastIndexOf('/') + 1), detail: path, name: path, ref: { uri: `file:///w/${path}` } }));
  await page.exposeFunction('__hostSearch', (kind, query) => (kind === 'file' ? items(query) : []));
  await page.addInitScript(() => {
    const fake = window.acquireVsCodeApi;
    window.acquireVsCodeApi = () => {
      const api = fake();
      return {
        ...api,
        postMessage(m) {
          api.postMessage(m);
          if (m.type === 'mention-search') {
            window.__hostSearch(m.kind, m.query).then((found) => window.postMessage({ type: 'mention-results', kind: m.kind, query: m.query, items: found }, '*'));
          }
        },
      };
    };
  });
  await page.goto(`${http.origin}/panel.html`);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'));
  await page.evaluate(() =>
    window.postMessage({ type: 'state', state: { connection: 'running', sessions: [], activeSessionId: 's', view: null } }, '*'),
  );
  const box = page.locator('#prompt');
  await box.click();
  await page.evaluate(() => {
    const box = document.getElementById('prompt');
    box.addEventListener('keydown', () => (window.__keyAt = performance.now()), true);
  });
  const shown = [];
  for (let r = 0; r < runs; r++) {
    for (const word of typed) {
      await box.fill('');
      await box.pressSequentially('what is @', { delay: 0 });
      for (let k = 1; k <= word.length; k++) {
        const expected = items(word.slice(0, k))[0]?.label;
        const wait = page.evaluate(
          (want) =>
            new Promise((done) => {
              const list = document.getElementById('mentions');
              const check = () => {
                const first = list.hidden ? undefined : list.querySelector('[data-kind="file"] .command-name')?.textContent;
                if (first !== want) return false;
                observer.disconnect();
                requestAnimationFrame(() => setTimeout(() => done(performance.now() - window.__keyAt)));
                return true;
              };
              const observer = new MutationObserver(check);
              observer.observe(list, { childList: true, subtree: true, attributes: true });
            }),
          expected,
        );
        await box.press(word[k - 1]);
        shown.push(await wait);
      }
    }
  }
  await browser.close();
  await new Promise((r) => http.server.close(r));
  return { files, runs, build_ms: stats(built), search_ms: stats(search), keystroke_to_list_ms: stats(shown), top_for_calc: top, errors };
}

// ---- transcript ------------------------------------------------------------------------------

async function transcript() {
  const count = option('messages', 2000);
  const runs = option('runs', 3);
  const deltas = option('deltas', 200);
  const { viewFromMessages, openPanel } = await modules();
  const fixture = JSON.parse(readFileSync(join(client, 'test/fixtures/demo-session.json'), 'utf8'));
  const messages = [];
  for (let copy = 0; messages.length < count; copy++) {
    for (const m of fixture.messages) {
      if (messages.length >= count) break;
      const parts = m.parts.map((p) => (p.type === 'tool' ? { ...p, callId: `${p.callId}_${copy}` } : p));
      messages.push({ ...m, id: `${m.id}_${copy}`, parts });
    }
  }
  const sessionId = 'ses_long';
  const info = { ...fixture.sessions[0], sessionId, title: 'A long session' };
  const view = viewFromMessages(sessionId, messages, info);
  const state = { connection: 'running', sessions: [info], activeSessionId: sessionId, view };
  const errors = [];
  const { browser, page, http } = await openPanel({ viewport: { width: 300, height: 800 } }, errors);
  // The panel's render frames, timed: each requestAnimationFrame callback and the layout after it;
  // and each IntersectionObserver callback (the long-session window's page of earlier messages).
  await page.addInitScript(() => {
    const Observer = window.IntersectionObserver;
    window.__pages = [];
    window.IntersectionObserver = class extends Observer {
      constructor(callback, options) {
        super((entries, observer) => {
          const start = performance.now();
          callback(entries, observer);
          void document.documentElement.offsetHeight;
          window.__pages.push(performance.now() - start);
        }, options);
      }
    };
    const raf = window.requestAnimationFrame.bind(window);
    window.__frames = [];
    window.requestAnimationFrame = (callback) =>
      raf((ts) => {
        const start = performance.now();
        callback(ts);
        void document.documentElement.offsetHeight; // style and layout, now
        window.__frames.push(performance.now() - start);
      });
  });
  const open = [];
  const openPainted = [];
  const delta = [];
  const deltaAll = [];
  const scroll = [];
  const longFrames = [];
  const pageDraws = [];
  let scrolledItems = 0;
  let items = 0;
  let clientMessages = 0;
  for (let r = 0; r < runs; r++) {
    await page.goto(`${http.origin}/panel.html`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'));
    const opened = await page.evaluate(
      (state) =>
        new Promise((done) => {
          const t0 = performance.now();
          window.dispatchEvent(new MessageEvent('message', { data: { type: 'state', state } })); // as the host's postMessage arrives
          void document.documentElement.offsetHeight;
          const handled = performance.now() - t0;
          requestAnimationFrame(() => setTimeout(() => done({ handled, painted: performance.now() - t0 })));
        }),
      state,
    );
    open.push(opened.handled);
    openPainted.push(opened.painted);
    items = await page.evaluate(() => document.querySelectorAll('#transcript > *').length);
    clientMessages = await page.evaluate(() => document.querySelectorAll('#transcript .message').length);
    // A new turn streams its answer, one delta at a time, each given its frame.
    const stream = (turn) =>
      page.evaluate(
      async ({ sessionId, deltas, turn }) => {
        const post = (event) => window.dispatchEvent(new MessageEvent('message', { data: { type: 'event', event } }));
        const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
        post({ type: 'turn-start', sessionId, messageId: `msg_new_user_${turn}`, prompt: 'One more thing: explain the fix.' });
        await frame();
        const out = [];
        const words = 'The median of an even count is the mean of the two middle values, so `median([1, 2, 3, 4])` is 2.5; '.split(/(?<= )/);
        for (let i = 0; i < deltas; i++) {
          window.__frames = [];
          const t0 = performance.now();
          post({ type: 'text-delta', sessionId, messageId: `msg_new_answer_${turn}`, delta: words[i % words.length] + (i % 40 === 39 ? '\n\n' : '') });
          const handled = performance.now() - t0;
          await frame();
          out.push(handled + window.__frames.reduce((a, b) => a + b, 0));
        }
        post({ type: 'turn-end', sessionId, messageId: `msg_new_answer_${turn}`, finishReason: 'end_turn' });
        await frame();
        return out;
      },
      { sessionId, deltas, turn },
    );
    delta.push(...(await stream(0)));
    // Scrolling from the bottom to the top, one screen at a time, the earlier pages drawn as
    // they come near: each step laid out, and every frame of over 50 ms (long-animation-frame).
    const scrolled = await page.evaluate(async () => {
      const t = document.getElementById('transcript');
      const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
      const long = [];
      const observer = new PerformanceObserver((list) => long.push(...list.getEntries().map((e) => e.duration)));
      observer.observe({ type: 'long-animation-frame' });
      window.__pages = [];
      window.__frames = [];
      const out = [];
      for (let i = 0; i < 3000 && (t.scrollTop > 0 || document.querySelector('.earlier-page')); i++) {
        const t0 = performance.now();
        t.scrollTop = Math.max(0, t.scrollTop - t.clientHeight);
        void document.documentElement.offsetHeight;
        out.push(performance.now() - t0);
        await frame();
      }
      await frame();
      observer.disconnect();
      // The pages drawn: in the observer's callbacks, and in frames (a page drawn on the next
      // frame when the bar is still near); frames of under 1 ms drew nothing.
      const pages = [...window.__pages, ...window.__frames].filter((d) => d >= 1);
      return { steps: out, long, items: t.children.length, pages };
    });
    scroll.push(...scrolled.steps);
    // Streaming again, with every item of the session drawn (after that scroll to the top).
    await page.evaluate(() => {
      const t = document.getElementById('transcript');
      t.scrollTop = t.scrollHeight;
    });
    deltaAll.push(...(await stream(1)));
    longFrames.push(...scrolled.long);
    pageDraws.push(...scrolled.pages);
    scrolledItems = scrolled.items;
  }
  await browser.close();
  await new Promise((r) => http.server.close(r));
  return {
    messages: count,
    rendered_items: items,
    rendered_messages: clientMessages,
    runs,
    open_ms: stats(open),
    open_to_frame_ms: stats(openPainted),
    delta_ms: stats(delta),
    delta_all_drawn_ms: stats(deltaAll),
    scroll_step_ms: stats(scroll),
    scroll_steps: scroll.length,
    scroll_long_frames_ms: longFrames.length ? stats(longFrames) : { n: 0 },
    page_draw_ms: pageDraws.length ? stats(pageDraws) : { n: 0 },
    items_after_scrolling_up: scrolledItems,
    errors,
  };
}

const result = mode === 'mentions' ? await mentions() : mode === 'transcript' ? await transcript() : undefined;
if (!result) {
  console.error('usage: node bench/panel.mjs mentions|transcript [--runs N]');
  process.exit(2);
}
console.log(JSON.stringify(result));
