// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import GrantPanel from '../GrantPanel.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval } from '../../../lib/mock-data';

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

  it('the condition is built in the shared builder: started from the call, then edited', async () => {
    const { backend, ondecide } = setup();
    await fireEvent.click(screen.getByTestId('grant-which-condition'));
    await fireEvent.click(screen.getByTestId('grant-for-always'));
    expect((screen.getByTestId('grant-cond-argument-0') as HTMLInputElement).value).toBe('path');
    expect((screen.getByTestId('grant-cond-op-0') as HTMLSelectElement).value).toBe('path_under');
    expect((screen.getByTestId('grant-cond-value-0') as HTMLInputElement).value).toBe('/home/me/notes');
    await fireEvent.change(screen.getByTestId('grant-cond-op-0'), { target: { value: 'glob' } });
    await fireEvent.input(screen.getByTestId('grant-cond-value-0'), { target: { value: '/home/me/*.md' } });
    await fireEvent.click(screen.getByTestId('grant-cond-add'));
    await fireEvent.input(screen.getByTestId('grant-cond-argument-1'), { target: { value: 'client.name' } });
    // Not a condition yet: the second row has no value, and nothing can be confirmed.
    expect(screen.getByTestId('grant-cond-error').textContent).toContain('client.name is');
    expect((screen.getByTestId('grant-confirm') as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(screen.getByTestId('grant-cond-value-1'), { target: { value: 'cursor' } });
    const when = { 'arguments.path': { glob: '/home/me/*.md' }, 'client.name': { eq: 'cursor' } };
    const choice = { rule: { allow: true, reason: null, when } };
    await waitFor(() => expect(backend.callsOf('dry_run_approval').at(-1)).toEqual({ id: 'a1', choice }));
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    expect(ondecide).toHaveBeenCalledWith(choice);
  });

  it('picking another condition cut from the call starts the builder over', async () => {
    const args = { path: '/a/b/c.txt' };
    const backend = new MockBackend({ approvals: [makeApproval({ id: 'a1', tool: 'write_file', arguments: args })] });
    render(GrantPanel, { props: { backend, id: 'a1', args, busy: false, ondecide: () => {}, oncancel: () => {} } });
    await fireEvent.click(screen.getByTestId('grant-which-condition'));
    const start = screen.getByTestId('grant-condition') as HTMLSelectElement;
    expect(Array.from(start.options).map((o) => o.textContent)).toEqual(['path under /a/b', 'path under /a']);
    await fireEvent.change(start, { target: { value: '1' } });
    expect((screen.getByTestId('grant-cond-value-0') as HTMLInputElement).value).toBe('/a');
  });
});
