import { describe, expect, it } from 'vitest';
import { countTicks, layoutBars, presentDecisions, timeTicks, zoomStart } from '../chart';

describe('histogram layout', () => {
  it('stacks decisions bottom-up, the tallest bar filling the height', () => {
    const { bars, max } = layoutBars(
      [
        { start_ms: 0, counts: { allowed: 2, denied: 2 } },
        { start_ms: 10, counts: { allowed: 1 } },
        { start_ms: 20, counts: {} },
      ],
      300,
      100,
      0,
    );
    expect(max).toBe(4);
    expect(bars.map((b) => [b.x, b.width, b.total])).toEqual([[0, 100, 4], [100, 100, 1], [200, 100, 0]]);
    expect(bars[0].segments).toEqual([
      { decision: 'allowed', y: 50, height: 50, count: 2 },
      { decision: 'denied', y: 0, height: 50, count: 2 },
    ]);
    expect(bars[1].segments[0]).toMatchObject({ y: 75, height: 25 });
  });

  it('legend lists the decisions present, in vocabulary order', () => {
    expect(presentDecisions([{ start_ms: 0, counts: { timed_out: 1, allowed: 3, denied: 0 } }])).toEqual(['allowed', 'timed_out']);
    expect(layoutBars([], 100, 10)).toEqual({ bars: [], max: 0 });
  });
});

const empty = (start_ms: number) => ({ start_ms, counts: {} });
const busy = (start_ms: number) => ({ start_ms, counts: { allowed: 3 } });

describe('zooming to the data', () => {
  it('zooms when the calls sit in the last quarter of the range', () => {
    const buckets = [...Array.from({ length: 46 }, (_, i) => empty(i * 10)), busy(460), busy(470)];
    expect(zoomStart(buckets)).toBe(460);
  });

  it('keeps the range when the calls fill enough of it, or when there are none', () => {
    expect(zoomStart([busy(0), empty(10), empty(20), busy(30)])).toBeNull();
    expect(zoomStart([empty(0), empty(10), busy(20), busy(30)])).toBeNull();
    expect(zoomStart([empty(0), empty(10)])).toBeNull();
    expect(zoomStart([])).toBeNull();
  });
});

describe('axes', () => {
  it('labels the time axis on bucket boundaries, ending at the range end', () => {
    const buckets = Array.from({ length: 8 }, (_, i) => empty(1000 + i * 100));
    const ticks = timeTicks(buckets, 100, 5);
    expect(ticks.map((t) => t.ms)).toEqual([1000, 1200, 1400, 1600, 1800]);
    expect(ticks[0].at).toBe(0);
    expect(ticks[ticks.length - 1].at).toBe(1);
    expect(timeTicks([], 100)).toEqual([]);
  });

  it('labels the count axis with whole numbers only', () => {
    expect(countTicks(8)).toEqual([8, 4, 0]);
    expect(countTicks(3)).toEqual([3, 0]);
    expect(countTicks(0)).toEqual([0]);
  });
});
