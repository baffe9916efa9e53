// What this client promises the server in capabilities.experimental.agent (see schemas/initialize.json).
import { LANGUAGE_METHODS } from './language';
import type { AgentClientCapabilities } from './protocol/generated';

export const AGENT_CAPABILITIES: AgentClientCapabilities = {
  diagnosticsPush: true,
  approvals: true,
  savesEdits: true,
  // agent/languageRequest: answered from VS Code's own language features (src/language.ts).
  languageRequests: [...LANGUAGE_METHODS],
};

/** Adds experimental.agent to the client capabilities vscode-languageclient sends in initialize. */
export function fillAgentCapabilities(capabilities: { experimental?: unknown }): void {
  const experimental =
    capabilities.experimental && typeof capabilities.experimental === 'object'
      ? (capabilities.experimental as Record<string, unknown>)
      : {};
  capabilities.experimental = { ...experimental, agent: { ...AGENT_CAPABILITIES } };
}
