// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import GrantPanel from '../GrantPanel.svelte';
import { MockBackend } from '../../lib/mock-backend';
import { makeApproval } from '../../lib/mock-data';

afterEach(() => cleanup());

function setup() {
  const args = { path: '/home/me/notes/todo.md' };
  const backend = new MockBackend({ approvals: [makeApproval({ id: 'a1', tool: 'write_file', arguments: args })] });
  const ondecide = vi.fn();
  render(GrantPanel, { props: { backend, id: 'a1', args, busy: false, ondecide, oncancel: () => {} } });
  return { backend, ondecide };
}

describe('GrantPanel: "always" with a condition', () => {
  it.each([
    [true, 'grant-allow', { allow: true, reason: null }],
    [false, 'grant-deny', { allow: false, reason: 'not my notes' }],
  ])('allow=%s previews the rule as it will be written, then writes it', async (allow, testid, want) => {
    const { backend, ondecide } = setup();
    await fireEvent.click(screen.getByTestId(testid));
    await fireEvent.click(screen.getByTestId('grant-which-condition'));
    await fireEvent.click(screen.getByTestId('grant-for-always'));
    if (!allow) await fireEvent.input(screen.getByTestId('grant-reason'), { target: { value: 'not my notes' } });
    const when = { 'arguments.path': { path_under: '/home/me/notes' } };
    expect(screen.queryByTestId('grant-unavailable')).toBeNull();
    const name = await screen.findByTestId('grant-preview-rule-name');
    expect(name.textContent).toContain('tools.write_file.rules[0]');
    expect(name.textContent).toContain('/home/me/notes');
    expect(screen.getByTestId('grant-preview-rule').textContent).toContain('path_under');
    const choice = { rule: { ...want, when } };
    await waitFor(() => expect(backend.callsOf('dry_run_approval').at(-1)).toEqual({ id: 'a1', choice }));
    expect(screen.getByTestId('grant-confirm').textContent).toContain('always');
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    expect(ondecide).toHaveBeenCalledWith(choice);
  });
});
