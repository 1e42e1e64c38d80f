// The approval prompt's state: the queue of held calls, which one is shown, the countdown clock,
// and the decision buttons' effect. Held calls come from `list_approvals` and the
// ApprovalRequested / ApprovalExtended / ApprovalResolved events.
//
// The countdown is honest (DESIGN §5): it always shows the gateway's deadline (`expires_at_ms`).
// Interacting with the prompt does not freeze the display; it asks the gateway for more time
// (`extend_approval`), and the new deadline comes back in the answer and in ApprovalExtended.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import type { ApprovalChoice, ApprovalResolved, DecisionAnswer, PendingApproval, PolicyWrite } from '../lib/types';
import { sameCall } from '../lib/same-call';
import { fitsHeldAnswer, isHeldAnswer } from '../lib/held-answer';

/** Interacting with less than this left asks the gateway for more time… */
export const INTERACT_BELOW_MS = 30_000;
/** …so that this much is left (one extension per ~15 s of continuous interaction). */
export const INTERACT_TARGET_MS = 45_000;
/** What the Extend button adds. */
export const EXTEND_STEP_SECS = 60;
/** How long a call that timed out stays on screen saying so. */
export const TIMED_OUT_SHOWN_MS = 2500;

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
  /** Calls whose deadline the gateway will not move further (`approval.max_hold_secs`). */
  atMaxHold = $state<Record<string, true>>({});
  /** The call that just timed out, shown as "Timed out" for a moment before it leaves. */
  timedOut = $state<PendingApproval | null>(null);
  /** What the last decision also did ("also settled 3 waiting calls"). */
  notice = $state<string | null>(null);
  /** The policy write of the last "always", while it can still be undone. */
  undoable = $state<PolicyWrite | null>(null);
  private undoTimer: ReturnType<typeof setTimeout> | null = null;

  current = $derived(
    this.timedOut ?? (this.items.length ? this.items[Math.min(this.index, this.items.length - 1)] : null),
  );
  position = $derived(this.items.length ? Math.min(this.index, this.items.length - 1) + 1 : 0);
  /** Time left before the gateway's deadline (0 once it passed). */
  remainingMs = $derived(this.current && !this.timedOut ? Math.max(0, this.current.expires_at_ms - this.now) : 0);
  /** Held calls identical to the shown one (same session, server, tool, arguments), itself included.
   * A held answer is alike to no other: two runs of the same call answer different texts. */
  alike = $derived(
    !this.current || this.timedOut
      ? []
      : isHeldAnswer(this.current)
        ? [this.current]
        : this.items.filter((a) => sameCall(a, this.current!) && !isHeldAnswer(a)),
  );

  private unlisten: Unlisten[] = [];
  /** Ids resolved while a list request was in flight must not come back from its answer. */
  private resolved = new Set<string>();
  /** Per list request in flight, the calls announced meanwhile: its answer may predate them.
   * One buffer each: showing the window fires focus and visibilitychange together, and the
   * later answer must not drop a call that the earlier request's buffer held. */
  private listsInFlight: PendingApproval[][] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timedOutTimer: ReturnType<typeof setTimeout> | null = null;
  private ticking = false;
  /** A call asked for by id before it was queued. */
  private wanted: string | null = null;
  /** An extension request in flight (at most one at a time: interaction is throttled to it). */
  private extending: Promise<void> | null = null;

  constructor(
    private backend: Backend,
    private clock: () => number = () => Date.now(),
  ) {
    this.now = clock();
  }

  /**
   * Loads the held calls, subscribes to events and starts the clock. `tickMs` 0: no timer (tests
   * tick by hand); otherwise the clock wakes when the shown countdown changes, at most every
   * `tickMs` or so — never while nothing is shown.
   */
  async start(tickMs = 1000): Promise<void> {
    this.unlisten.push(
      await this.backend.on('ApprovalRequested', ({ approval }) => this.add(approval)),
      await this.backend.on('ApprovalExtended', ({ approval }) => this.update(approval)),
      await this.backend.on('ApprovalResolved', (r) => this.onResolved(r)),
      await this.backend.on('ShowApproval', ({ id }) => this.show(id)),
    );
    await this.resync();
    this.loaded = true;
    this.ticking = tickMs > 0;
    this.schedule();
  }

  /**
   * Replaces the queue with the gateway's list (at start, and when a hidden window comes back,
   * in case events were missed), staying on the call that was shown.
   */
  async resync(): Promise<void> {
    const arrived: PendingApproval[] = [];
    this.listsInFlight.push(arrived);
    try {
      const list = await this.backend.listApprovals();
      this.stopBuffering(arrived);
      const shownId = this.wanted ?? this.current?.id;
      this.items = [];
      for (const a of [...list, ...arrived]) if (!this.resolved.has(a.id)) this.add(a);
      const i = shownId === undefined ? -1 : this.items.findIndex((a) => a.id === shownId);
      if (i !== -1 && shownId === this.wanted) this.wanted = null;
      this.index = i === -1 ? Math.min(this.index, Math.max(0, this.items.length - 1)) : i;
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    } finally {
      this.stopBuffering(arrived);
    }
  }

  private stopBuffering(buffer: PendingApproval[]): void {
    this.listsInFlight = this.listsInFlight.filter((b) => b !== buffer);
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    this.ticking = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.timedOutTimer) clearTimeout(this.timedOutTimer);
    if (this.undoTimer) clearTimeout(this.undoTimer);
    this.timer = this.timedOutTimer = this.undoTimer = null;
  }

  /** Advances the clock; a person still interacting keeps the call alive. */
  tick(now = this.clock()): void {
    this.now = now;
    if (this.hovering || this.editing) this.interact();
    this.schedule();
  }

  /**
   * Wakes up when the countdown's text next changes (the next whole second of the time left),
   * and not at all while nothing is shown: a waiting prompt costs one wake-up a second.
   */
  private schedule(): void {
    if (!this.ticking) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.current || this.timedOut) return;
    const left = this.current.expires_at_ms - this.clock();
    const untilNextSecond = left > 0 ? (left % 1000 || 1000) + 5 : 1000;
    this.timer = setTimeout(() => this.tick(), untilNextSecond);
  }

  setHovering(on: boolean): void {
    this.hovering = on;
    if (on) this.interact();
  }

  setEditing(on: boolean): void {
    this.editing = on;
    if (on) this.interact();
  }

  /** The window was hidden or lost focus: the pointer is no longer over the call. */
  leave(): void {
    this.hovering = false;
  }

  /**
   * The person is reading or typing: if the deadline is near, ask the gateway to move it so
   * about `INTERACT_TARGET_MS` remain (it clamps at `approval.max_hold_secs`). One request at a
   * time; a call at its maximum hold is not asked for again.
   */
  interact(): void {
    const a = this.current;
    if (!a || this.timedOut || this.extending || this.atMaxHold[a.id]) return;
    const left = a.expires_at_ms - this.now;
    if (left <= 0 || left >= INTERACT_BELOW_MS) return;
    void this.extend(Math.ceil((INTERACT_TARGET_MS - left) / 1000), a.id);
  }

  /** Asks the gateway for `bySecs` more on the call `id` (the shown one by default). */
  async extend(bySecs = EXTEND_STEP_SECS, id = this.current?.id): Promise<void> {
    if (id === undefined || this.timedOut) return;
    const request = this.backend.extendApproval(id, bySecs).then(
      ({ approval, clamped }) => {
        this.update(approval);
        if (clamped) this.atMaxHold = { ...this.atMaxHold, [id]: true };
      },
      (e) => {
        // A call decided meanwhile cannot be extended; that is no news to the person.
        if (!this.resolved.has(id)) this.error = errorText(e);
      },
    );
    this.extending = request;
    try {
      await request;
    } finally {
      if (this.extending === request) this.extending = null;
    }
  }

  /** A held call changed (its deadline moved): the queue shows the gateway's copy. */
  update(approval: PendingApproval): void {
    const i = this.items.findIndex((a) => a.id === approval.id);
    if (i === -1) return;
    this.items[i] = approval;
    this.schedule();
  }

  /** Adds a held call in request order; a call already queued is replaced. */
  add(approval: PendingApproval): void {
    if (this.resolved.has(approval.id)) return;
    for (const buffer of this.listsInFlight) buffer.push(approval);
    // What the last decision also did is old news once a new call waits.
    this.notice = null;
    const shownId = this.current?.id;
    const rest = this.items.filter((a) => a.id !== approval.id);
    rest.push(approval);
    rest.sort((a, b) => a.requested_at_ms - b.requested_at_ms || a.id.localeCompare(b.id));
    this.items = rest;
    // Keep showing the call the person is looking at, unless this is the one they asked for.
    if (approval.id === this.wanted) this.show(approval.id);
    else if (shownId !== undefined) this.index = Math.max(0, this.items.findIndex((a) => a.id === shownId));
    this.schedule();
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

  /**
   * A call ended somewhere. One that timed out while shown says "Timed out" for a moment
   * before it leaves, so a call never vanishes without a word.
   */
  onResolved({ id, decision }: ApprovalResolved): void {
    const shown = this.current;
    if (decision === 'timed_out' && shown && shown.id === id && !this.timedOut) {
      this.timedOut = shown;
      this.remove(id);
      this.timedOutTimer = setTimeout(() => this.clearTimedOut(), TIMED_OUT_SHOWN_MS);
      return;
    }
    this.remove(id);
  }

  /** The timed-out call's moment on screen is over. */
  clearTimedOut(): void {
    if (this.timedOutTimer) clearTimeout(this.timedOutTimer);
    this.timedOutTimer = null;
    this.timedOut = null;
    this.schedule();
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
    this.schedule();
  }

  next(): void {
    if (this.timedOut) this.clearTimedOut();
    if (this.index < this.items.length - 1) this.index++;
  }

  previous(): void {
    if (this.timedOut) this.clearTimedOut();
    if (this.index > 0) this.index--;
  }

  /** Decides the shown call (or the call `id`). Returns whether the gateway took the decision. */
  async decide(choice: ApprovalChoice, id?: string): Promise<boolean> {
    const target = id === undefined ? this.current : this.items.find((a) => a.id === id);
    if (!target || this.busy || target === this.timedOut) return false;
    if (isHeldAnswer(target) && !fitsHeldAnswer(choice)) {
      // The keeper would refuse it too; the prompt offers no such choice for an answer.
      this.error = 'A held answer is passed to the agent once or refused; nothing else is asked of it.';
      return false;
    }
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      const result = await this.backend.decideApproval(target.id, choice);
      this.remove(target.id);
      this.settled(result);
      return true;
    } catch (e) {
      this.error = errorText(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  /** The other calls a decision settled leave the queue at once, and the person is told; an
   * "always" that wrote the policy file can be undone until the gateway's deadline for it. */
  private settled(result: DecisionAnswer | undefined): void {
    if (result?.policy_write) this.offerUndo(result.policy_write);
    const also = result?.also_settled ?? [];
    also.forEach((other) => this.remove(other));
    if (also.length) this.notice = `Also settled ${also.length} waiting call${also.length === 1 ? '' : 's'}.`;
  }

  private offerUndo(write: PolicyWrite): void {
    if (this.undoTimer) clearTimeout(this.undoTimer);
    this.undoable = write;
    this.undoTimer = setTimeout(() => (this.undoable = null), Math.max(0, write.undo_until_ms - this.clock()));
  }

  /** Takes back the last "always" write (the gateway refuses once its time is up or the file changed). */
  async undo(): Promise<boolean> {
    const write = this.undoable;
    if (!write) return false;
    try {
      await this.backend.undoPolicyWrite(write.write_id);
      this.notice = `Undone: ${write.key} removed from ${write.path}.`;
      return true;
    } catch (e) {
      this.error = errorText(e);
      return false;
    } finally {
      this.undoable = null;
      if (this.undoTimer) clearTimeout(this.undoTimer);
    }
  }

  /**
   * Decides the shown call and every identical held call of its session the same way ("apply
   * to all N like this"); each is its own decision at the gateway. Returns how many were taken.
   */
  async decideAlike(choice: ApprovalChoice): Promise<number> {
    const ids = this.alike.map((a) => a.id);
    let taken = 0;
    for (const id of ids) if (await this.decide(choice, id)) taken++;
    if (taken > 1) this.notice = `Applied to ${taken} identical calls.`;
    return taken;
  }

  approve(scope: 'once' | 'session' | 'always'): Promise<boolean> {
    return this.decide({ approve: scope });
  }

  deny(always = false, reason: string | null = null): Promise<boolean> {
    const r = reason?.trim() ? reason.trim() : null;
    return this.decide({ deny: { reason: r, always } });
  }
}
