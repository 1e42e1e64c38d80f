// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import SettingsView from '../SettingsView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { BackendError } from '../../../lib/backend';
import { SettingsState } from '../../../state/settings.svelte';

afterEach(() => cleanup());

async function setup(backend: MockBackend) {
  const settings = new SettingsState(backend);
  await settings.load();
  render(SettingsView, { props: { settings } });
  return screen.getByTestId('setting-autostart') as HTMLInputElement;
}

describe('SettingsView start at login', () => {
  it('shows the entry and turns it on and off through set_autostart', async () => {
    const backend = new MockBackend({});
    const box = await setup(backend);
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(false);
    await fireEvent.click(box);
    await waitFor(() => expect(backend.autostart).toBe(true));
    await fireEvent.click(box);
    await waitFor(() => expect(backend.autostart).toBe(false));
  });

  it('says why when the platform has no autostart, and leaves the box off', async () => {
    const backend = new MockBackend({});
    backend.getAutostart = async () => {
      throw new BackendError('unsupported', 'start at login is not supported on this platform yet');
    };
    const box = await setup(backend);
    expect(box.disabled).toBe(true);
    expect(screen.getByTestId('setting-autostart-error').textContent).toContain('not supported');
  });
});
