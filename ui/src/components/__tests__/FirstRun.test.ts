// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { MockBackend } from '../../lib/mock-backend';
import { demoData, makeApproval } from '../../lib/mock-data';

afterEach(() => cleanup());

const STARTED = {
  install_command: '/usr/bin/portcullis clients install claude-desktop --data-dir /d',
  connect_command: '/usr/bin/portcullis connect SERVER --data-dir /d',
  demo_server: 'demo-notes',
};

function fresh(demo_server: string | null = 'demo-notes') {
  const tryCall = makeApproval({ id: 'try-1', server: 'demo-notes', tool: 'write_note', arguments: { title: 't' } });
  const backend = new MockBackend({ gettingStarted: { ...STARTED, demo_server }, tryCall });
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

  it('without the demo server it says how to get one; the Servers link opens the Servers view', async () => {
    fresh(null);
    expect((await screen.findByTestId('first-run-no-demo')).textContent).toContain('scripts/demo.sh');
    expect(screen.queryByTestId('try-held-call')).toBeNull();
    await fireEvent.click(screen.getByTestId('first-run-open-servers'));
    expect(screen.getByTestId('tab-servers').getAttribute('aria-selected')).toBe('true');
  });

  it('is not shown once calls were audited', async () => {
    render(App, { props: { backend: new MockBackend(demoData(Date.now())) } });
    await waitFor(() => expect(screen.getByTestId('recent-list').textContent).not.toContain('Nothing yet'));
    expect(screen.queryByTestId('first-run')).toBeNull();
  });
});
