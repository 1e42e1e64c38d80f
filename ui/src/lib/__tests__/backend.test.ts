// @vitest-environment jsdom
// The IPC contract of the Tauri backend: command names, argument keys and event names, as the
// Rust side must provide them (checked through Tauri's own IPC mock).
import { afterEach, describe, expect, it } from 'vitest';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import { BackendError, TauriBackend } from '../backend';
import type { ApprovalResolved } from '../types';

afterEach(() => clearMocks());

function record(answer: (cmd: string) => unknown = () => null) {
  const calls: [string, unknown][] = [];
  mockIPC(
    (cmd, args) => {
      if (cmd.startsWith('plugin:event|')) return 0;
      calls.push([cmd, args]);
      return answer(cmd);
    },
    { shouldMockEvents: true },
  );
  return calls;
}

describe('TauriBackend', () => {
  it('invokes verb_noun commands with the documented argument keys', async () => {
    const calls = record((cmd) => (cmd === 'suggest_export_path' ? '/d/a.csv' : cmd.startsWith('list_') ? [] : null));
    const b = new TauriBackend();
    const settings = { approval_timeout_secs: 45, notifications: true, theme: 'dark' as const };
    await b.listApprovals();
    await b.decideApproval('7', { approve: 'session' });
    await b.decideApproval('8', { deny: { reason: 'no', always: true } });
    await b.queryAudit({ server: 's', before: [10, 3] }, 50);
    expect(await b.suggestExportPath('csv')).toBe('/d/a.csv');
    await b.saveAuditExport({}, 'jsonl', '/d/a.jsonl', true);
    await b.auditHistogram({ since_ms: 1 }, 60_000);
    await b.listServers();
    await b.restartServer('s');
    await b.listTools('s');
    await b.readPolicy('s');
    await b.validatePolicy('s', '{}');
    await b.savePolicy('s', '{}');
    await b.getSettings();
    await b.setSettings(settings);
    await b.setPaused(true);
    await b.getAutostart();
    await b.setAutostart(true);
    await b.listChangedTools();
    await b.acceptTool('fs', 'read_file', 'sha256:2222');
    await b.generatePolicy('fs');
    await b.listClients();
    await b.previewClientInstall('cursor');
    await b.installClient('cursor', 'the preview');
    await b.previewClientUninstall('cursor');
    await b.uninstallClient('cursor');
    expect(calls).toEqual([
      ['list_approvals', {}],
      ['decide_approval', { id: '7', choice: { approve: 'session' } }],
      ['decide_approval', { id: '8', choice: { deny: { reason: 'no', always: true } } }],
      ['query_audit', { filter: { server: 's', before: [10, 3] }, limit: 50 }],
      ['suggest_export_path', { format: 'csv' }],
      ['save_audit_export', { filter: {}, format: 'jsonl', path: '/d/a.jsonl', replace: true }],
      ['audit_histogram', { filter: { since_ms: 1 }, bucket_ms: 60_000 }],
      ['list_servers', {}],
      ['restart_server', { server: 's' }],
      ['list_tools', { server: 's' }],
      ['read_policy', { server: 's' }],
      ['validate_policy', { server: 's', text: '{}' }],
      ['save_policy', { server: 's', text: '{}' }],
      ['get_settings', {}],
      ['set_settings', { settings }],
      ['set_paused', { paused: true }],
      ['get_autostart', {}],
      ['set_autostart', { enabled: true }],
      ['list_changed_tools', {}],
      ['accept_tool', { server: 'fs', tool: 'read_file', digest: 'sha256:2222' }],
      ['generate_policy', { server: 'fs' }],
      ['list_clients', {}],
      ['preview_client_install', { client: 'cursor' }],
      ['install_client', { client: 'cursor', preview: 'the preview' }],
      ['preview_client_uninstall', { client: 'cursor' }],
      ['uninstall_client', { client: 'cursor' }],
    ]);
  });

  it('turns an IPC error {code, message} into a BackendError', async () => {
    mockIPC(() => {
      throw { code: 'unknown_approval', message: 'no pending approval 9' };
    });
    const err = await new TauriBackend().decideApproval('9', { approve: 'once' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err).toMatchObject({ code: 'unknown_approval', message: 'no pending approval 9' });
  });

  it('delivers events by their PascalCase names', async () => {
    record();
    const b = new TauriBackend();
    const got: ApprovalResolved[] = [];
    const unlisten = await b.on('ApprovalResolved', (p) => got.push(p));
    const payload = { id: '1', decision: 'approved', decided_by: 'user', scope: 'once' as const };
    await emit('ApprovalResolved', payload);
    await emit('ApprovalRequested', { approval: {} });
    expect(got).toEqual([payload]);
    unlisten();
  });
});
