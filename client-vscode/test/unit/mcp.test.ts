import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { mcpList } from '../../src/model/mcp';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import type { AgentRequests, McpServerInfo } from '../../src/protocol/generated';

const SERVERS: McpServerInfo[] = [
  {
    name: 'broken',
    transport: 'stdio',
    target: 'python server.py',
    status: 'failed',
    error: "MCP server 'broken' (python server.py) failed to start: Connection closed\nIts stderr ended with:\n  giving up",
    tools: [],
  },
  {
    name: 'test',
    transport: 'stdio',
    target: 'python server.py',
    status: 'running',
    tools: [
      { name: 'mcp__test__echo', remoteName: 'echo', readOnlyHint: true },
      { name: 'mcp__test__add', remoteName: 'add', readOnlyHint: false },
    ],
  },
  { name: 'later', transport: 'http', target: 'https://x.test/mcp', status: 'not started', tools: [] },
];

describe('the MCP list', () => {
  it('says each server, its state and tools, and calls attention to a failed one', () => {
    const list = mcpList(SERVERS);
    expect(list.summary).toBe('MCP: 3 servers · 1 failed');
    expect(list.attention).toBe(true);
    expect(list.rows.map((r) => [r.name, r.detail])).toEqual([
      ['broken', 'failed'],
      ['test', 'running · 2 tools'],
      ['later', 'not started (starts with the first prompt)'],
    ]);
    expect(list.rows[0].error).toContain('giving up');
    expect(list.rows[1].tools).toEqual(['mcp__test__echo (says read-only)', 'mcp__test__add']);
    const one = mcpList([SERVERS[1]]);
    expect(one.summary).toBe('MCP: 1 server');
    expect(one.attention).toBe(false);
  });
});

describe('the host and the panel', () => {
  it('answers the panel with agent/mcpStatus, and says nothing when the server lacks it', async () => {
    expect(isPanelMessage({ type: 'mcp-status' })).toBe(true);
    const posted: HostMessage[] = [];
    const ui: HostUi = { post: (m) => posted.push(m), showError: () => undefined, openDiff: () => undefined, openFile: () => undefined };
    const memory = { get: () => undefined, update: () => Promise.resolve() };
    let supported = true;
    const asked: string[] = [];
    const server: AgentConnection = {
      request<M extends keyof AgentRequests>(method: M): Promise<AgentRequests[M]['result']> {
        asked.push(method);
        if (method === 'agent/listSessions') return Promise.resolve({ sessions: [] } as never);
        if (method === 'agent/mcpStatus') {
          return supported ? Promise.resolve({ servers: SERVERS } as never) : Promise.reject(new Error('Method not found'));
        }
        return Promise.resolve({} as never);
      },
    };
    const host = new AgentHost(ui, memory);
    await host.connected(server);
    expect(asked).not.toContain('agent/mcpStatus'); // only when the panel asks
    await host.handlePanelMessage({ type: 'mcp-status' });
    expect(asked).toContain('agent/mcpStatus');
    expect(posted.at(-1)).toEqual({ type: 'mcp', servers: SERVERS });
    expect(host.mcpServers).toEqual(SERVERS);
    supported = false;
    const count = posted.length;
    await host.handlePanelMessage({ type: 'mcp-status' });
    expect(posted.length).toBe(count);
  });
});
