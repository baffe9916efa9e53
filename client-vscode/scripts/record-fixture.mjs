#!/usr/bin/env node
// Records test/fixtures/demo-session.json: the agent/event notifications of a real `agentls serve`
// run with the offline scripted model (scripted:demo) in a temporary copy of the demo project,
// plus what agent/listSessions and agent/getMessages answer afterwards.
//
//   npm run record-fixture            (uses ../.venv/bin/agentls; AGENTLS_SERVER overrides it)
//
// The client below declares what the extension declares (approvals, diagnosticsPush, savesEdits)
// and answers like the extension would: it applies the server's edits, saves them, pushes the
// (empty) diagnostics of the edited file, and allows each permission request once.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
} from 'vscode-languageserver-protocol/node.js';

const here = dirname(fileURLToPath(import.meta.url));
const extensionRoot = resolve(here, '..');
const repoRoot = resolve(extensionRoot, '..');
const out = resolve(process.argv[2] ?? join(extensionRoot, 'test/fixtures/demo-session.json'));
const server = process.env.AGENTLS_SERVER ?? join(repoRoot, '.venv/bin/agentls');
const PROMPT = 'Run the tests and fix what fails.';
const MODEL = 'scripted:demo';

if (!existsSync(server)) {
  console.error(`record-fixture: ${server} not found; run \`make venv\` in ${repoRoot} first`);
  process.exit(2);
}

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agentls-fixture-')));
const workspace = join(scratch, 'demo');
const dataDir = join(scratch, 'data');
mkdirSync(dataDir);
cpSync(join(repoRoot, 'server/agentls/demo/sample'), workspace, { recursive: true });

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_')));
const child = spawn(server, ['serve'], {
  cwd: workspace,
  env: { ...env, AGENTLS_DATA_DIR: dataDir },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const connection = createProtocolConnection(
  new StreamMessageReader(child.stdout),
  new StreamMessageWriter(child.stdin),
);

/** Position (UTF-16, as JS strings count) to offset. */
function offsetAt(text, position) {
  let offset = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  return Math.min(offset + position.character, text.length);
}

function applyTextEdits(text, edits) {
  const sorted = [...edits].sort(
    (a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start),
  );
  for (const edit of sorted) {
    text = text.slice(0, offsetAt(text, edit.range.start)) + edit.newText + text.slice(offsetAt(text, edit.range.end));
  }
  return text;
}

const events = [];
let sessionId;

connection.onNotification('agent/event', (event) => {
  events.push(event);
  if (event.type === 'permission-request') {
    setTimeout(() => {
      connection
        .sendRequest('agent/approve', { sessionId: event.sessionId, requestId: event.requestId, decision: 'once' })
        .catch((err) => console.error('approve failed', err));
    }, 20);
  }
});
connection.onRequest('workspace/applyEdit', ({ edit }) => {
  const touched = [];
  for (const change of edit.documentChanges ?? []) {
    if ('kind' in change) continue; // create/rename/delete: not in the demo
    touched.push([change.textDocument.uri, change.edits]);
  }
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) touched.push([uri, edits]);
  for (const [uri, edits] of touched) {
    const path = fileURLToPath(uri);
    writeFileSync(path, applyTextEdits(existsSync(path) ? readFileSync(path, 'utf8') : '', edits));
    setTimeout(() => connection.sendNotification('agent/diagnostics', { uri, diagnostics: [] }), 10);
  }
  return { applied: true };
});
connection.onRequest('window/workDoneProgress/create', () => null);
connection.onRequest('client/registerCapability', () => null);
connection.onRequest('workspace/configuration', (params) => params.items.map(() => null));
connection.onNotification('window/logMessage', (params) => console.error(`[server] ${params.message}`));
connection.listen();

const timeout = setTimeout(() => {
  console.error('record-fixture: timed out');
  child.kill();
  process.exit(1);
}, 60_000);

try {
  const init = await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(workspace).href,
    workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'demo' }],
    capabilities: {
      workspace: {
        applyEdit: true,
        workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
      },
      window: { workDoneProgress: true },
      experimental: { agent: { diagnosticsPush: true, approvals: true, savesEdits: true } },
    },
    initializationOptions: { agent: { model: MODEL } },
  });
  if (init.capabilities.experimental?.agent?.protocolVersion !== 1) {
    throw new Error(`unexpected protocol: ${JSON.stringify(init.capabilities.experimental)}`);
  }
  connection.sendNotification('initialized', {});
  ({ sessionId } = await connection.sendRequest('agent/newSession', { title: 'Fix the failing test' }));
  const result = await connection.sendRequest('agent/prompt', { sessionId, text: PROMPT });
  const { sessions } = await connection.sendRequest('agent/listSessions', {});
  const { messages } = await connection.sendRequest('agent/getMessages', { sessionId });
  await connection.sendRequest('shutdown');
  connection.sendNotification('exit');
  const fixture = {
    description:
      'agent/event notifications of one `agentls serve` turn with the scripted:demo model, recorded by scripts/record-fixture.mjs; then agent/listSessions and agent/getMessages.',
    model: MODEL,
    workspace,
    prompt: PROMPT,
    result,
    events,
    sessions,
    messages,
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
  const kinds = {};
  for (const e of events) kinds[e.type] = (kinds[e.type] ?? 0) + 1;
  console.log(`record-fixture: ${events.length} events (${JSON.stringify(kinds)}), finish ${result.finishReason} -> ${out}`);
} finally {
  clearTimeout(timeout);
  const exited = new Promise((done) => child.once('exit', done));
  const killer = setTimeout(() => child.kill(), 2000);
  if (child.exitCode === null) await exited;
  clearTimeout(killer);
  connection.dispose();
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}
