// The audit view's filter form, and how it becomes an `AuditFilter` for `query_audit`.

import type { AuditAppended, AuditFilter, AuditRow, Decision, Method } from './types';
import { KINDS } from './request-kind';
import { DECISIONS } from './types';
import { fromLocalInput } from './time';

export type RangePreset = '15m' | '1h' | '24h' | '7d' | 'all' | 'custom';

export const RANGE_PRESETS: { value: RangePreset; label: string; ms: number | null }[] = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: 'all', label: 'All time', ms: null },
  { value: 'custom', label: 'Custom…', ms: null },
];

export interface AuditForm {
  /** Which kind of request (tool calls, resource reads, …); '' for every kind. */
  method: Method | '';
  server: string;
  tool: string;
  decision: Decision | '';
  range: RangePreset;
  /** `datetime-local` values, used when range is "custom". */
  from: string;
  until: string;
  text: string;
  /** Only requests whose answer had findings. */
  withFindings: boolean;
}

export const PAGE_SIZE = 50;

export function emptyForm(): AuditForm {
  return { method: '', server: '', tool: '', decision: '', range: '24h', from: '', until: '', text: '', withFindings: false };
}

/** The query for a filter form at `nowMs`; empty fields are left out. */
export function toAuditFilter(form: AuditForm, nowMs: number): AuditFilter {
  const filter: AuditFilter = {};
  const server = form.server.trim();
  const tool = form.tool.trim();
  const text = form.text.trim();
  if (form.method && KINDS.some((k) => k.method === form.method)) filter.method = form.method;
  if (server) filter.server = server;
  if (tool) filter.tool = tool;
  if (form.decision && (DECISIONS as readonly string[]).includes(form.decision)) filter.decision = form.decision;
  if (form.range === 'custom') {
    const since = fromLocalInput(form.from);
    const until = fromLocalInput(form.until);
    if (since !== null) filter.since_ms = since;
    if (until !== null) filter.until_ms = until;
  } else {
    const preset = RANGE_PRESETS.find((p) => p.value === form.range);
    if (preset?.ms) filter.since_ms = nowMs - preset.ms;
  }
  if (text) filter.text = text;
  if (form.withFindings) filter.with_findings = true;
  return filter;
}

/** The query for the page after `last` (rows come newest first; the cursor is (time_ms, id)). */
export function nextPage(filter: AuditFilter, last: Pick<AuditRow, 'time_ms' | 'id'>): AuditFilter {
  return { ...filter, before: [last.time_ms, last.id] };
}

/** Whether a row announced by `AuditAppended` can belong to the list the filter shows. */
export function appendedMatches(filter: AuditFilter, event: AuditAppended): boolean {
  if (filter.server && filter.server !== event.server) return false;
  if (filter.tool && filter.tool !== event.tool) return false;
  if (filter.decision && filter.decision !== event.decision) return false;
  if (filter.method && filter.method !== event.method) return false;
  if (filter.until_ms !== undefined) return false; // a closed range gets no new rows
  return true;
}

const BUCKETS = [60_000, 5 * 60_000, 15 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 7 * 86_400_000];

/** Bucket width for the histogram: the smallest that gives at most `maxBuckets` bars. */
export function bucketFor(filter: AuditFilter, nowMs: number, maxBuckets = 48): number {
  const until = filter.until_ms ?? nowMs;
  const since = filter.since_ms ?? until - 7 * 86_400_000;
  const span = Math.max(1, until - since);
  return BUCKETS.find((b) => span / b <= maxBuckets) ?? BUCKETS[BUCKETS.length - 1];
}

/** Merges newer rows on top of `rows`, skipping ids already shown, newest first. */
export function mergeNewer(rows: AuditRow[], newer: AuditRow[]): AuditRow[] {
  const seen = new Set(rows.map((r) => r.id));
  const fresh = newer.filter((r) => !seen.has(r.id));
  if (fresh.length === 0) return rows;
  return [...fresh, ...rows].sort((a, b) => b.time_ms - a.time_ms || b.id - a.id);
}
