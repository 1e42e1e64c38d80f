// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import AuditView from '../AuditView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { auditNow, auditRows } from '../../../lib/golden-audit';

// The rows and every answer are the audit store's, recorded by crates/audit/src/golden_tests.rs
// (__fixtures__/audit.json): data set "seven" has seven calls a minute apart (newest id 7; rows 6
// and 7 share a timestamp, so the cursor needs the id), row 8 three days old, and rows 9 and 10
// that arrive later.
const NOW = auditNow('seven');
const DAY = 86_400_000;

afterEach(() => cleanup());

function setup() {
  const backend = new MockBackend({
    audit: 'seven',
    servers: [
      { name: 'everything', transport: 'http', state: 'running', tool_count: 1, stderr_tail: [], policy: { state: 'ok', problems: [] }, sessions: [] },
      { name: 'filesystem', transport: 'stdio', state: 'running', tool_count: 1, stderr_tail: [], policy: { state: 'ok', problems: [] }, sessions: [] },
    ],
  }, { now: () => NOW });
  render(AuditView, { props: { backend, clock: () => NOW, pageSize: 3, tailDelayMs: 0 } });
  return backend;
}

const shownIds = () => screen.queryAllByTestId('audit-row').map((r) => Number(r.dataset.id));

describe('Audit view', () => {
  it('loads the first page of the last 24 hours, newest first', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5]));
    expect(backend.callsOf('query_audit')[0]).toEqual({ filter: { since_ms: NOW - DAY }, limit: 3 });
    await waitFor(() => expect(backend.callsOf('audit_histogram')[0]).toEqual({ filter: { since_ms: NOW - DAY }, bucket_ms: 3_600_000 }));
  });

  it('"load more" appends the next page with the (time_ms, id) cursor of the last row', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5]));
    const last = auditRows('seven').find((r) => r.id === 5)!;
    await fireEvent.click(screen.getByTestId('load-more'));
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5, 4, 3, 2]));
    expect(backend.callsOf('query_audit')[1]).toEqual({ filter: { since_ms: NOW - DAY, before: [last.time_ms, 5] }, limit: 3 });
    await fireEvent.click(screen.getByTestId('load-more'));
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5, 4, 3, 2, 1]));
    expect(screen.queryByTestId('load-more')).toBeNull();
  });

  it('filters by server, decision, tool, time range and text', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds().length).toBe(3));
    await fireEvent.change(screen.getByTestId('filter-server'), { target: { value: 'filesystem' } });
    await fireEvent.change(screen.getByTestId('filter-decision'), { target: { value: 'rejected' } });
    await fireEvent.input(screen.getByTestId('filter-tool'), { target: { value: 'read_file' } });
    await fireEvent.input(screen.getByTestId('filter-text'), { target: { value: '3.txt' } });
    await fireEvent.change(screen.getByTestId('filter-range'), { target: { value: 'all' } });
    await fireEvent.click(screen.getByTestId('filter-apply'));
    await waitFor(() => expect(shownIds()).toEqual([3]));
    expect(backend.callsOf('query_audit').at(-1)).toEqual({
      filter: { server: 'filesystem', tool: 'read_file', decision: 'rejected', text: '3.txt' },
      limit: 3,
    });

    await fireEvent.click(screen.getByTestId('filter-reset'));
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5]));
  });

  it('shows the full arguments and the outcome of the selected row', async () => {
    setup();
    await waitFor(() => expect(shownIds().length).toBe(3));
    await fireEvent.click(screen.getAllByTestId('audit-row')[2]);
    const detail = screen.getByTestId('audit-detail');
    expect(within(detail).getByTestId('json-view').textContent).toContain('"/tmp/5.txt"');
    expect(within(detail).getByTestId('detail-outcome').textContent).toBe('ok in 15 ms');
  });

  it('live tail puts rows announced by AuditAppended on top; off, it only counts them', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds().length).toBe(3));
    backend.appendLater();
    await waitFor(() => expect(screen.getByTestId('audit-unseen').textContent).toContain('1 new'));
    expect(shownIds()[0]).toBe(7);

    await fireEvent.click(screen.getByTestId('live-tail'));
    await waitFor(() => expect(shownIds()[0]).toBe(9));
    backend.appendLater();
    await waitFor(() => expect(shownIds().slice(0, 2)).toEqual([10, 9]));
    expect(shownIds()).toContain(5);
  });

  it('zooms the 24 h chart to the minutes that hold the calls, with both axes labelled', async () => {
    const backend = setup();
    const span = await screen.findByTestId('chart-span');
    await waitFor(() => expect(span.textContent).toContain('Zoomed to the calls'));
    const calls = backend.callsOf('audit_histogram') as { filter: { since_ms: number }; bucket_ms: number }[];
    const [whole, zoomed] = [calls[0], calls[calls.length - 1]];
    expect(whole.filter.since_ms).toBe(NOW - DAY);
    // Narrowed in rounds to the bars that hold the calls: minutes, not a day.
    expect(calls.length).toBeGreaterThan(2);
    expect(zoomed.filter.since_ms).toBeGreaterThan(NOW - 15 * 60_000);
    expect(zoomed.bucket_ms).toBeLessThan(whole.bucket_ms);
    expect(span.textContent).toContain(`bars of ${zoomed.bucket_ms / 60_000} min`);
    // Narrowed to where the calls are, with a dozen bars of context at least: the seven calls
    // spread over several bars, not one bar filling the chart.
    const bars = screen.getByTestId('audit-chart').querySelectorAll('svg > g');
    expect(bars.length).toBeGreaterThanOrEqual(12);
    const withCalls = [...bars].filter((g) => g.querySelectorAll('rect').length > 1);
    expect(withCalls.length).toBeGreaterThan(1);
    const xLabels = within(screen.getByTestId('chart-x-axis')).getAllByText(/^\d\d:\d\d$/);
    expect(xLabels.length).toBeGreaterThanOrEqual(2);
    expect(screen.getByTestId('chart-y-axis').textContent).toContain('0');
  });

  it('calls of the last minute zoom to a dozen one-minute bars, not an hour with one bar', async () => {
    // Data set "last-minute": three calls of the last 20 seconds.
    const backend = new MockBackend({ audit: 'last-minute', servers: [] }, { now: () => NOW });
    render(AuditView, { props: { backend, clock: () => NOW, pageSize: 3, tailDelayMs: 0 } });
    const span = await screen.findByTestId('chart-span');
    await waitFor(() => expect(span.textContent).toContain('Zoomed to the calls'));
    const calls = backend.callsOf('audit_histogram') as { filter: { since_ms: number }; bucket_ms: number }[];
    const last = calls[calls.length - 1];
    expect(last.bucket_ms).toBe(60_000);
    expect(last.filter.since_ms).toBe(NOW - 12 * 60_000);
  });

  it('asks where to save an export, asks before replacing, and says what it wrote', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds().length).toBe(3));
    await fireEvent.click(screen.getByTestId('export-csv'));
    const path = (await screen.findByTestId('export-path')) as HTMLInputElement;
    await waitFor(() => expect(path.value).toBe('/home/user/Downloads/portcullis-audit.csv'));
    expect(backend.callsOf('save_audit_export')).toEqual([]);
    await fireEvent.input(path, { target: { value: '/tmp/mine.csv' } });
    await fireEvent.click(screen.getByTestId('export-save'));
    // Every row the filter matches, not only the page shown.
    expect((await screen.findByTestId('export-saved')).textContent).toContain('Saved 7 rows');
    expect(screen.getByTestId('export-saved').textContent).toContain('/tmp/mine.csv');
    await fireEvent.click(screen.getByTestId('export-done'));
    expect(screen.queryByTestId('export-dialog')).toBeNull();

    // The same path again: the file is there, so it asks; only Replace writes over it.
    await fireEvent.click(screen.getByTestId('export-csv'));
    const again = (await screen.findByTestId('export-path')) as HTMLInputElement;
    await waitFor(() => expect(again.value).not.toBe(''));
    await fireEvent.input(again, { target: { value: '/tmp/mine.csv' } });
    await fireEvent.click(screen.getByTestId('export-save'));
    expect((await screen.findByTestId('export-error')).textContent).toContain('already exists');
    await fireEvent.click(screen.getByTestId('export-replace'));
    await screen.findByTestId('export-saved');
    expect(backend.callsOf('save_audit_export')).toEqual([
      { filter: { since_ms: NOW - DAY }, format: 'csv', path: '/tmp/mine.csv', replace: false },
      { filter: { since_ms: NOW - DAY }, format: 'csv', path: '/tmp/mine.csv', replace: false },
      { filter: { since_ms: NOW - DAY }, format: 'csv', path: '/tmp/mine.csv', replace: true },
    ]);
  });

  it('refuses a relative path with the reason and saves nothing', async () => {
    const backend = setup();
    await waitFor(() => expect(shownIds().length).toBe(3));
    await fireEvent.click(screen.getByTestId('export-jsonl'));
    const path = (await screen.findByTestId('export-path')) as HTMLInputElement;
    await waitFor(() => expect(path.value).toContain('.jsonl'));
    await fireEvent.input(path, { target: { value: 'audit.jsonl' } });
    await fireEvent.click(screen.getByTestId('export-save'));
    expect((await screen.findByTestId('export-error')).textContent).toContain('not a full path');
    expect(backend.savedExports.size).toBe(0);
    await fireEvent.click(screen.getByTestId('export-cancel'));
    expect(screen.queryByTestId('export-dialog')).toBeNull();
  });

  it('draws only the rows near the view of a long list, and follows the scroll and the keys', async () => {
    // Data set "thousand": ids 1 to 1000, a second apart, the newest a second before now.
    const backend = new MockBackend({ audit: 'thousand', servers: [] }, { now: () => NOW });
    render(AuditView, { props: { backend, clock: () => NOW, pageSize: 1000, tailDelayMs: 0 } });
    // A full page (the gateway's largest) may have more behind it.
    await waitFor(() => expect(screen.getByTestId('audit-count').textContent).toBe('1000+ rows'));
    const list = screen.getByTestId('audit-list');
    // jsdom has no layout: the list is given a height and a scroll position by hand.
    let top = 0;
    Object.defineProperty(list, 'clientHeight', { configurable: true, get: () => 560 });
    Object.defineProperty(list, 'scrollHeight', { configurable: true, get: () => 30 + 1000 * 28 });
    Object.defineProperty(list, 'scrollTop', { configurable: true, get: () => top, set: (v: number) => (top = v) });
    const drawnIds = () => shownIds();
    // At the top: the first rows and a margin, not the thousand.
    expect(drawnIds()[0]).toBe(1000);
    expect(drawnIds().length).toBeLessThan(80);
    const spacers = list.querySelectorAll<HTMLElement>('.spacer-rows');
    expect(spacers[0].style.height).toBe('0px');
    expect(spacers[1].style.height).toBe(`${(1000 - drawnIds().length) * 28}px`);

    // Scrolled to the 500th row: it and its neighbours are drawn, the space above stands for the rest.
    top = 500 * 28;
    await fireEvent.scroll(list);
    await waitFor(() => expect(drawnIds()).toContain(500));
    expect(drawnIds()).not.toContain(1000);
    const above = Number(list.querySelector<HTMLElement>('.spacer-rows')!.style.height.replace('px', ''));
    expect(above).toBe((1000 - drawnIds()[0]) * 28);
    expect(list.querySelector('[data-id="500"]')!.getAttribute('aria-rowindex')).toBe(String(1000 - 500 + 2));

    // A key press past the drawn rows scrolls the list to the newly selected row.
    await fireEvent.click(list.querySelector('[data-id="480"] [role=gridcell]')!);
    top = 0;
    await fireEvent.keyDown(list, { key: 'ArrowDown' });
    // Row 479 is at index 521: its bottom, 30 + 522 × 28 px, meets the view's.
    expect(top).toBe(30 + 522 * 28 - 560);
    await fireEvent.scroll(list);
    await waitFor(() => expect(list.querySelector('[data-id="479"]')!.getAttribute('aria-selected')).toBe('true'));
  });
});

// Data set "doors": one request at each door, a minute apart: 1 a tool call, 2 a resource read,
// 3 a resource watch, 4 a prompt, 5 sampling, 6 elicitation, 7 roots.
describe('Audit view by kind', () => {
  const DOORS_NOW = auditNow('doors');
  function doors() {
    const backend = new MockBackend({ audit: 'doors' }, { now: () => DOORS_NOW });
    render(AuditView, { props: { backend, clock: () => DOORS_NOW, tailDelayMs: 0 } });
    return backend;
  }

  it('tags the rows that are not tool calls with their kind', async () => {
    doors();
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5, 4, 3, 2, 1]));
    const tags = screen.getAllByTestId('audit-row').map((r) => within(r).queryByTestId('audit-kind')?.textContent ?? null);
    expect(tags).toEqual(['roots', 'elicitation', 'sampling', 'prompt', 'watch', 'resource', null]);
  });

  it('filters by kind through the store', async () => {
    const backend = doors();
    await waitFor(() => expect(shownIds().length).toBe(7));
    const options = [...screen.getByTestId<HTMLSelectElement>('filter-method').options].map((o) => o.textContent);
    expect(options).toEqual(['All', 'Tool calls', 'Resource reads', 'Resource watches', 'Prompts', 'Sampling', 'Elicitation', 'Roots']);
    await fireEvent.change(screen.getByTestId('filter-method'), { target: { value: 'resources/read' } });
    await fireEvent.click(screen.getByTestId('filter-apply'));
    await waitFor(() => expect(shownIds()).toEqual([2]));
    expect(backend.callsOf('query_audit').at(-1)).toEqual({ filter: { method: 'resources/read', since_ms: DOORS_NOW - DAY }, limit: 50 });
    await fireEvent.change(screen.getByTestId('filter-method'), { target: { value: 'sampling/createMessage' } });
    await fireEvent.click(screen.getByTestId('filter-apply'));
    await waitFor(() => expect(shownIds()).toEqual([5]));
  });

  it("labels the detail's tool field by kind", async () => {
    doors();
    await waitFor(() => expect(shownIds().length).toBe(7));
    const rowOf = (id: number) => screen.getAllByTestId('audit-row').find((r) => Number(r.dataset.id) === id)!;
    const detail = () => screen.getByTestId('audit-detail');
    await fireEvent.click(rowOf(2));
    expect(within(detail()).getByTestId('detail-target').previousElementSibling?.textContent).toBe('URI');
    expect(within(detail()).getByTestId('detail-target').textContent).toBe('file:///home/me/.ssh/id_ed25519');
    expect(within(detail()).getByTestId('detail-kind').textContent).toContain('Resource reads');
    await fireEvent.click(rowOf(4));
    expect(within(detail()).getByTestId('detail-target').previousElementSibling?.textContent).toBe('Prompt');
    await fireEvent.click(rowOf(5));
    expect(within(detail()).getByTestId('detail-arguments-label').textContent).toBe('Request');
    await fireEvent.click(rowOf(1));
    expect(within(detail()).getByTestId('detail-target').previousElementSibling?.textContent).toBe('Tool');
    expect(within(detail()).queryByTestId('detail-kind')).toBeNull();
  });
});
