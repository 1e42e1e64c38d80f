// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import AuditView from '../AuditView.svelte';
import { MockBackend, type RowAnswer } from '../../../lib/mock-backend';
import { auditNow } from '../../../lib/golden-audit';
import type { AnswerFinding } from '../../../lib/types';

// What came back for a forwarded request. The rows are the store's (data set "seven" of
// __fixtures__/audit.json: ids 7, 6, 5 on the first page of 3); the recorded data sets keep no
// answers, so the mock lays these over them by id. A finding's `mark` is a BYTE offset and length
// into the UTF-8 of `answer`, as the Rust side cut it.
const NOW = auditNow('seven');
const DAY = 86_400_000;

afterEach(() => cleanup());

function finding(over: Partial<AnswerFinding>): AnswerFinding {
  return {
    kind: 'secret',
    action: 'redact',
    location: { path: '/content/0/text', offset: 0, len: 0 },
    what: 'AWS access key',
    excerpt: '',
    ...over,
  };
}

/** "é" is two bytes: "[redacted]" starts at byte 3 (string index 2) and is 10 bytes long. */
const SECRET: RowAnswer = {
  answer: 'é [redacted] x',
  answer_bytes: 2048,
  findings: [
    finding({ location: { path: '/content/0/text', offset: 3, len: 20 }, excerpt: 'é [redacted] x', mark: [3, 10] }),
  ],
};

/** "😀" is four bytes (two UTF-16 units), "—" three; a finding without a mark is listed only. */
const SEVERAL: RowAnswer = {
  answer: '😀 ok\\u{200B} — [redacted]',
  answer_bytes: 512,
  findings: [
    finding({ kind: 'invisible', action: 'strip', what: 'zero-width space', location: { path: '/content/0/text', offset: 7, len: 3 }, excerpt: 'ok\\u{200B}', mark: [7, 8] }),
    finding({ kind: 'secret', action: 'redact', what: 'GitHub token', location: { path: '/content/1/text', offset: 0, len: 40 }, excerpt: '— [redacted]', mark: [20, 10] }),
    finding({ kind: 'instruction', action: 'flag', what: 'ignore previous instructions', location: { path: '/content/2/text', offset: 120, len: 30 }, excerpt: 'ignore previous instructions' }),
    finding({ kind: 'escape', action: 'hold', what: 'OSC 8 link', location: { path: '/content/3/text', offset: 9, len: 12 }, excerpt: '\\u{1B}]8;;https://x.example\\u{1B}\\\\' }),
  ],
};

function setup(answers: Record<number, RowAnswer>) {
  const backend = new MockBackend({ audit: 'seven', servers: [], answers }, { now: () => NOW });
  render(AuditView, { props: { backend, clock: () => NOW, pageSize: 3, tailDelayMs: 0 } });
  return backend;
}

const shownIds = () => screen.queryAllByTestId('audit-row').map((r) => Number(r.dataset.id));

async function selectRow(id: number) {
  await waitFor(() => expect(shownIds()).toContain(id));
  const row = screen.getAllByTestId('audit-row').find((r) => Number(r.dataset.id) === id)!;
  await fireEvent.click(row);
  return screen.getByTestId('audit-detail');
}

describe('Audit view: what came back', () => {
  it('"Answers with findings" sends with_findings and shows only the requests whose answer had findings', async () => {
    // Row 7 has an answer with nothing found, 6 has findings, 5 has no answer.
    const backend = setup({ 7: { answer: 'fine', answer_bytes: 4, findings: [] }, 6: SECRET });
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5]));
    const box = screen.getByTestId('audit-filter-findings') as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(backend.callsOf('query_audit')[0]).toEqual({ filter: { since_ms: NOW - DAY }, limit: 3 });

    await fireEvent.click(box);
    await fireEvent.click(screen.getByTestId('filter-apply'));
    await waitFor(() => expect(shownIds()).toEqual([6]));
    expect(backend.callsOf('query_audit').at(-1)).toEqual({ filter: { since_ms: NOW - DAY, with_findings: true }, limit: 3 });

    // Reset clears it: every request again, and the filter leaves the key out.
    await fireEvent.click(screen.getByTestId('filter-reset'));
    await waitFor(() => expect(shownIds()).toEqual([7, 6, 5]));
    expect((screen.getByTestId('audit-filter-findings') as HTMLInputElement).checked).toBe(false);
    expect(backend.callsOf('query_audit').at(-1)).toEqual({ filter: { since_ms: NOW - DAY }, limit: 3 });
  });

  it('marks the finding in a non-ASCII excerpt by its byte offset: exactly "[redacted]"', async () => {
    setup({ 6: SECRET });
    const detail = await selectRow(6);
    const answer = within(detail).getByTestId('audit-answer');
    expect(answer.textContent).toContain('What came back');
    expect(within(answer).getByTestId('answer-excerpt').textContent).toBe('é [redacted] x');
    const marks = within(answer).getAllByTestId('answer-mark');
    expect(marks.map((m) => m.textContent)).toEqual(['[redacted]']);
    expect(marks[0].tagName).toBe('MARK');
    expect(marks[0].classList.contains('kind-secret')).toBe(true);
    expect(within(answer).getByTestId('answer-size').textContent).toBe('2.0 kB');
  });

  it('marks several findings past multi-byte characters, and lists every finding in words', async () => {
    setup({ 6: SEVERAL });
    const detail = await selectRow(6);
    const answer = within(detail).getByTestId('audit-answer');
    expect(within(answer).getByTestId('answer-excerpt').textContent).toBe('😀 ok\\u{200B} — [redacted]');
    const marks = within(answer).getAllByTestId('answer-mark');
    expect(marks.map((m) => [m.textContent, m.dataset.kind])).toEqual([
      ['\\u{200B}', 'invisible'],
      ['[redacted]', 'secret'],
    ]);

    const items = within(answer).getAllByTestId('answer-finding');
    expect(items).toHaveLength(4);
    const words = items.map((li) => ({
      action: within(li).getByTestId('finding-action').textContent,
      where: within(li).getByTestId('finding-where').textContent,
      excerpt: within(li).getByTestId('finding-excerpt').textContent,
    }));
    expect(words).toEqual([
      { action: 'stripped', where: '/content/0/text at byte 7', excerpt: 'ok\\u{200B}' },
      { action: 'redacted', where: '/content/1/text at byte 0', excerpt: '— [redacted]' },
      { action: 'flagged', where: '/content/2/text at byte 120', excerpt: 'ignore previous instructions' },
      { action: 'withheld from the agent', where: '/content/3/text at byte 9', excerpt: '\\u{1B}]8;;https://x.example\\u{1B}\\\\' },
    ]);
    expect(items[0].textContent).toContain('Hidden characters');
    expect(items[0].textContent).toContain('zero-width space');
    expect(items[1].textContent).toContain('Secret');
    expect(items[1].textContent).toContain('GitHub token');
    expect(items[2].textContent).toContain('Instruction to the agent');
    expect(items[3].textContent).toContain('Terminal escape');
    expect(items[3].textContent).toContain('OSC 8 link');
    expect(within(answer).getByTestId('answer-size').textContent).toBe('512 B');
  });

  it('an answer with nothing found says so; a row without an answer shows no such section', async () => {
    setup({ 7: { answer: 'fine', answer_bytes: 4, findings: [] } });
    let detail = await selectRow(7);
    const answer = within(detail).getByTestId('audit-answer');
    expect(within(answer).getByTestId('answer-excerpt').textContent).toBe('fine');
    expect(within(answer).queryAllByTestId('answer-mark')).toHaveLength(0);
    expect(within(answer).queryAllByTestId('answer-finding')).toHaveLength(0);
    expect(within(answer).getByTestId('answer-no-findings')).toBeTruthy();

    detail = await selectRow(5);
    expect(within(detail).getByTestId('detail-outcome')).toBeTruthy();
    expect(within(detail).queryByTestId('audit-answer')).toBeNull();
    expect(detail.textContent).not.toContain('What came back');
  });
});
