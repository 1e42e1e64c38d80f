// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval, makePinChange } from '../../../lib/mock-data';

const T0 = 1_750_000_000_000;

afterEach(() => cleanup());

function setup(pinChange: ReturnType<typeof makePinChange> | null) {
  const approval = makeApproval({
    id: 'p1',
    tool: 'read_file',
    rule: 'pin:changed',
    requested_at_ms: T0,
    expires_at_ms: T0 + 45_000,
    pin_change: pinChange,
  });
  const backend = new MockBackend({ approvals: [approval] });
  const clock = () => T0 + 1000;
  render(Prompt, { props: { backend, clock, tickMs: 0 } });
  return backend;
}

describe('Prompt on a changed tool', () => {
  it('shows the banner with the changed fields, the description old → new and the other differences', async () => {
    const change = makePinChange();
    setup(change);
    await screen.findByTestId('prompt-call');
    const banner = screen.getByTestId('pin-change');
    expect(banner.textContent).toContain("This tool's definition changed since you first allowed it");
    expect(screen.getByTestId('pin-change-fields').textContent).toBe(change.fields.join(', '));
    const oldDesc = (change.old as { description: string }).description;
    const newDesc = (change.new as { description: string }).description;
    expect(screen.getByTestId('pin-change-old').textContent).toContain(oldDesc);
    expect(screen.getByTestId('pin-change-new').textContent).toContain(newDesc);
    const lines = [...screen.getByTestId('pin-change-diff').querySelectorAll('li')].map((li) => li.textContent);
    // Every difference but the description (shown whole above) has its line, in order.
    const expected = change.diff.filter((d) => d.path !== 'description');
    expect(lines).toHaveLength(expected.length);
    expected.forEach((d, i) => expect(lines[i]).toMatch(new RegExp(`^${d.path.replace(/[.[\]"]/g, '\\$&')}: `)));
    expect(screen.getByTestId('approve-always').textContent).toBe('Trust the new definition');
  });

  it('"Trust the new definition" sends the always choice (the gateway accepts the new pin on it)', async () => {
    const backend = setup(makePinChange());
    await screen.findByTestId('prompt-call');
    await fireEvent.click(screen.getByTestId('approve-always'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'p1', choice: { approve: 'always' } }]));
  });

  it('an ordinary held call has no banner and keeps "Always allow"', async () => {
    setup(null);
    await screen.findByTestId('prompt-call');
    expect(screen.queryByTestId('pin-change')).toBeNull();
    expect(screen.getByTestId('approve-always').textContent).toContain('Always allow');
  });

  it('a change without a new description lists only the differences', async () => {
    const change = makePinChange({
      fields: ['inputSchema'],
      diff: [{ path: 'inputSchema.properties.cmd', change: 'added', old: null, new: { type: 'string' } }],
    });
    setup(change);
    await screen.findByTestId('prompt-call');
    expect(screen.queryByTestId('pin-change-description')).toBeNull();
    const lines = [...screen.getByTestId('pin-change-diff').querySelectorAll('li')].map((li) => li.textContent);
    expect(lines).toEqual(['inputSchema.properties.cmd: + {"type":"string"}']);
  });
});
