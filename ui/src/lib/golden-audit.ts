// The mock backend's audit reads: golden answers the Rust side wrote (__fixtures__/audit.json,
// by crates/audit/src/golden_tests.rs, which records fixed data sets through the real writer and
// runs each case through the real store, and fails when the file drifts). So the component tests
// page, filter and chart what the gateway would, and no copy of the query, the keyset cursor or the
// histogram's buckets lives in TypeScript. A request the file has no answer for is an error that
// says how to add one.

import golden from './__fixtures__/audit.json';
import type { AuditFilter, AuditRow, ExportFormat, HistogramBucket } from './types';

type Request =
  | { query_audit: { filter: AuditFilter; limit: number } }
  | { audit_histogram: { filter: AuditFilter; bucket_ms: number } }
  | { save_audit_export: { filter: AuditFilter; format: ExportFormat } };

interface Case {
  data_set: string;
  appended?: number;
  request: Request;
  answer: unknown;
}

interface DataSet {
  now_ms: number;
  rows: AuditRow[];
  later: AuditRow[];
}

const FILE = golden as unknown as { data_sets: Record<string, DataSet>; cases: Case[] };

/** JSON with object keys sorted and undefined left out: the same request whatever its key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const keyOf = (dataSet: string, appended: number, request: Request) => `${dataSet}#${appended}#${canonical(request)}`;
const ANSWERS = new Map<string, unknown>(FILE.cases.map((c) => [keyOf(c.data_set, c.appended ?? 0, c.request), c.answer]));

export class NoGoldenAuditAnswer extends Error {}

/** The names of the recorded data sets. */
export const AUDIT_DATA_SETS = Object.keys(FILE.data_sets);

/** The time a data set was recorded at: its `now` for relative filters and the histogram. */
export function auditNow(dataSet: string): number {
  return dataSetOf(dataSet).now_ms;
}

/** The rows of a data set as the store read them back (and its later rows, appended later). */
export function auditRows(dataSet: string): AuditRow[] {
  const d = dataSetOf(dataSet);
  return [...d.rows, ...d.later];
}

function dataSetOf(name: string): DataSet {
  const d = FILE.data_sets[name];
  if (!d) throw new NoGoldenAuditAnswer(`no audit data set "${name}" in __fixtures__/audit.json (there are ${AUDIT_DATA_SETS.join(', ')}); data sets are built in crates/audit/src/golden_tests.rs`);
  return d;
}

/** One data set as a store: `appendLater` records its next later row. */
export class GoldenAudit {
  private appended = 0;
  private byId: Map<number, AuditRow>;

  constructor(readonly dataSet: string) {
    this.byId = new Map(auditRows(dataSet).map((r) => [r.id, r]));
  }

  /** The data set's next later row, now in the store (`undefined`: none is left). */
  appendLater(): AuditRow | undefined {
    const row = dataSetOf(this.dataSet).later[this.appended];
    if (row) this.appended++;
    return row;
  }

  query(filter: AuditFilter, limit: number): AuditRow[] {
    const ids = this.answer({ query_audit: { filter, limit } }) as number[];
    return ids.map((id) => this.byId.get(id)!);
  }

  histogram(filter: AuditFilter, bucketMs: number): HistogramBucket[] {
    return this.answer({ audit_histogram: { filter, bucket_ms: bucketMs } }) as HistogramBucket[];
  }

  exported(filter: AuditFilter, format: ExportFormat): { rows: number; bytes: number } {
    return this.answer({ save_audit_export: { filter, format } }) as { rows: number; bytes: number };
  }

  private answer(request: Request): unknown {
    const key = keyOf(this.dataSet, this.appended, request);
    if (ANSWERS.has(key)) return JSON.parse(JSON.stringify(ANSWERS.get(key)));
    const want = { data_set: this.dataSet, ...(this.appended ? { appended: this.appended } : {}), request };
    throw new NoGoldenAuditAnswer(
      `no golden audit answer for ${canonical(want)}; add it to the cases of ui/src/lib/__fixtures__/audit.json ` +
        'and run PORTCULLIS_BLESS=1 cargo test -p portcullis-audit --lib golden',
    );
  }
}
