import { describe, expect, it } from 'vitest';
import { FALLBACK_VIEW_PX, rowWindow, scrollToShow } from '../row-window';

describe('rowWindow', () => {
  it('draws the rows in view and the margin below them at the top of the list', () => {
    // 600 px of 28 px rows: 22 rows in view (the 22nd in part), 20 more below.
    expect(rowWindow(1000, 28, 0, 600)).toEqual({ first: 0, end: 42 });
  });

  it('keeps the margin on both sides in the middle', () => {
    // Scrolled to row 500: rows 480 to 542.
    expect(rowWindow(1000, 28, 500 * 28, 600)).toEqual({ first: 480, end: 542 });
  });

  it('never passes the ends of the list', () => {
    expect(rowWindow(1000, 28, 1000 * 28, 600)).toEqual({ first: 980, end: 1000 });
    expect(rowWindow(10, 28, 0, 600)).toEqual({ first: 0, end: 10 });
    expect(rowWindow(0, 28, 0, 600)).toEqual({ first: 0, end: 0 });
    // An elastic over-scroll above the top.
    expect(rowWindow(1000, 28, -50, 600).first).toBe(0);
    // A stale scroll position after the rows were replaced by fewer.
    expect(rowWindow(5, 28, 500 * 28, 600)).toEqual({ first: 5, end: 5 });
  });

  it('assumes a view of its own when none was measured', () => {
    const { end } = rowWindow(1000, 28, 0, 0);
    expect(end).toBe(Math.ceil(FALLBACK_VIEW_PX / 28) + 20);
  });
});

describe('scrollToShow', () => {
  it('leaves a row in view where it is', () => {
    expect(scrollToShow(5, 28, 30, 0, 600)).toBe(0);
  });

  it('scrolls down just enough to show a row below the view', () => {
    // Row 30's bottom is at 30 + 31 * 28 = 898 px: the view's bottom must reach it.
    expect(scrollToShow(30, 28, 30, 0, 600)).toBe(898 - 600);
  });

  it('scrolls up to put a row above the view just under the header', () => {
    expect(scrollToShow(10, 28, 30, 2000, 600)).toBe(280);
  });
});
