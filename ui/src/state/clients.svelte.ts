// The Servers view's MCP clients (Claude Desktop, Cursor, Claude Code, VS Code): their state,
// and install / uninstall, each shown first and applied only after the person confirms what
// they saw (install sends the preview back; the gateway refuses a plan that differs from it).

import { errorText, type Backend } from '../lib/backend';
import type { ClientState, InstallPreview } from '../lib/types';

/** What is waiting for the person's confirmation. */
export type Pending =
  | { kind: 'install'; client: string; preview: InstallPreview }
  | { kind: 'uninstall'; client: string; description: string };

export class ClientsState {
  clients = $state<ClientState[]>([]);
  loaded = $state(false);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);
  pending = $state<Pending | null>(null);
  busy = $state(false);

  constructor(
    private backend: Backend,
    /** Called after a change was applied (imported servers appear in the list). */
    private onApplied: () => void = () => {},
  ) {}

  async load(): Promise<void> {
    try {
      this.clients = await this.backend.listClients();
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
    this.loaded = true;
  }

  private async run(step: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      await step();
    } catch (e) {
      this.error = errorText(e);
    } finally {
      this.busy = false;
    }
  }

  previewInstall(client: string): Promise<void> {
    return this.run(async () => {
      const preview = await this.backend.previewClientInstall(client);
      this.pending = { kind: 'install', client, preview };
    });
  }

  previewUninstall(client: string): Promise<void> {
    return this.run(async () => {
      const { description } = await this.backend.previewClientUninstall(client);
      this.pending = { kind: 'uninstall', client, description };
    });
  }

  cancel(): void {
    this.pending = null;
  }

  /** Applies what is shown. A refusal keeps it shown, with the reason. */
  confirm(): Promise<void> {
    const pending = this.pending;
    if (!pending) return Promise.resolve();
    const name = this.clients.find((c) => c.id === pending.client)?.name ?? pending.client;
    return this.run(async () => {
      if (pending.kind === 'install') {
        const done = await this.backend.installClient(pending.client, pending.preview.preview);
        this.notice = `${name} now reaches ${done.routed.length} server${done.routed.length === 1 ? '' : 's'} through Portcullis; restart ${name} so it reads its new config.${policyNote(done)}`;
      } else {
        await this.backend.uninstallClient(pending.client);
        this.notice = `${name}'s config is put back; restart ${name} so it reads it.`;
      }
      this.pending = null;
      await this.load();
      this.onApplied();
    });
  }
}

/** What install did about policies: the starter policies written, and the servers left with none. */
function policyNote(done: InstallPreview): string {
  const written = done.policies.filter((p) => p.starter).map((p) => p.server);
  const none = done.policies.filter((p) => !p.starter && !p.exists).map((p) => p.server);
  let note = written.length ? ` Starter policy written for ${written.join(', ')} (Policies view).` : '';
  if (none.length) note += ` No policy for ${none.join(', ')}: every call asks you until it has one.`;
  return note;
}
