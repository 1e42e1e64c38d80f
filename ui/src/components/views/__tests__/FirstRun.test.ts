// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { demoData, makeApproval } from '../../../lib/mock-data';
import type { GettingStarted } from '../../../lib/types';

afterEach(() => cleanup());

type Started = GettingStarted;
type Setup = GettingStarted['clients'][number];

function client(id: string, name: string, line: string, more: Partial<Setup> = {}): Setup {
  return { id, name, line, found: true, routed: [], without_policy: [], can_route: false, ...more };
}

const CODE_ROUTED = client('claude-code', 'Claude Code', 'Claude Code: routed, 1 server, policy written', { routed: ['fs'] });
const DESKTOP_UNROUTED = client('claude-desktop', 'Claude Desktop', 'Claude Desktop: not routed (2 servers)', {
  can_route: true,
});
const CURSOR_MISSING = client('cursor', 'Cursor', 'Cursor: no config file', { found: false });

const STARTED: Started = {
  install_command: '/usr/bin/portcullis clients install claude-desktop --data-dir /d',
  suggested_client: 'claude-desktop',
  clients: [DESKTOP_UNROUTED, CURSOR_MISSING, CODE_ROUTED],
  policies_dir: '/home/u/.config/portcullis/policies',
  connect_command: '/usr/bin/portcullis connect SERVER --data-dir /d',
  demo_server: 'demo-notes',
};

function fresh(demo_server: string | null = 'demo-notes', more: Partial<Started> = {}) {
  const tryCall = makeApproval({ id: 'try-1', server: 'demo-notes', tool: 'write_note', arguments: { title: 't' } });
  const backend = new MockBackend({ gettingStarted: { ...STARTED, demo_server, ...more }, tryCall });
  render(App, { props: { backend } });
  return backend;
}

describe('First-run screen', () => {
  it('shows the exact commands and copies them', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    fresh();
    expect((await screen.findByTestId('first-run-install-command')).textContent).toBe(STARTED.install_command);
    expect(screen.getByTestId('first-run-connect-command').textContent).toBe(STARTED.connect_command);
    await fireEvent.click(screen.getByTestId('copy-install'));
    await waitFor(() => expect(screen.getByTestId('copy-install').textContent?.trim()).toBe('Copied'));
    expect(writeText).toHaveBeenCalledWith(STARTED.install_command);
  });

  it('"Try a held call" holds the demo call, and its answer stays after the decision', async () => {
    const backend = fresh();
    await fireEvent.click(await screen.findByTestId('try-held-call'));
    await waitFor(() => expect(screen.getByTestId('pending-count').textContent).toBe('1'));
    expect(screen.getByTestId('try-held-call').textContent).toContain('Waiting for your decision');
    await fireEvent.click(screen.getByTestId('pending-approve'));
    expect((await screen.findByTestId('try-answer')).textContent).toContain('wrote notes/');
    expect(backend.callsOf('try_held_call')).toEqual([{}]);
    expect(backend.callsOf('decide_approval')).toEqual([{ id: 'try-1', choice: { approve: 'once' } }]);
    expect(screen.getByTestId('first-run')).toBeTruthy();
  });

  it('without the demo server it offers no repository script; the Servers link opens the Servers view', async () => {
    fresh(null);
    const hint = (await screen.findByTestId('first-run-no-demo')).textContent ?? '';
    expect(hint).toContain('the starter policy asks you');
    expect(screen.getByTestId('first-run').textContent).not.toMatch(/scripts\/|demo\.sh|bash /);
    expect(screen.queryByTestId('try-held-call')).toBeNull();
    await fireEvent.click(screen.getByTestId('first-run-open-servers'));
    expect(screen.getByTestId('tab-servers').getAttribute('aria-selected')).toBe('true');
  });

  it('lists each client found with what is routed and where the policies are', async () => {
    fresh(null);
    expect((await screen.findByTestId('first-run-client-claude-code')).textContent).toBe(CODE_ROUTED.line);
    expect(screen.getByTestId('first-run-client-claude-desktop').textContent).toBe(DESKTOP_UNROUTED.line);
    expect(screen.queryByTestId('first-run-client-cursor'), 'a client with no config file is not listed').toBeNull();
    expect(screen.getByTestId('first-run-policies').textContent).toContain(STARTED.policies_dir);
    expect(screen.queryByTestId('first-run-without-policy')).toBeNull();
  });

  it('once every client found is routed, it offers no install, and names a server left without a policy', async () => {
    const code = { ...CODE_ROUTED, routed: ['fs', 'git'], without_policy: ['git'], line: 'Claude Code: routed, 2 servers, no policy for git (every call asks)' };
    fresh(null, {
      suggested_client: null,
      install_command: '/usr/bin/portcullis clients install CLIENT',
      clients: [code, CURSOR_MISSING],
    });
    expect((await screen.findByTestId('first-run-all-routed')).textContent).toContain('Every client found is routed');
    expect(screen.queryByTestId('first-run-install-command'), 'no routing offered for a routed client').toBeNull();
    expect(screen.getByTestId('first-run-without-policy').textContent).toContain('git');
  });

  it('with no client found, it shows the command with a CLIENT placeholder', async () => {
    fresh(null, { suggested_client: null, install_command: 'portcullis clients install CLIENT', clients: [CURSOR_MISSING] });
    expect((await screen.findByTestId('first-run-no-clients')).textContent).toContain('No MCP client config found');
    expect(screen.getByTestId('first-run-install-command').textContent).toBe('portcullis clients install CLIENT');
  });

  it('is not shown once calls were audited', async () => {
    render(App, { props: { backend: new MockBackend(demoData(Date.now())) } });
    await waitFor(() => expect(screen.getByTestId('recent-list').textContent).not.toContain('Nothing yet'));
    expect(screen.queryByTestId('first-run')).toBeNull();
  });
});
