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
