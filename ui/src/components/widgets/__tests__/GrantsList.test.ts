// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../../views/App.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import type { StandingGrant } from '../../../lib/types';

afterEach(() => cleanup());

const NOW = 1_750_000_000_000;

function grant(over: Partial<StandingGrant>): StandingGrant {
  return {
    id: 'g1',
    server: 'fs',
    tool: 'write_file',
    effect: 'allow',
    reason: null,
    session: null,
    which: 'any',
    when: null,
    digest: null,
    expires_at_ms: NOW + 300_000,
    created_at_ms: NOW,
    ...over,
  };
}

function withGrants(grants: StandingGrant[]) {
  const backend = new MockBackend({ grants }, { now: () => NOW });
  render(App, { props: { backend } });
  return backend;
}

describe('Standing grants', () => {
  it('lists each grant in force in words: effect, tool, which calls, whose, until when', async () => {
    withGrants([
      grant({}),
      grant({ id: 'g2', effect: 'deny', session: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', which: 'when', when: { path: { path_under: '/tmp' } }, expires_at_ms: null }),
      grant({ id: 'old', expires_at_ms: NOW - 1 }),
    ]);
    const rows = await screen.findAllByTestId('grant');
    expect(rows.map((r) => r.getAttribute('data-id'))).toEqual(['g1', 'g2']);
    expect(rows[0].textContent).toContain('Allows');
    expect(rows[0].textContent).toContain('any arguments');
    expect(rows[0].textContent).toContain('every session');
    expect(rows[1].textContent).toContain('Denies');
    expect(rows[1].textContent).toContain('path_under');
    expect(rows[1].textContent).toContain('until Portcullis restarts');
    expect(rows[1].textContent).not.toContain('a1b2c3d4e5f60718293a4b5c6d7e8f90');
  });

  it('Revoke ends the grant in the gateway and takes it off the list', async () => {
    const backend = withGrants([grant({}), grant({ id: 'g2', tool: 'move_file' })]);
    const rows = await screen.findAllByTestId('grant');
    await fireEvent.click(rows[0].querySelector('[data-testid="grant-revoke"]')!);
    await waitFor(() => expect(screen.getAllByTestId('grant').map((r) => r.getAttribute('data-id'))).toEqual(['g2']));
    expect(backend.callsOf('revoke_grant')).toEqual([{ id: 'g1' }]);
  });

  it('is not shown while no grant is in force', async () => {
    const backend = withGrants([]);
    await waitFor(() => expect(backend.callsOf('list_grants').length).toBeGreaterThan(0));
    expect(screen.queryByTestId('grants')).toBeNull();
  });
});
