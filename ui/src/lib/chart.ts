// Geometry of the audit view's stacked bar chart (decisions per time bucket), drawn as SVG.

import type { Decision, HistogramBucket } from './types';
import { DECISIONS } from './types';

export interface Bar {
  start_ms: number;
  x: number;
  width: number;
  total: number;
  segments: { decision: Decision; y: number; height: number; count: number }[];
}

export function bucketTotal(b: HistogramBucket): number {
  return DECISIONS.reduce((n, d) => n + (b.counts[d] ?? 0), 0);
}

/** Bars for `buckets` in a `width` × `height` box; the tallest bar fills the height. */
export function layoutBars(buckets: HistogramBucket[], width: number, height: number, gap = 1): { bars: Bar[]; max: number } {
  const max = Math.max(0, ...buckets.map(bucketTotal));
  if (buckets.length === 0) return { bars: [], max };
  const slot = width / buckets.length;
  const barWidth = Math.max(1, slot - gap);
  const bars = buckets.map((b, i) => {
    let y = height;
    const segments = [] as Bar['segments'];
    for (const decision of DECISIONS) {
      const count = b.counts[decision] ?? 0;
      if (!count) continue;
      const h = max === 0 ? 0 : (count / max) * height;
      y -= h;
      segments.push({ decision, y, height: h, count });
    }
    return { start_ms: b.start_ms, x: i * slot, width: barWidth, total: bucketTotal(b), segments };
  });
  return { bars, max };
}

/** Decisions present in the buckets, in vocabulary order (for the legend). */
export function presentDecisions(buckets: HistogramBucket[]): Decision[] {
  return DECISIONS.filter((d) => buckets.some((b) => (b.counts[d] ?? 0) > 0));
}

/** Below this share of the bars holding calls, the chart zooms to where the calls are. */
const ZOOM_BELOW = 0.25;

/**
 * Where to zoom the chart: the start of the first bucket with a call, when the calls sit in
 * the last quarter of the range or less (a 24 h range whose calls came in the last ten
 * minutes is one sliver otherwise); `null` when the range is already a fit, or empty.
 */
export function zoomStart(buckets: HistogramBucket[]): number | null {
  const first = buckets.findIndex((b) => bucketTotal(b) > 0);
  if (first <= 0) return null;
  return (buckets.length - first) / buckets.length < ZOOM_BELOW ? buckets[first].start_ms : null;
}

export interface Tick {
  /** Position along the time axis, 0..1. */
  at: number;
  ms: number;
}

/** At most `count` labelled instants on the time axis, on bucket boundaries, evenly spread. */
export function timeTicks(buckets: HistogramBucket[], bucketMs: number, count = 5): Tick[] {
  const n = buckets.length;
  if (n === 0) return [];
  const step = Math.max(1, Math.ceil(n / Math.max(1, count - 1)));
  const ticks: Tick[] = [];
  for (let i = 0; i < n; i += step) ticks.push({ at: i / n, ms: buckets[i].start_ms });
  const end = buckets[n - 1].start_ms + bucketMs;
  if (ticks[ticks.length - 1].at < 1 - 0.5 / Math.max(1, count - 1)) ticks.push({ at: 1, ms: end });
  return ticks;
}

/** The count axis: 0, the middle (when it is a whole number worth showing), and the top. */
export function countTicks(max: number): number[] {
  if (max <= 0) return [0];
  const mid = max / 2;
  return max >= 4 && Number.isInteger(mid) ? [max, mid, 0] : [max, 0];
}
