// The panel's small list of MCP servers (agent/mcpStatus): one line each, its state and tools.
import type { McpServerInfo } from '../protocol/generated';

export interface McpRow {
  name: string;
  status: McpServerInfo['status'];
  /** "running · 9 tools", "failed", "not started (starts with the first prompt)". */
  detail: string;
  /** Tool names as the model sees them; "(says read-only)" after those whose server says so. */
  tools: string[];
  /** Why it failed (names the server, ends with its stderr's last lines). */
  error?: string;
}

export interface McpList {
  summary: string;
  rows: McpRow[];
  /** Some server failed or is misconfigured. */
  attention: boolean;
}

export function mcpList(servers: McpServerInfo[]): McpList {
  const rows = servers.map((s): McpRow => {
    const count = s.tools?.length ?? 0;
    const detail =
      s.status === 'running'
        ? `running · ${count} ${count === 1 ? 'tool' : 'tools'}`
        : s.status === 'not started'
          ? 'not started (starts with the first prompt)'
          : s.status;
    const row: McpRow = {
      name: s.name,
      status: s.status,
      detail,
      tools: (s.tools ?? []).map((t) => (t.readOnlyHint ? `${t.name} (says read-only)` : t.name)),
    };
    if (s.error) row.error = s.error;
    return row;
  });
  const failed = rows.filter((r) => r.status === 'failed' || r.status === 'bad config').length;
  const plural = servers.length === 1 ? 'server' : 'servers';
  const summary = `MCP: ${servers.length} ${plural}${failed ? ` · ${failed} failed` : ''}`;
  return { summary, rows, attention: failed > 0 };
}
