// The audit view's state: the filter form, the rows shown (keyset pages, newest first), the
// selected row, the live tail and the histogram.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import {
  PAGE_SIZE,
  appendedMatches,
  bucketFor,
  emptyForm,
  mergeNewer,
  nextPage,
  toAuditFilter,
  type AuditForm,
} from '../lib/audit-query';
import { zoomStart } from '../lib/chart';
import type { AuditAppended, AuditFilter, AuditRow, ExportFormat, HistogramBucket, SavedExport } from '../lib/types';

/** Most times the chart zooms in (each round narrows the bars: a day to minutes takes three). */
const MAX_ZOOMS = 3;
/** The fewest bars a zoomed chart shows. */
const MIN_BARS = 12;

export class AuditState {
  form = $state<AuditForm>(emptyForm());
  rows = $state.raw<AuditRow[]>([]);
  /** The query whose rows are shown (without a cursor). */
  filter = $state.raw<AuditFilter>({});
  hasMore = $state(false);
  loading = $state(false);
  error = $state<string | null>(null);
  selectedId = $state<number | null>(null);
  live = $state(false);
  histogram = $state.raw<HistogramBucket[]>([]);
  bucketMs = $state(3_600_000);
  /** Where the chart starts when it zoomed in to the calls (`null`: it shows the whole range). */
  zoomedFrom = $state<number | null>(null);
  servers = $state<string[]>([]);
  /** Rows announced while the live tail was off or filtered out: a hint to refresh. */
  unseen = $state(0);

  selected = $derived(this.rows.find((r) => r.id === this.selectedId) ?? null);

  private generation = 0;
  private unlisten: Unlisten[] = [];
  private headTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private backend: Backend,
    private clock: () => number = () => Date.now(),
    readonly pageSize = PAGE_SIZE,
    /** Delay that batches a burst of AuditAppended events into one query. */
    private tailDelayMs = 150,
  ) {}

  async start(): Promise<void> {
    this.unlisten.push(await this.backend.on('AuditAppended', (e) => this.onAppended(e)));
    this.backend
      .listServers()
      .then((s) => (this.servers = s.map((x) => x.name)))
      .catch(() => {});
    await this.search();
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.headTimer) clearTimeout(this.headTimer);
  }

  /** Runs the form's query from the top. */
  async search(): Promise<void> {
    const gen = ++this.generation;
    const filter = toAuditFilter(this.form, this.clock());
    this.filter = filter;
    this.loading = true;
    this.error = null;
    this.unseen = 0;
    try {
      const rows = await this.backend.queryAudit(filter, this.pageSize);
      if (gen !== this.generation) return;
      this.rows = rows;
      this.hasMore = rows.length === this.pageSize;
      if (this.selectedId !== null && !rows.some((r) => r.id === this.selectedId)) this.selectedId = null;
    } catch (e) {
      if (gen === this.generation) this.error = errorText(e);
    } finally {
      if (gen === this.generation) this.loading = false;
    }
    void this.refreshHistogram();
  }

  /** Appends the next page, after the last row shown. */
  async loadMore(): Promise<void> {
    const last = this.rows[this.rows.length - 1];
    if (!last || !this.hasMore || this.loading) return;
    const gen = this.generation;
    this.loading = true;
    try {
      const page = await this.backend.queryAudit(nextPage(this.filter, last), this.pageSize);
      if (gen !== this.generation) return;
      const seen = new Set(this.rows.map((r) => r.id));
      this.rows = [...this.rows, ...page.filter((r) => !seen.has(r.id))];
      this.hasMore = page.length === this.pageSize;
    } catch (e) {
      this.error = errorText(e);
    } finally {
      if (gen === this.generation) this.loading = false;
    }
  }

  async refreshHistogram(): Promise<void> {
    const now = this.clock();
    const filter = { ...this.filter };
    try {
      let bucket = bucketFor(filter, now);
      let buckets = await this.backend.auditHistogram(filter, bucket);
      // A range much wider than its calls is drawn again over the part that has them, until
      // the calls fill the chart or the bars are as narrow as they go (a few rounds at most).
      // At least MIN_BARS bars are kept, ending at the range's end, so calls of the last minute
      // show as a few bars of context rather than one bar filling the chart.
      let zoomedFrom: number | null = null;
      const end = filter.until_ms ?? now;
      for (let round = 0; round < MAX_ZOOMS; round++) {
        const zoom = zoomStart(buckets);
        if (zoom === null) break;
        const finer = bucketFor({ ...filter, since_ms: zoom }, now);
        const start = Math.min(zoom, end - MIN_BARS * finer);
        if (start <= (zoomedFrom ?? filter.since_ms ?? -Infinity)) break; // no narrower
        bucket = finer;
        buckets = await this.backend.auditHistogram({ ...filter, since_ms: start }, bucket);
        zoomedFrom = start;
      }
      this.zoomedFrom = zoomedFrom;
      this.bucketMs = bucket;
      this.histogram = buckets;
    } catch {
      this.histogram = [];
    }
  }

  /** Fetches the newest rows and puts the new ones on top. */
  async refreshHead(): Promise<void> {
    const gen = this.generation;
    try {
      const head = await this.backend.queryAudit(this.filter, this.pageSize);
      if (gen !== this.generation) return;
      this.rows = mergeNewer(this.rows, head);
    } catch (e) {
      this.error = errorText(e);
    }
    void this.refreshHistogram();
  }

  setLive(on: boolean): void {
    this.live = on;
    if (on && this.unseen > 0) {
      this.unseen = 0;
      void this.refreshHead();
    }
  }

  private onAppended(e: AuditAppended): void {
    if (!appendedMatches(this.filter, e)) return;
    if (!this.live) {
      this.unseen++;
      return;
    }
    if (this.headTimer) return;
    this.headTimer = setTimeout(() => {
      this.headTimer = null;
      void this.refreshHead();
    }, this.tailDelayMs);
  }

  select(id: number | null): void {
    this.selectedId = id;
  }

  resetForm(): void {
    this.form = emptyForm();
  }

  /** Where the export dialog proposes to save. */
  suggestExportPath(format: ExportFormat): Promise<string> {
    return this.backend.suggestExportPath(format);
  }

  /** Saves every row the current filter matches to `path`. */
  saveExport(format: ExportFormat, path: string, replace: boolean): Promise<SavedExport> {
    return this.backend.saveAuditExport({ ...this.filter }, format, path, replace);
  }
}
