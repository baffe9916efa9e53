import { describe, expect, it } from 'vitest';
import { AgentHost, type AgentConnection, type HostUi } from '../../src/host';
import { isPanelMessage, type HostMessage } from '../../src/model/messages';
import { applyEvent, emptyView, promptSent, viewFromMessages, type UserItem } from '../../src/model/transcript';
import type { AgentRequests, MessageInfo } from '../../src/protocol/generated';
import { fromDataUrl, refusal } from '../../src/webview/images';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

describe('images in the prompt', () => {
  it('reads a data: URL of the four types, nothing else', () => {
    expect(fromDataUrl(`data:image/png;base64,${PNG}`)).toEqual({ mimeType: 'image/png', data: PNG });
    expect(fromDataUrl(`data:image/bmp;base64,${PNG}`)).toBeNull();
    expect(fromDataUrl('data:image/png,<svg>')).toBeNull();
  });

  it('refuses other files, huge ones, and a ninth image', () => {
    expect(refusal({ name: 'a.png', type: 'image/png', size: 10 }, 0)).toBeNull();
    expect(refusal({ name: 'a.svg', type: 'image/svg+xml', size: 10 }, 0)).toMatch(/a.svg is not a PNG, JPEG, GIF or WebP/);
    expect(refusal({ name: 'b.jpg', type: 'image/jpeg', size: 30 * 1024 * 1024 }, 0)).toMatch(/over 20 MB/);
    expect(refusal({ name: '', type: 'image/webp', size: 10 }, 8)).toMatch(/at most 8 images/);
  });

  it('checks the images of a prompt message from the panel', () => {
    expect(isPanelMessage({ type: 'prompt', text: 'x', images: [{ mimeType: 'image/png', data: PNG }] })).toBe(true);
    expect(isPanelMessage({ type: 'prompt', text: 'x', images: [{ mimeType: 'image/png' }] })).toBe(false);
    expect(isPanelMessage({ type: 'prompt', text: 'x', images: 'no' })).toBe(false);
  });

  it('shows a sent prompt’s images when its turn starts, and a stored message’s again', () => {
    const view = emptyView('s');
    promptSent(view, 'what is this?', [], false, [`data:image/png;base64,${PNG}`]);
    applyEvent(view, { type: 'turn-start', sessionId: 's', messageId: 'm', prompt: 'what is this?' });
    const [item] = view.items as UserItem[];
    expect(item.images).toEqual([`data:image/png;base64,${PNG}`]);
    expect(view.queuedImages).toEqual({});
    const messages: MessageInfo[] = [
      {
        id: 'm1',
        role: 'user',
        createdAt: 1,
        parts: [
          { type: 'image', mediaType: 'image/png', data: PNG, uri: null },
          { type: 'text', text: 'what is this?' },
        ],
      },
    ];
    const loaded = viewFromMessages('s', messages).items[0] as UserItem;
    expect(loaded).toMatchObject({ kind: 'user', text: 'what is this?', images: [`data:image/png;base64,${PNG}`] });
  });

  it('sends them to agent/prompt as image context items', async () => {
    const calls: { method: string; params: unknown }[] = [];
    const server: AgentConnection = {
      request<M extends keyof AgentRequests>(method: M, params: AgentRequests[M]['params']): Promise<AgentRequests[M]['result']> {
        calls.push({ method, params });
        const answers: Record<string, unknown> = {
          'agent/listSessions': { sessions: [] },
          'agent/newSession': { sessionId: 'ses_1' },
          'agent/prompt': { sessionId: 'ses_1', messageId: 'm', finishReason: 'end_turn', text: 'ok', usage: {} },
        };
        return Promise.resolve((answers[method] ?? {}) as AgentRequests[M]['result']);
      },
    };
    const posted: HostMessage[] = [];
    const ui: HostUi = { post: (m) => posted.push(m), showError: () => {}, openDiff: () => {}, openFile: () => {} };
    const values = new Map<string, unknown>();
    const memory = {
      get: <T>(key: string): T | undefined => values.get(key) as T | undefined,
      update: (key: string, value: unknown): Promise<void> => Promise.resolve(void values.set(key, value)),
    };
    const host = new AgentHost(ui, memory);
    await host.connected(server);
    await host.handlePanelMessage({ type: 'prompt', text: 'look', images: [{ mimeType: 'image/png', data: PNG }] });
    expect(calls.find((c) => c.method === 'agent/prompt')?.params).toEqual({
      sessionId: 'ses_1',
      text: 'look',
      context: [{ type: 'image', mimeType: 'image/png', data: PNG }],
    });
    expect(posted.find((m) => m.type === 'prompt-sent')).toMatchObject({ images: [`data:image/png;base64,${PNG}`] });
  });
});
