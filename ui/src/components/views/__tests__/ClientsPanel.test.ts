// @vitest-environment jsdom
// The Servers view's MCP clients: state, install shown then applied as shown, uninstall.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import ServersView from '../ServersView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import type { ClientState, InstallPreview } from '../../../lib/types';

afterEach(() => cleanup());

const client = (over: Partial<ClientState>): ClientState => ({
  id: 'cursor',
  name: 'Cursor',
  config_path: '/home/me/.cursor/mcp.json',
  servers: 2,
  routed: 0,
  problem: null,
  installed: false,
  ...over,
});

const PLAN: InstallPreview = {
  preview: '--- /home/me/.cursor/mcp.json\n+++ /home/me/.cursor/mcp.json\n  mcpServers.notes\n-   {"command":"python3"}\n+   {"command":"/usr/bin/portcullis","args":["connect","notes"]}',
  routed: ['notes'],
  imports: ['notes'],
  skipped: [['mcpServers.web', 'reads its environment from an envFile, which only the client loads']],
  policies: [],
};

function setup(clients: ClientState[] = [
  client({}),
  client({ id: 'vscode', name: 'VS Code', config_path: '/home/me/.config/Code/User/mcp.json', servers: null }),
  client({ id: 'claude-desktop', name: 'Claude Desktop', installed: true, routed: 1, servers: 1 }),
]) {
  const backend = new MockBackend({ clients, installs: { cursor: PLAN } });
  render(ServersView, { props: { backend, pollMs: 0 } });
  return backend;
}

describe('MCP clients in the Servers view', () => {
  it('lists each client with the state of its file', async () => {
    setup();
    await screen.findByTestId('client-cursor');
    expect(screen.getByTestId('client-state-cursor').textContent).toBe('2 servers, 0 through Portcullis');
    expect(screen.getByTestId('client-state-vscode').textContent).toBe('not found');
    expect((screen.getByTestId('install-vscode') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('client-state-claude-desktop').textContent).toBe('installed: 1 of 1 through Portcullis');
    expect(screen.getByTestId('uninstall-claude-desktop')).toBeTruthy();
  });

  it('Install shows the preview first and applies exactly it', async () => {
    const backend = setup();
    await fireEvent.click(await screen.findByTestId('install-cursor'));
    const preview = await screen.findByTestId('client-preview');
    expect(preview.textContent).toBe(PLAN.preview);
    expect(screen.getByTestId('client-pending').textContent).toContain('mcpServers.web');
    expect(backend.callsOf('install_client')).toEqual([]);
    await fireEvent.click(screen.getByTestId('client-confirm'));
    await waitFor(() => expect(backend.callsOf('install_client')).toEqual([{ client: 'cursor', preview: PLAN.preview }]));
    const notice = await screen.findByTestId('clients-notice');
    expect(notice.textContent).toContain('Cursor now reaches 1 server through Portcullis');
    expect(notice.textContent).not.toContain('policy');
    expect(screen.queryByTestId('client-pending')).toBeNull();
    await waitFor(() => expect(screen.getByTestId('client-cursor').dataset.installed).toBe('true'));
  });

  it('after install, the notice names the starter policies written and the servers left without one', async () => {
    const starter = { text: '{}', tools: [{ name: 'read_notes', class: 'read', risk: 'low', rule: 'allow' }], skipped: [] };
    const policies: InstallPreview['policies'] = [
      { server: 'notes', path: '/p/notes.json', exists: false, starter, not_written: null },
      { server: 'web', path: '/p/web.json', exists: false, starter: null, not_written: 'not written: cannot list the tools of "web"' },
      { server: 'old', path: '/p/old.json', exists: true, starter: null, not_written: 'exists, kept as it is' },
    ];
    const backend = new MockBackend({ clients: [client({})], installs: { cursor: { ...PLAN, policies } } });
    render(ServersView, { props: { backend, pollMs: 0 } });
    await fireEvent.click(await screen.findByTestId('install-cursor'));
    await screen.findByTestId('client-preview');
    await fireEvent.click(screen.getByTestId('client-confirm'));
    const notice = (await screen.findByTestId('clients-notice')).textContent ?? '';
    expect(notice).toContain('Starter policy written for notes');
    expect(notice).toContain('No policy for web: every call asks you');
    expect(notice).not.toContain('old');
  });

  it('Cancel writes nothing', async () => {
    const backend = setup();
    await fireEvent.click(await screen.findByTestId('install-cursor'));
    await screen.findByTestId('client-preview');
    await fireEvent.click(screen.getByTestId('client-cancel'));
    expect(screen.queryByTestId('client-pending')).toBeNull();
    expect(backend.callsOf('install_client')).toEqual([]);
  });

  it('a plan that changed since the preview is refused and stays shown with the reason', async () => {
    const backend = setup();
    await fireEvent.click(await screen.findByTestId('install-cursor'));
    await screen.findByTestId('client-preview');
    (backend as unknown as { data: { installs: Record<string, InstallPreview> } }).data.installs.cursor = { ...PLAN, preview: `${PLAN.preview}\n+ more` };
    await fireEvent.click(screen.getByTestId('client-confirm'));
    const error = await screen.findByTestId('clients-error');
    expect(error.textContent).toContain('review the change again');
    expect(screen.getByTestId('client-pending')).toBeTruthy();
    expect(screen.getByTestId('client-cursor').dataset.installed).toBe('false');
  });

  it('Uninstall says what it will put back, then does it', async () => {
    const backend = setup();
    await fireEvent.click(await screen.findByTestId('uninstall-claude-desktop'));
    expect((await screen.findByTestId('client-preview')).textContent).toContain('byte for byte');
    expect(backend.callsOf('uninstall_client')).toEqual([]);
    await fireEvent.click(screen.getByTestId('client-confirm'));
    await waitFor(() => expect(backend.callsOf('uninstall_client')).toEqual([{ client: 'claude-desktop' }]));
    await waitFor(() => expect(screen.getByTestId('client-claude-desktop').dataset.installed).toBe('false'));
    expect((await screen.findByTestId('clients-notice')).textContent).toContain("Claude Desktop's config is put back");
  });
});
