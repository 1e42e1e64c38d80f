// Formatting of durations and instants for the prompt's countdown and the audit list.

/** Remaining time as the countdown shows it: "45 s" under a minute, "2:05" above. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  if (total < 60) return `${total} s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** How urgent the countdown looks: calm, then warn at 10 s, then urgent at 5 s. */
export function countdownLevel(ms: number): 'calm' | 'warn' | 'urgent' {
  if (ms <= 5000) return 'urgent';
  if (ms <= 10000) return 'warn';
  return 'calm';
}

/** Fraction of the waiting time left, 0..1. */
export function remainingFraction(nowMs: number, startMs: number, endMs: number): number {
  const span = endMs - startMs;
  if (span <= 0) return 0;
  return Math.min(1, Math.max(0, (endMs - nowMs) / span));
}

/** A short duration: "850 ms", "3.2 s", "4 min". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local time "HH:MM:SS", with the date "YYYY-MM-DD HH:MM:SS" when `withDate`. */
export function formatTime(ms: number, withDate = false): string {
  const d = new Date(ms);
  const time = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  if (!withDate) return time;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${time}`;
}

/** "just now", "5 s ago", "3 min ago", "2 h ago", else the date. */
export function formatAgo(ms: number, nowMs: number): string {
  const d = nowMs - ms;
  if (d < 2000) return 'just now';
  if (d < 60_000) return `${Math.floor(d / 1000)} s ago`;
  if (d < 3_600_000) return `${Math.floor(d / 60_000)} min ago`;
  if (d < 86_400_000) return `${Math.floor(d / 3_600_000)} h ago`;
  return formatTime(ms, true);
}

/** Value for an `<input type="datetime-local">` from epoch ms (local time). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** Epoch ms from an `<input type="datetime-local">` value, or null when empty or invalid. */
export function fromLocalInput(value: string): number | null {
  if (!value) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  return Number.isNaN(d.getTime()) ? null : d.getTime();
}
