// The approval prompt's state: the queue of held calls, which one is shown, the countdown clock,
// and the decision buttons' effect. Held calls come from `list_approvals` and the
// ApprovalRequested / ApprovalResolved events.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { ApprovalChoice, PendingApproval } from '../lib/types';

/** How long a key press counts as "interacting" (pauses the countdown display). */
export const TYPING_PAUSE_MS = 4000;

export class PromptQueue {
  items = $state<PendingApproval[]>([]);
  index = $state(0);
  busy = $state(false);
  error = $state<string | null>(null);
  loaded = $state(false);
  /** The clock, ticked by `start()`; tests set it directly. */
  now = $state(0);

  hovering = $state(false);
  editing = $state(false);
  lastKeyMs = $state<number | null>(null);
  /** The displayed clock stops here while the person interacts. */
  private frozenAt = $state<number | null>(null);

  current = $derived(this.items.length ? this.items[Math.min(this.index, this.items.length - 1)] : null);
  position = $derived(this.items.length ? Math.min(this.index, this.items.length - 1) + 1 : 0);
  interacting = $derived(
    this.hovering || this.editing || (this.lastKeyMs !== null && this.now - this.lastKeyMs < TYPING_PAUSE_MS),
  );
  displayNow = $derived(this.frozenAt ?? this.now);
  remainingMs = $derived(this.current ? Math.max(0, this.current.expires_at_ms - this.displayNow) : 0);
  /** Time left in truth (the gateway's deadline does not pause). */
  realRemainingMs = $derived(this.current ? Math.max(0, this.current.expires_at_ms - this.now) : 0);

  private unlisten: Unlisten[] = [];
  /** Ids resolved while a list request was in flight must not come back from its answer. */
  private resolved = new Set<string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** A call asked for by id before it was queued. */
  private wanted: string | null = null;

  constructor(
    private backend: Backend,
    private clock: () => number = () => Date.now(),
  ) {
    this.now = clock();
  }

  /** Loads the held calls, subscribes to events and starts the clock (`tickMs` 0: no timer). */
  async start(tickMs = 250): Promise<void> {
    this.unlisten.push(
      await this.backend.on('ApprovalRequested', ({ approval }) => this.add(approval)),
      await this.backend.on('ApprovalResolved', ({ id }) => this.remove(id)),
      await this.backend.on('ShowApproval', ({ id }) => this.show(id)),
    );
    await this.resync();
    this.loaded = true;
    if (tickMs > 0) this.timer = setInterval(() => this.tick(), tickMs);
  }

  /**
   * Replaces the queue with the gateway's list (at start, and when a hidden window comes back,
   * in case events were missed), staying on the call that was shown.
   */
  async resync(): Promise<void> {
    try {
      const list = await this.backend.listApprovals();
      const shownId = this.wanted ?? this.current?.id;
      this.items = [];
      for (const a of list) if (!this.resolved.has(a.id)) this.add(a);
      const i = shownId === undefined ? -1 : this.items.findIndex((a) => a.id === shownId);
      if (i !== -1 && shownId === this.wanted) this.wanted = null;
      this.index = i === -1 ? Math.min(this.index, Math.max(0, this.items.length - 1)) : i;
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  tick(now = this.clock()): void {
    this.now = now;
    this.syncFreeze();
  }

  private syncFreeze(): void {
    if (this.interacting) this.frozenAt ??= this.now;
    else this.frozenAt = null;
  }

  setHovering(on: boolean): void {
    this.hovering = on;
    this.syncFreeze();
  }

  setEditing(on: boolean): void {
    this.editing = on;
    this.syncFreeze();
  }

  keyActivity(): void {
    this.lastKeyMs = this.now;
    this.syncFreeze();
  }

  /** Adds a held call in request order; a call already queued is replaced. */
  add(approval: PendingApproval): void {
    if (this.resolved.has(approval.id)) return;
    const shownId = this.current?.id;
    const rest = this.items.filter((a) => a.id !== approval.id);
    rest.push(approval);
    rest.sort((a, b) => a.requested_at_ms - b.requested_at_ms || a.id.localeCompare(b.id));
    this.items = rest;
    // Keep showing the call the person is looking at, unless this is the one they asked for.
    if (approval.id === this.wanted) this.show(approval.id);
    else if (shownId !== undefined) this.index = Math.max(0, this.items.findIndex((a) => a.id === shownId));
  }

  /**
   * Shows the call `id` (the tray's or a notification's entry for it was clicked); a call not
   * queued yet is shown when it arrives.
   */
  show(id: string): void {
    const i = this.items.findIndex((a) => a.id === id);
    this.wanted = i === -1 ? id : null;
    if (i !== -1) this.index = i;
  }

  /** Drops a call (decided here or elsewhere); the view stays on the same place in the queue. */
  remove(id: string): void {
    this.resolved.add(id);
    if (this.resolved.size > 1000) this.resolved.delete(this.resolved.values().next().value!);
    const i = this.items.findIndex((a) => a.id === id);
    if (i === -1) return;
    this.items = this.items.filter((a) => a.id !== id);
    if (i < this.index) this.index--;
    this.index = Math.max(0, Math.min(this.index, this.items.length - 1));
  }

  next(): void {
    if (this.index < this.items.length - 1) this.index++;
  }

  previous(): void {
    if (this.index > 0) this.index--;
  }

  /** Decides the shown call (or the call `id`). Returns whether the gateway took the decision. */
  async decide(choice: ApprovalChoice, id?: string): Promise<boolean> {
    const target = id === undefined ? this.current : this.items.find((a) => a.id === id);
    if (!target || this.busy) return false;
    this.busy = true;
    this.error = null;
    try {
      await this.backend.decideApproval(target.id, choice);
      this.remove(target.id);
      return true;
    } catch (e) {
      this.error = errorText(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  approve(scope: 'once' | 'session' | 'always'): Promise<boolean> {
    return this.decide({ approve: scope });
  }

  deny(always = false, reason: string | null = null): Promise<boolean> {
    const r = reason?.trim() ? reason.trim() : null;
    return this.decide({ deny: { reason: r, always } });
  }
}
