import { describe, expect, it } from 'vitest';
import { appendedMatches, bucketFor, emptyForm, mergeNewer, nextPage, toAuditFilter } from '../audit-query';
import { makeRow } from '../mock-data';

const NOW = 1_750_000_000_000;

describe('filter form → query', () => {
  it('an empty form is the last 24 hours and nothing else', () => {
    expect(toAuditFilter(emptyForm(), NOW)).toEqual({ since_ms: NOW - 86_400_000 });
  });

  it('maps every field, trimmed; empty ones are left out', () => {
    const form = { ...emptyForm(), server: ' filesystem ', tool: 'write_file', decision: 'rejected' as const, range: 'all' as const, text: '  .bashrc ' };
    expect(toAuditFilter(form, NOW)).toEqual({ server: 'filesystem', tool: 'write_file', decision: 'rejected', text: '.bashrc' });
    expect(toAuditFilter({ ...emptyForm(), tool: '   ', range: '15m' }, NOW)).toEqual({ since_ms: NOW - 900_000 });
  });

  it('a custom range reads the two datetime fields (local time)', () => {
    const form = { ...emptyForm(), range: 'custom' as const, from: '2025-06-01T09:00', until: '2025-06-01T10:30' };
    expect(toAuditFilter(form, NOW)).toEqual({
      since_ms: new Date(2025, 5, 1, 9, 0).getTime(),
      until_ms: new Date(2025, 5, 1, 10, 30).getTime(),
    });
    expect(toAuditFilter({ ...form, from: '', until: '' }, NOW)).toEqual({});
  });

  it('"answers with findings" asks for with_findings; unticked, the key is left out', () => {
    expect(toAuditFilter({ ...emptyForm(), range: 'all', withFindings: true }, NOW)).toEqual({ with_findings: true });
    expect(toAuditFilter({ ...emptyForm(), range: 'all', withFindings: false }, NOW)).toEqual({});
    expect(emptyForm().withFindings).toBe(false);
  });

  it('an unknown decision is ignored', () => {
    expect(toAuditFilter({ ...emptyForm(), range: 'all', decision: 'bogus' as never }, NOW)).toEqual({});
  });

  it('the next page carries the keyset cursor (time_ms, id) of the last row', () => {
    const f = { server: 'x' };
    expect(nextPage(f, makeRow({ time_ms: 5, id: 9 }))).toEqual({ server: 'x', before: [5, 9] });
    expect(f).toEqual({ server: 'x' });
  });
});

describe('live tail and histogram', () => {
  it('an appended row matches when server, tool, decision and kind agree and the range is open', () => {
    const e = { id: 1, server: 's', tool: 't', decision: 'allowed' as const, method: 'tools/call' as const };
    expect(appendedMatches({}, e)).toBe(true);
    expect(appendedMatches({ server: 's', tool: 't', decision: 'allowed', since_ms: 1 }, e)).toBe(true);
    expect(appendedMatches({ server: 'other' }, e)).toBe(false);
    expect(appendedMatches({ decision: 'denied' }, e)).toBe(false);
    expect(appendedMatches({ until_ms: NOW }, e)).toBe(false);
    expect(appendedMatches({ method: 'tools/call' }, e)).toBe(true);
    expect(appendedMatches({ method: 'resources/read' }, e)).toBe(false);
  });

  it('merges newer rows on top without duplicates', () => {
    const rows = [makeRow({ id: 2, time_ms: 20 }), makeRow({ id: 1, time_ms: 10 })];
    const merged = mergeNewer(rows, [makeRow({ id: 4, time_ms: 40 }), makeRow({ id: 3, time_ms: 30 }), makeRow({ id: 2, time_ms: 20 })]);
    expect(merged.map((r) => r.id)).toEqual([4, 3, 2, 1]);
    expect(mergeNewer(rows, [rows[0]])).toBe(rows);
  });

  it('picks the smallest bucket giving at most 48 bars', () => {
    expect(bucketFor({ since_ms: NOW - 900_000 }, NOW)).toBe(60_000);
    expect(bucketFor({ since_ms: NOW - 3_600_000 }, NOW)).toBe(300_000);
    expect(bucketFor({ since_ms: NOW - 86_400_000 }, NOW)).toBe(3_600_000);
    expect(bucketFor({}, NOW)).toBe(6 * 3_600_000);
  });
});
