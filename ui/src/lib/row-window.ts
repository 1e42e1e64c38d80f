// Which rows of a long list of fixed-height rows are in the DOM: those in view and a margin
// around them. The audit list draws only these (spacers stand for the rest), because a row in
// WebKit costs ~35 KiB of DOM and render tree whether or not it is on screen: 1,000 rows were
// most of the main window's memory (BENCHMARKS.md).

/** Rows kept in the DOM above and below the view, so a scroll by a page shows no gap. */
export const OVERSCAN = 20;
/** The view's height until it has been measured (and where layout gives none, as in jsdom). */
export const FALLBACK_VIEW_PX = 800;

export interface RowWindow {
  /** Index of the first row drawn. */
  first: number;
  /** One past the last row drawn. */
  end: number;
}

/**
 * The rows to draw for a list of `count` rows of `rowPx` pixels, scrolled to `scrollTop`
 * (measured from the first row), with `viewPx` of it visible.
 */
export function rowWindow(count: number, rowPx: number, scrollTop: number, viewPx: number, overscan = OVERSCAN): RowWindow {
  const view = viewPx > 0 ? viewPx : FALLBACK_VIEW_PX;
  const top = Math.max(0, scrollTop);
  const first = Math.min(count, Math.max(0, Math.floor(top / rowPx) - overscan));
  const end = Math.min(count, Math.ceil((top + view) / rowPx) + overscan);
  return { first, end: Math.max(first, end) };
}

/**
 * The scroll position that brings row `index` into a view of `viewPx` (below a sticky header
 * of `headPx`) with the least movement, or `scrollTop` itself when it is already in view.
 */
export function scrollToShow(index: number, rowPx: number, headPx: number, scrollTop: number, viewPx: number): number {
  // In the list's coordinates the row spans [headPx + index × rowPx, + rowPx]; the header
  // covers the top headPx of the view.
  const underHeader = index * rowPx;
  const bottom = headPx + (index + 1) * rowPx;
  if (underHeader < scrollTop) return underHeader;
  if (bottom > scrollTop + viewPx) return bottom - viewPx;
  return scrollTop;
}
