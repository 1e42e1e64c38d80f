// The servers tab: each upstream's state, its last stderr lines and its policy's health.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { ServerStatus } from '../lib/types';

export class ServersState {
  servers = $state<ServerStatus[]>([]);
  error = $state<string | null>(null);
  restarting = $state<string[]>([]);
  loaded = $state(false);

  private unlisten: Unlisten[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private backend: Backend) {}

  async start(pollMs = 5000): Promise<void> {
    const refresh = () => void this.refresh();
    this.unlisten.push(await this.backend.on('PolicyReloaded', refresh), await this.backend.on('PolicyRejected', refresh));
    await this.refresh();
    if (pollMs > 0) this.timer = setInterval(refresh, pollMs);
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    try {
      this.servers = await this.backend.listServers();
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
    this.loaded = true;
  }

  async restart(server: string): Promise<void> {
    if (this.restarting.includes(server)) return;
    this.restarting = [...this.restarting, server];
    try {
      await this.backend.restartServer(server);
      this.error = null;
    } catch (e) {
      this.error = `${server}: ${errorText(e)}`;
    } finally {
      this.restarting = this.restarting.filter((s) => s !== server);
    }
    await this.refresh();
  }
}
