#!/usr/bin/env node
// Generates src/protocol/generated.ts from the JSON Schema in ../schemas (the server's protocol).
//
//   node scripts/gen-types.mjs           write it
//   node scripts/gen-types.mjs --check   exit 1 if it is stale (the build runs this)
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const extensionRoot = resolve(here, '..');
const schemasDir = resolve(extensionRoot, '../schemas');
const target = join(extensionRoot, 'src/protocol/generated.ts');
const check = process.argv.includes('--check');

function listJson(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listJson(path);
    return entry.name.endsWith('.json') ? [path] : [];
  });
}

/** Property titles would become pointless type aliases (`Sessionid = string`): drop them. A
 * property with a `const` (the events' `type`) is always sent, so make it required: that keeps
 * the union discriminated. */
function tidy(node, isDefinition = false) {
  if (Array.isArray(node)) return node.map((n) => tidy(n));
  if (node === null || typeof node !== 'object') return node;
  const outNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'title' && !isDefinition) continue;
    if (key === 'discriminator') continue;
    if (key === 'properties') {
      outNode.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tidy(v)]));
    } else if (key === '$defs') {
      outNode.$defs = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tidy(v, true)]));
    } else {
      outNode[key] = tidy(value);
    }
  }
  if (outNode.properties) {
    const constants = Object.entries(outNode.properties)
      .filter(([, v]) => v && typeof v === 'object' && 'const' in v)
      .map(([k]) => k);
    if (constants.length) {
      outNode.required = [...new Set([...(outNode.required ?? []), ...constants])];
      for (const k of constants) delete outNode.properties[k].default;
    }
  }
  return outNode;
}

const files = listJson(schemasDir).sort();
if (!files.length) throw new Error(`no schemas in ${schemasDir}`);
const defs = {};
const origin = {};
const requests = [];
const commands = [];
const notifications = [];
const serverRequests = [];
let eventUnion;
let initialize;

function refName(ref) {
  const match = /^#\/\$defs\/(.+)$/.exec(ref ?? '');
  if (!match) throw new Error(`unexpected $ref ${ref}`);
  return match[1];
}

for (const file of files) {
  const rel = relative(schemasDir, file);
  const raw = JSON.parse(readFileSync(file, 'utf8'));
  const schema = tidy(raw);
  for (const [name, def] of Object.entries(schema.$defs ?? {})) {
    if (name in defs && JSON.stringify(defs[name]) !== JSON.stringify(def)) {
      throw new Error(`$defs/${name} differs between ${origin[name]} and ${rel}`);
    }
    defs[name] = def;
    origin[name] = rel;
  }
  if (rel === 'notifications/agent.event.json') {
    eventUnion = schema.oneOf;
    continue;
  }
  const entry = {
    method: raw.title,
    params: refName(schema.properties.params.$ref),
    result: schema.properties.result ? refName(schema.properties.result.$ref) : undefined,
    file: rel,
  };
  if (rel.startsWith('requests/')) requests.push(entry);
  else if (rel.startsWith('commands/')) commands.push(entry);
  else if (rel.startsWith('notifications/')) notifications.push(entry);
  else if (rel.startsWith('server-requests/')) serverRequests.push(entry);
  else if (rel === 'initialize.json') initialize = entry;
  else throw new Error(`schemas/${rel}: not a request, command, notification, server request or initialize`);
}
if (!eventUnion) throw new Error('schemas/notifications/agent.event.json is missing');
defs.AgentEvent = {
  title: 'AgentEvent',
  description: "Server -> client notification agent/event: one event of a session's turn.",
  oneOf: eventUnion,
};

const root = {
  title: 'AgentProtocolSchemas',
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(Object.keys(defs).sort().map((name) => [name, { $ref: `#/$defs/${name}` }])),
  $defs: defs,
};

let ts = await compile(root, 'AgentProtocolSchemas', {
  bannerComment: '',
  additionalProperties: false,
  declareExternallyReferenced: true,
  unknownAny: true,
  strictIndexSignatures: true,
  style: { singleQuote: true, printWidth: 100 },
});
// The root interface only exists to make every $def reachable.
ts = ts.replace(/export interface AgentProtocolSchemas \{[\s\S]*?\n\}\n/, '');

const mapOf = (name, doc, entries, withResult) =>
  `/** ${doc} */\nexport interface ${name} {\n` +
  entries
    .sort((a, b) => a.method.localeCompare(b.method))
    .map((e) =>
      withResult
        ? `  '${e.method}': { params: ${e.params}; result: ${e.result} };\n`
        : `  '${e.method}': ${e.params};\n`,
    )
    .join('') +
  '}\n';

const header =
  '// Generated by scripts/gen-types.mjs from ../schemas: do not edit.\n' +
  '// Regenerate with `npm run gen-types` (the build fails while this file is stale).\n\n';
const output =
  header +
  ts.trim() +
  '\n\n' +
  mapOf('AgentRequests', 'Client -> server requests: params and result.', requests, true) +
  '\n' +
  mapOf('AgentCommands', 'workspace/executeCommand commands; `arguments` is [params].', commands, true) +
  '\n' +
  mapOf('AgentClientNotifications', 'Client -> server notifications.', notifications, false) +
  '\n' +
  mapOf(
    'AgentServerRequests',
    'Server -> client requests: params (the result is a plain LSP result).',
    serverRequests,
    false,
  ) +
  `\n/** initializationOptions.agent */\nexport type AgentInitializationOptions = ${initialize.params};\n` +
  `/** capabilities.experimental.agent of the client */\nexport type AgentClientCapabilities = ${initialize.result};\n`;

if (check) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
  if (current !== output) {
    console.error(
      `${relative(process.cwd(), target)} is stale: the schemas in ../schemas changed. ` +
        'Run `npm run gen-types` in client-vscode (or `make extension-types`) and commit the result.',
    );
    process.exit(1);
  }
  console.log('protocol types are up to date with ../schemas');
} else {
  writeFileSync(target, output);
  console.log(`wrote ${relative(process.cwd(), target)}`);
}
