// The recorded `agentls serve` run (test/fixtures/demo-session.json, made by
// `npm run record-fixture`) and validators built from ../schemas, to check it still matches them.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020';
import type { AgentEvent, MessageInfo, PromptResult, SessionInfo } from '../../src/protocol/generated';

const here = dirname(fileURLToPath(import.meta.url));
export const extensionRoot = resolve(here, '../..');
export const schemasDir = resolve(extensionRoot, '../schemas');

export interface DemoFixture {
  model: string;
  workspace: string;
  prompt: string;
  result: PromptResult;
  events: AgentEvent[];
  sessions: SessionInfo[];
  messages: MessageInfo[];
}

export function loadFixture(): DemoFixture {
  return JSON.parse(readFileSync(join(extensionRoot, 'test/fixtures/demo-session.json'), 'utf8')) as DemoFixture;
}

function schema(rel: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemasDir, rel), 'utf8')) as Record<string, unknown>;
}

/** Problems of the fixture against the schemas (empty when it matches). */
export function fixtureProblems(fixture: DemoFixture): string[] {
  // `discriminator` (OpenAPI style, with `mapping`) is not an ajv keyword; oneOf does the checking.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(schema('notifications/agent.event.json'), 'event');
  ajv.addSchema(schema('requests/agent.listSessions.json'), 'listSessions');
  ajv.addSchema(schema('requests/agent.getMessages.json'), 'getMessages');
  ajv.addSchema(schema('requests/agent.prompt.json'), 'prompt');
  const problems: string[] = [];
  const check = (key: string, value: unknown, what: string): void => {
    const validate = ajv.getSchema(key);
    if (!validate) throw new Error(`no schema ${key}`);
    if (!validate(value)) problems.push(`${what}: ${ajv.errorsText(validate.errors)}`);
  };
  fixture.events.forEach((event, i) => check('event', event, `events[${i}] (${event.type})`));
  check('listSessions#/properties/result', { sessions: fixture.sessions }, 'sessions');
  check('getMessages#/properties/result', { messages: fixture.messages }, 'messages');
  check('prompt#/properties/result', fixture.result, 'result');
  return problems;
}
