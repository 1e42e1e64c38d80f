import { describe, expect, it } from 'vitest';
import { buildWhen, describeWhen, emptyRow, rowsOf, schemaArguments, type ConditionRow } from '../condition';

const row = (argument: string, op: ConditionRow['op'], value: string): ConditionRow => ({ argument, op, value });

describe('buildWhen: rows → a policy `when`', () => {
  it.each<[string, ConditionRow[], Record<string, unknown>]>([
    ['a prefix is text as typed', [row('path', 'prefix', '/etc')], { 'arguments.path': { prefix: '/etc' } }],
    ['eq reads JSON when it parses', [row('n', 'eq', '5')], { 'arguments.n': { eq: 5 } }],
    ['eq of a quoted number is the string', [row('n', 'eq', '"5"')], { 'arguments.n': { eq: '5' } }],
    ['eq of plain words is the string', [row('mode', 'eq', 'w')], { 'arguments.mode': { eq: 'w' } }],
    ['in takes a comma list', [row('mode', 'in', 'r, w, 3')], { 'arguments.mode': { in: ['r', 'w', 3] } }],
    ['in takes a JSON list', [row('mode', 'in', '["a,b", "c"]')], { 'arguments.mode': { in: ['a,b', 'c'] } }],
    ['gt is a number', [row('size', 'gt', '1.5')], { 'arguments.size': { gt: 1.5 } }],
    ['exists false is "missing"', [row('force', 'exists', 'false')], { 'arguments.force': { exists: false } }],
    ['client keys are not arguments', [row('client.name', 'eq', 'cursor')], { 'client.name': { eq: 'cursor' } }],
    ['nested paths', [row('files.0.path', 'path_under', '/tmp')], { 'arguments.files.0.path': { path_under: '/tmp' } }],
    [
      'two rows on one argument are one condition, all must hold',
      [row('path', 'prefix', '/srv'), row('path', 'regex', '\\.log$'), row('n', 'lte', '3')],
      { 'arguments.path': { prefix: '/srv', regex: '\\.log$' }, 'arguments.n': { lte: 3 } },
    ],
  ])('%s', (_, rows, when) => {
    expect(buildWhen(rows)).toEqual({ ok: true, when });
  });

  it.each<[string, ConditionRow[], number | null, RegExp]>([
    ['no rows', [], null, /at least one condition/],
    ['no argument', [emptyRow()], 0, /Name the argument/],
    ['an empty path segment', [row('a..b', 'eq', '1')], 0, /empty segment/],
    ['no value', [row('path', 'prefix', '')], 0, /needs a value/],
    ['not a number', [row('size', 'gt', 'big')], 0, /needs a number/],
    ['an operator twice on one argument', [row('p', 'prefix', '/a'), row('p', 'prefix', '/b')], 1, /twice/],
  ])('refuses %s, naming the row', (_, rows, at, message) => {
    const built = buildWhen(rows);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.row).toBe(at);
    expect(built.message).toMatch(message);
  });
});

describe('rowsOf: a `when` back into rows', () => {
  it.each<[string, Record<string, unknown>]>([
    ['text, numbers, strings that look like JSON, lists, exists', {
      'arguments.path': { prefix: '/etc', ne: '5' },
      'arguments.n': { eq: 5, gte: 1 },
      'arguments.mode': { in: ['r', 'w'], not_in: ['a,b'] },
      'arguments.force': { exists: false },
      'client.name': { eq: 'cursor' },
    }],
    ['null and objects', { 'arguments.x': { eq: null, contains: { a: 1 } } }],
  ])('round-trips %s', (_, when) => {
    const rows = rowsOf(when);
    expect(rows).not.toBeNull();
    expect(buildWhen(rows!)).toEqual({ ok: true, when });
  });

  it('gives up (raw JSON) on what the builder cannot show', () => {
    expect(rowsOf({ 'arguments.x': { near: 1 } })).toBeNull();
    expect(rowsOf({ 'arguments.x': 'eq' })).toBeNull();
    expect(rowsOf({ 'arguments.client.name': { eq: 'x' } })).toBeNull();
    expect(rowsOf([])).toBeNull();
  });
});

describe('describeWhen: a `when` in words', () => {
  it('reads each test after its argument, joined by "and"', () => {
    expect(describeWhen({ 'arguments.path': { prefix: '/etc' }, 'arguments.mode': { eq: 'w' } })).toBe('path starts with /etc and mode is "w"');
    expect(describeWhen({ 'arguments.n': { gt: 3 }, 'arguments.f': { exists: false }, 'client.name': { in: ['cursor'] } })).toBe(
      'n > 3 and f is missing and client.name is one of ["cursor"]',
    );
    expect(describeWhen({ 'arguments.p': { path_under: '/tmp' } })).toBe('p is under /tmp');
  });
});

describe('schemaArguments', () => {
  it("offers the schema's property names, nothing for a schema without them", () => {
    expect(schemaArguments({ type: 'object', properties: { path: {}, content: {} } })).toEqual(['path', 'content']);
    expect(schemaArguments({ type: 'object' })).toEqual([]);
    expect(schemaArguments(null)).toEqual([]);
  });
});
