import { describe, expect, it } from 'vitest';
import { JsonNumber, exactArguments, parseExact, visible, visibleBlock } from '../exact-json';
import { jsonTokens, tokensText } from '../json-view';

describe('parseExact', () => {
  it('keeps integers beyond 2^53 as their digits', () => {
    const v = parseExact('{"n": 12345678901234567890}') as Record<string, JsonNumber>;
    expect(v.n).toBeInstanceOf(JsonNumber);
    expect(v.n.text).toBe('12345678901234567890');
    // What JSON.parse would have shown instead.
    expect(String(JSON.parse('{"n": 12345678901234567890}').n)).toBe('12345678901234567000');
  });

  it('keeps every number form exactly as written', () => {
    const v = parseExact('[0, -1, 1.50, 1e400, -2.5E-3, 9007199254740993]') as JsonNumber[];
    expect(v.map((n) => n.text)).toEqual(['0', '-1', '1.50', '1e400', '-2.5E-3', '9007199254740993']);
  });

  it('parses the rest like JSON.parse', () => {
    const text = '{"s": "a\\"b\\u202e\\n", "t": true, "f": false, "z": null, "a": [], "o": {}, "nested": [{"k": ["x"]}]}';
    const v = parseExact(text);
    expect(JSON.parse(JSON.stringify(v))).toEqual(JSON.parse(text));
  });

  it('treats __proto__ as an ordinary key', () => {
    const v = parseExact('{"__proto__": {"polluted": "yes"}}') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['', '{', '[1,]', '{"a" 1}', '01', '-', 'tru', '"open', '{"a":1} x', '1.'])('rejects %j', (text) => {
    expect(() => parseExact(text)).toThrow(SyntaxError);
  });
});

describe('exactArguments', () => {
  it('prefers the JSON text and falls back to the parsed value', () => {
    const exact = exactArguments({ arguments: { n: 12345678901234567000 }, arguments_json: '{"n":12345678901234567890}' });
    expect(tokensText(jsonTokens(exact))).toContain('12345678901234567890');
    expect(exactArguments({ arguments: { a: 1 }, arguments_json: 'not json' })).toEqual({ a: 1 });
    expect(exactArguments({ arguments: { a: 1 } })).toEqual({ a: 1 });
  });
});

describe('visible', () => {
  it.each([
    ['invoice\u202efdp.exe', 'invoice\\u{202e}fdp.exe'],
    ['\u2066\u2069\u200e\u200f\u061c', '\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}'],
    ['a\u001b[2Jb\u007f\u009b', 'a\\u{1b}[2Jb\\u{7f}\\u{9b}'],
    ['zero\u200bwidth\ufeff', 'zero\\u{200b}width\\u{feff}'],
    ['line\nbreak', 'line\\u{a}break'],
    // Near misses: other scripts and ordinary punctuation stay as they are.
    ['שלום مرحبا café', 'שלום مرحبا café'],
    ['write_file › fs', 'write_file › fs'],
  ])('%j is shown as %j', (text, shown) => {
    expect(visible(text)).toBe(shown);
  });

  it('keeps line breaks in blocks', () => {
    expect(visibleBlock('one\ntwo\u202e')).toBe('one\ntwo\\u{202e}');
  });

  it('applies to strings and keys in the JSON view', () => {
    const text = tokensText(jsonTokens(parseExact('{"na\\u202eme": "txt.exe\\u202e", "n": 12345678901234567890}')));
    expect(text).toContain('"na\\u{202e}me"');
    expect(text).toContain('"txt.exe\\u{202e}"');
    expect(text).toContain('12345678901234567890');
    expect(text).not.toMatch(/[\u202a-\u202e]/);
  });
});
