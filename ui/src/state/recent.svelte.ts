// The approvals tab's "recent decisions": the newest audit rows, kept fresh by AuditAppended.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import { mergeNewer } from '../lib/audit-query';
import type { AuditRow } from '../lib/types';

export class RecentDecisions {
  rows = $state<AuditRow[]>([]);
  error = $state<string | null>(null);
  /** The first answer came: an empty list means nothing was audited yet, not "still loading". */
  loaded = $state(false);
  private unlisten: Unlisten[] = [];

  constructor(
    private backend: Backend,
    readonly limit = 15,
  ) {}

  async start(): Promise<void> {
    this.unlisten.push(await this.backend.on('AuditAppended', () => void this.refresh()));
    await this.refresh();
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
  }

  async refresh(): Promise<void> {
    try {
      const head = await this.backend.queryAudit({}, this.limit);
      this.rows = mergeNewer(this.rows, head).slice(0, this.limit);
      this.error = null;
      this.loaded = true;
    } catch (e) {
      this.error = errorText(e);
    }
  }
}
