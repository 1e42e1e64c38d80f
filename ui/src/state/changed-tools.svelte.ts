// The tools whose server changed their definition since they were pinned (every call to them is
// held until a person accepts the new definition). Loaded when the Policies view opens, again
// whenever a call is held or resolved for that reason (a prompt's "Trust the new definition"
// accepts one too), and after each Accept here.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { ChangedTool } from '../lib/types';

export class ChangedTools {
  items = $state<ChangedTool[]>([]);
  error = $state<string | null>(null);
  /** `server/tool` being accepted. */
  busy = $state<string | null>(null);

  private unlisten: Unlisten[] = [];

  constructor(private backend: Backend) {}

  async start(): Promise<void> {
    this.unlisten.push(
      await this.backend.on('ApprovalRequested', ({ approval }) => {
        if (approval.pin_change) void this.load();
      }),
      await this.backend.on('ApprovalResolved', () => {
        if (this.items.length) void this.load();
      }),
    );
    await this.load();
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
  }

  async load(): Promise<void> {
    try {
      this.items = await this.backend.listChangedTools();
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
  }

  forServer(server: string | null): ChangedTool[] {
    return this.items.filter((c) => c.server === server);
  }

  /** Accepts the definition shown; a tool that changed again stays listed with its new change. */
  async accept(item: ChangedTool): Promise<boolean> {
    const key = `${item.server}/${item.tool}`;
    this.busy = key;
    try {
      await this.backend.acceptTool(item.server, item.tool, item.change.new_digest);
      await this.load();
      return true;
    } catch (e) {
      // The list is read again (a tool that changed again shows its new change), and the
      // reason stays on screen.
      const reason = errorText(e);
      await this.load();
      this.error = reason;
      return false;
    } finally {
      this.busy = null;
    }
  }
}
