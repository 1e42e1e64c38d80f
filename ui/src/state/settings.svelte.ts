// App settings (approval timeout, notifications, theme), start at login and the pause switch.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { Settings, Theme } from '../lib/types';

/** Applies a theme to the page: `data-theme` on <html>, read by the CSS variables. */
export function applyTheme(theme: Theme, root: HTMLElement = document.documentElement): void {
  root.dataset.theme = theme;
}

export class SettingsState {
  settings = $state<Settings | null>(null);
  paused = $state(false);
  /** Start at login; `null` while unknown or where the platform has no mechanism yet. */
  autostart = $state<boolean | null>(null);
  autostartError = $state<string | null>(null);
  error = $state<string | null>(null);
  saved = $state(false);

  private unlisten: Unlisten | null = null;

  constructor(private backend: Backend) {}

  /** Reads the settings and the pause switch, and follows the switch (the tray flips it too). */
  async load(): Promise<void> {
    this.unlisten ??= await this.backend.on('PauseChanged', ({ paused }) => (this.paused = paused));
    try {
      this.settings = await this.backend.getSettings();
      applyTheme(this.settings.theme);
      this.paused = await this.backend.getPaused();
    } catch (e) {
      this.error = errorText(e);
    }
    try {
      this.autostart = await this.backend.getAutostart();
    } catch (e) {
      this.autostartError = errorText(e);
    }
  }

  async setAutostart(enabled: boolean): Promise<void> {
    const before = this.autostart;
    this.autostart = enabled;
    try {
      await this.backend.setAutostart(enabled);
      this.autostartError = null;
    } catch (e) {
      this.autostart = before;
      this.autostartError = errorText(e);
    }
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = null;
  }

  async update(change: Partial<Settings>): Promise<void> {
    if (!this.settings) return;
    const next = { ...this.settings, ...change };
    if (!Number.isInteger(next.approval_timeout_secs) || next.approval_timeout_secs < 1) {
      this.error = 'The approval timeout is a whole number of seconds, at least 1.';
      return;
    }
    const before = this.settings;
    this.settings = next;
    applyTheme(next.theme);
    try {
      await this.backend.setSettings(next);
      this.error = null;
      this.saved = true;
    } catch (e) {
      this.settings = before;
      applyTheme(before.theme);
      this.error = errorText(e);
    }
  }

  async setPaused(paused: boolean): Promise<void> {
    const before = this.paused;
    this.paused = paused;
    try {
      await this.backend.setPaused(paused);
    } catch (e) {
      this.paused = before;
      this.error = errorText(e);
    }
  }
}
