// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { tick } from 'svelte';
import App from '../App.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { BackendError } from '../../../lib/backend';
import { demoData, makeApproval } from '../../../lib/mock-data';
import { demoClock } from '../../../lib/demo';

afterEach(() => cleanup());

function setup(tab: 'approvals' | 'servers' | 'settings' = 'approvals') {
  const now = Date.now();
  const backend = new MockBackend(demoData(now));
  render(App, { props: { backend, initialTab: tab, clock: demoClock } });
  return backend;
}

describe('Main window', () => {
  it('says once that Portcullis is not running, and not that no calls are waiting', async () => {
    const reason = 'Portcullis is not running: the config file is invalid';
    const asked = new Set<string>();
    const down = (what: string) => () => {
      asked.add(what);
      return Promise.reject(new BackendError('not_running', reason));
    };
    const backend = new MockBackend(demoData(Date.now()));
    Object.assign(backend, { listApprovals: down('approvals'), listGrants: down('grants'), queryAudit: down('audit') });
    render(App, { props: { backend, initialTab: 'approvals' } });
    // Every part of the view has asked and been refused; then its text settles.
    await waitFor(() => expect(asked.size).toBe(3));
    await waitFor(() => expect(document.body.textContent).toContain(reason));
    await tick();
    expect(document.body.textContent!.split(reason).length - 1).toBe(1);
    expect(screen.queryByTestId('approvals-empty')).toBeNull();
    expect(screen.queryByTestId('grants-error')).toBeNull();
  });

  it('counts pending calls on the Approvals tab and decides them inline', async () => {
    const backend = setup();
    // The demo holds three tool calls, three requests at other doors and a held answer.
    await waitFor(() => expect(screen.getByTestId('pending-count').textContent).toBe('7'));
    const first = screen.getAllByTestId('pending-item')[0];
    await fireEvent.click(first.querySelector('[data-testid="pending-approve"]')!);
    await waitFor(() => expect(screen.getByTestId('pending-count').textContent).toBe('6'));
    expect(backend.callsOf('decide_approval')).toEqual([{ id: first.dataset.id, choice: { approve: 'once' } }]);
    // The decision shows up in "recent decisions" through AuditAppended.
    await waitFor(() => expect(screen.getByTestId('recent-list').textContent).toContain('approved'));

    backend.hold(makeApproval({ id: 'new' }));
    await waitFor(() => expect(screen.getByTestId('pending-count').textContent).toBe('7'));
  });

  it('switches tabs', async () => {
    setup();
    await fireEvent.click(screen.getByTestId('tab-audit'));
    expect(await screen.findByTestId('audit-filters')).toBeTruthy();
    await fireEvent.click(screen.getByTestId('tab-policies'));
    expect(await screen.findByTestId('policy-editor')).toBeTruthy();
  });

  it('Servers: state, stderr, and restart_server', async () => {
    const backend = setup('servers');
    const cards = await screen.findAllByTestId('server-card');
    expect(cards.map((c) => [c.dataset.server, c.querySelector('[data-testid="server-state"]')!.textContent])).toEqual([
      ['filesystem', 'running'],
      ['everything', 'running'],
      ['shell', 'error'],
    ]);
    expect(cards[2].querySelector('[data-testid="server-stderr"]')!.textContent).toContain('ModuleNotFoundError');
    await fireEvent.click(screen.getByTestId('restart-shell'));
    await waitFor(() => expect(screen.getAllByTestId('server-state')[2].textContent).toBe('running'));
    expect(backend.callsOf('restart_server')).toEqual([{ server: 'shell' }]);
  });

  it('Settings: saves changes and applies the theme; pause calls set_paused', async () => {
    const backend = setup('settings');
    const theme = await screen.findByTestId('setting-theme');
    await fireEvent.change(theme, { target: { value: 'dark' } });
    await waitFor(() => expect(document.documentElement.dataset.theme).toBe('dark'));
    await fireEvent.change(screen.getByTestId('setting-timeout'), { target: { value: '90' } });
    await fireEvent.change(screen.getByTestId('setting-timeout'), { target: { value: '0' } });
    expect(screen.getByTestId('settings-error').textContent).toContain('at least 1');
    await fireEvent.click(screen.getByTestId('setting-paused'));
    await waitFor(() => expect(screen.getByTestId('paused-indicator')).toBeTruthy());
    expect(backend.callsOf('set_settings')).toEqual([
      { settings: { approval_timeout_secs: 45, notifications: true, theme: 'dark' } },
      { settings: { approval_timeout_secs: 90, notifications: true, theme: 'dark' } },
    ]);
    expect(backend.callsOf('set_paused')).toEqual([{ paused: true }]);
  });

  it('shows the pause switch the gateway has, follows the tray, and resumes from the banner', async () => {
    const backend = new MockBackend(demoData(Date.now()));
    backend.paused = true;
    render(App, { props: { backend } });
    await waitFor(() => expect(screen.getByTestId('paused-banner').textContent).toContain('denied without asking'));
    // The tray (elsewhere) resumes: the event clears the banner.
    backend.emit('PauseChanged', { paused: false });
    await waitFor(() => expect(screen.queryByTestId('paused-banner')).toBeNull());
    backend.emit('PauseChanged', { paused: true });
    await fireEvent.click(await screen.findByTestId('resume'));
    await waitFor(() => expect(screen.queryByTestId('paused-banner')).toBeNull());
    expect(backend.callsOf('set_paused')).toEqual([{ paused: false }]);
    expect(backend.paused).toBe(false);
  });
});

describe('One word for the one who decides', () => {
  const VALUES = ['policy', 'user', 'timeout', 'client', 'gateway'];

  it('every view says "user" (as the CLI does), never "person"; decided_by reads the same in Approvals and Audit', async () => {
    const backend = setup();
    expect((await backend.queryAudit({}, 500)).some((r) => r.decided_by === 'user'), 'the demo data has a call decided by the user').toBe(true);
    const recentBy = () => [...screen.getByTestId('recent-list').querySelectorAll('tbody tr')].map((r) => r.children[3]?.textContent);
    await waitFor(() => expect(recentBy().length).toBeGreaterThan(1));
    expect(recentBy().every((by) => VALUES.includes(by ?? '')), `Approvals' "By": ${recentBy()}`).toBe(true);
    for (const tab of ['approvals', 'policies', 'audit', 'servers', 'settings']) {
      await fireEvent.click(screen.getByTestId(`tab-${tab}`));
      await tick();
      expect(document.body.textContent, `the ${tab} view`).not.toMatch(/\bperson|\bpeople\b/i);
    }
    await fireEvent.click(screen.getByTestId('tab-audit'));
    const auditBy = () => screen.queryAllByTestId('audit-row').map((r) => r.querySelectorAll('[role="gridcell"]')[3]?.textContent);
    await waitFor(() => expect(auditBy()).toContain('user'));
    expect(auditBy().every((by) => VALUES.includes(by ?? '')), `Audit's "By": ${auditBy()}`).toBe(true);
  });
});
