// The standing grants in force (DESIGN §5), for the approvals tab: listed from the gateway,
// refreshed when a decision may have made one, revocable. Expired grants drop out at the next
// refresh; the gateway no longer applies them either way.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { StandingGrant } from '../lib/types';

/** How often the list is read again while the tab is open, so expired grants leave it. */
export const GRANTS_REFRESH_MS = 30_000;

export class StandingGrants {
  rows = $state<StandingGrant[]>([]);
  error = $state<string | null>(null);
  busy = $state(false);
  private unlisten: Unlisten[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private backend: Backend) {}

  /** `refreshMs` 0: no timer (tests drive `refresh`). */
  async start(refreshMs = GRANTS_REFRESH_MS): Promise<void> {
    // A decision ends a held call; a grant decision also adds a grant.
    this.unlisten.push(await this.backend.on('ApprovalResolved', () => void this.refresh()));
    await this.refresh();
    if (refreshMs > 0) this.timer = setInterval(() => void this.refresh(), refreshMs);
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    try {
      this.rows = await this.backend.listGrants();
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
  }

  /** Ends the grant at once; later calls it covered are decided by the policy again. */
  async revoke(id: string): Promise<boolean> {
    this.busy = true;
    try {
      await this.backend.revokeGrant(id);
      return true;
    } catch (e) {
      this.error = errorText(e);
      return false;
    } finally {
      this.busy = false;
      await this.refresh();
    }
  }
}

/** "Allows" / "Denies" a person reads, for the grant's effect. */
export function effectText(g: StandingGrant): string {
  return g.effect === 'allow' ? 'Allows' : 'Denies';
}

/** Which calls the grant covers, in words. */
export function whichText(g: StandingGrant): string {
  if (g.which === 'exact') return 'this exact call';
  if (g.which === 'any') return 'any arguments';
  return `calls where ${JSON.stringify(g.when)}`;
}
