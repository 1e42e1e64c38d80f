import { describe, expect, it } from 'vitest';
import { layoutBars, presentDecisions } from '../chart';

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
