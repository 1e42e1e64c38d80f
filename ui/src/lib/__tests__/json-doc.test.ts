import { describe, expect, it } from 'vitest';
import { formatPath, parseJson, parsePath } from '../json-doc';

describe('parseJson', () => {
  it('parses like JSON.parse', () => {
    const text = '{"a": [1, -2.5e3, "x\\n\\u00e9"], "b": {"c": null, "d": true, "e": false}}';
    const r = parseJson(text);
    expect(r.ok && r.value).toEqual(JSON.parse(text));
  });

  it('locates keys and array items by path', () => {
    const text = '{\n  "tools": {\n    "vm_start": { "approval_timeout": 0 }\n  },\n  "hide": ["a",\n    "b"]\n}';
    const r = parseJson(text);
    if (!r.ok) throw new Error('parse');
    expect(r.locate(['tools', 'vm_start', 'approval_timeout'])).toMatchObject({ line: 3, column: 19 });
    expect(r.locate(['hide', 1])).toMatchObject({ line: 6, column: 5 });
    // A missing piece points at its nearest parent.
    expect(r.locate(['tools', 'vm_start', 'nope'])).toMatchObject({ line: 3 });
    expect(r.locate([])).toMatchObject({ line: 1, column: 1 });
  });

  it.each([
    ['{"a": 1,}', 1, 'expected a key'],
    ['{"a": 1\n "b": 2}', 2, "expected ',' or '}'"],
    ['{"a": 1, "a": 2}', 1, 'duplicate key "a"'],
    ['[1, 2', 1, "expected ',' or ']'"],
    ['{"a": tru}', 1, 'expected a value'],
    ['{} x', 1, 'after the document'],
    ['"abc', 1, 'unterminated string'],
    ['', 1, 'end of input'],
  ])('%j fails on line %i with %s', (text, line, message) => {
    const r = parseJson(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.position.line).toBe(line);
    expect(r.message).toContain(message);
  });

  it('keeps __proto__ as a plain key', () => {
    const r = parseJson('{"__proto__": {"x": 1}}');
    expect(r.ok && Object.keys(r.value as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('paths', () => {
  it('reads the gateway path syntax', () => {
    expect(parsePath('$')).toEqual([]);
    expect(parsePath('$.tools["vm_start"].rate_limit.max')).toEqual(['tools', 'vm_start', 'rate_limit', 'max']);
    expect(parsePath('$.tools["a.b"].rules[0].when["arguments.x"]')).toEqual(['tools', 'a.b', 'rules', 0, 'when', 'arguments.x']);
    expect(parsePath('$.hide[2]')).toEqual(['hide', 2]);
    expect(parsePath('tools.x')).toEqual(['tools', 'x']);
  });

  it('writes plain names with dots and others bracketed', () => {
    expect(formatPath(['tools', 'get-sum', 'rules', 0])).toBe('$.tools["get-sum"].rules[0]');
    expect(parsePath(formatPath(['a', 'b c', 3]))).toEqual(['a', 'b c', 3]);
  });
});
