// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import ServersView from '../ServersView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { COMMANDS } from '../../../lib/backend';
import type { ServerStatus } from '../../../lib/types';

afterEach(() => cleanup());

const fs: ServerStatus = {
  name: 'fs',
  transport: 'stdio',
  state: 'running',
  tool_count: 3,
  stderr_tail: [],
  policy: { state: 'ok', problems: [] },
  sessions: [],
};

function setup() {
  const backend = new MockBackend({
    servers: [fs],
    entries: { fs: { transport: 'stdio', command: 'node', args: ['fs.js'], env: {} } },
  });
  render(ServersView, { props: { backend, pollMs: 0 } });
  return backend;
}

const input = (id: string) => screen.getByTestId(id) as HTMLInputElement;

describe('ServersView: adding and editing an mcpServers entry', () => {
  it('adds an HTTP server through the form and lists it', async () => {
    const backend = setup();
    await waitFor(() => expect(screen.getAllByTestId('server-card')).toHaveLength(1));
    await fireEvent.click(screen.getByTestId('add-server'));
    await fireEvent.input(input('server-name'), { target: { value: 'web' } });
    await fireEvent.click(screen.getByTestId('transport-http'));
    await fireEvent.input(input('server-url'), { target: { value: 'http://127.0.0.1:9/mcp' } });
    await fireEvent.input(input('server-headers'), { target: { value: 'X-Key: k' } });
    await fireEvent.click(screen.getByTestId('server-save'));
    await waitFor(() => expect(screen.getAllByTestId('server-card')).toHaveLength(2));
    expect(backend.callsOf(COMMANDS.saveServer)).toEqual([
      { name: 'web', entry: { transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: { 'X-Key': 'k' } } },
    ]);
    expect(screen.queryByTestId('server-form')).toBeNull();
    expect(screen.getByTestId('servers-notice').textContent).toContain('web saved');
  });

  it('shows problems in place and sends nothing while the form is invalid', async () => {
    const backend = setup();
    await fireEvent.click(screen.getByTestId('add-server'));
    await fireEvent.input(input('server-name'), { target: { value: 'bad name' } });
    await fireEvent.click(screen.getByTestId('server-save'));
    await waitFor(() => expect(screen.getByTestId('problem-name').textContent).toContain('letters'));
    expect(screen.getByTestId('problem-command').textContent).toContain('required');
    expect(backend.callsOf(COMMANDS.saveServer)).toEqual([]);
    expect(screen.getByTestId('server-form')).toBeTruthy();
  });

  it('edits an existing entry with its name fixed', async () => {
    const backend = setup();
    await waitFor(() => expect(screen.getByTestId('edit-fs')).toBeTruthy());
    await fireEvent.click(screen.getByTestId('edit-fs'));
    await waitFor(() => expect(input('server-command').value).toBe('node'));
    expect(input('server-name').disabled).toBe(true);
    expect((screen.getByTestId('server-args') as HTMLTextAreaElement).value).toBe('fs.js');
    await fireEvent.input(screen.getByTestId('server-args'), { target: { value: 'fs.js\n--root\n/tmp' } });
    await fireEvent.click(screen.getByTestId('server-save'));
    await waitFor(() => expect(backend.callsOf(COMMANDS.saveServer)).toHaveLength(1));
    expect(backend.callsOf(COMMANDS.saveServer)[0]).toEqual({
      name: 'fs',
      entry: { transport: 'stdio', command: 'node', args: ['fs.js', '--root', '/tmp'], env: {} },
    });
  });
});

describe('ServersView: who is connected', () => {
  it('lists the live sessions of each server, and says when there is none', async () => {
    const connected: ServerStatus = {
      ...fs,
      sessions: [
        { session: 'a', server: 'fs', client: { name: 'claude-code', version: '2.1.0' }, via: 'connect', pid: 4242, since_ms: 0 },
        { session: 'b', server: 'fs', client: { name: null, version: null }, via: 'http', pid: 1, since_ms: 0 },
        { session: 'c', server: 'fs', client: { name: 'cursor', version: '1.0' }, via: 'http', pid: 1, since_ms: 0 },
        { session: 'd', server: 'fs', client: { name: 'cursor', version: '1.0' }, via: 'http', pid: 1, since_ms: 0 },
      ],
    };
    const idle: ServerStatus = { ...fs, name: 'git', sessions: [] };
    const backend = new MockBackend({ servers: [connected, idle], entries: {} });
    render(ServersView, { props: { backend, pollMs: 0 } });
    await waitFor(() => expect(screen.getAllByTestId('server-card')).toHaveLength(2));
    const rows = screen.getByTestId('server-sessions').querySelectorAll('li');
    expect(rows).toHaveLength(3);
    expect(rows[0].textContent).toContain('claude-code 2.1.0');
    expect(rows[0].textContent).toContain('portcullis connect, pid 4242');
    expect(rows[1].textContent).toContain('2026, stateless');
    expect(rows[1].textContent).toContain('HTTP');
    expect(rows[2].textContent).toContain('cursor 1.0');
    expect(rows[2].textContent).toContain('HTTP · 2 sessions');
    expect(screen.getByTestId('server-no-sessions').textContent).toContain('No client connected');
  });
});
