import { describe, expect, it } from 'vitest';
import { foldString, jsonTokens, tokensText } from '../json-view';

describe('jsonTokens', () => {
  it('pretty prints like JSON.stringify with 2 spaces when nothing is folded', () => {
    const value = { a: [1, 'two', null, true], b: {}, c: [], 'd"q': { e: -1.5 } };
    const tokens = jsonTokens(value, { foldAt: 1000 });
    expect(tokensText(tokens)).toBe(JSON.stringify(value, null, 2));
  });

  it('classifies tokens for highlighting', () => {
    const kinds = jsonTokens({ k: 'v', n: 1, b: false, z: null })
      .filter((t) => t.kind !== 'space' && t.kind !== 'punct')
      .map((t) => `${t.kind}:${t.text}`);
    expect(kinds).toEqual(['key:"k"', 'string:"v"', 'key:"n"', 'number:1', 'key:"b"', 'boolean:false', 'key:"z"', 'null:null']);
  });

  it('folds long string values, never keys', () => {
    const long = 'x'.repeat(200);
    const tokens = jsonTokens({ [long]: long }, { foldAt: 100, foldHead: 10 });
    const key = tokens.find((t) => t.kind === 'key')!;
    const str = tokens.find((t) => t.kind === 'string')!;
    expect(key.fold).toBeUndefined();
    expect(str.fold).toEqual({ head: `"${'x'.repeat(10)}`, hidden: 190 });
    expect(tokensText(tokens)).toContain(`"${'x'.repeat(10)}…"`);
    expect(tokensText(tokens, new Set([str.id!]))).toBe(JSON.stringify({ [long]: long }, null, 2));
  });

  it('counts characters, not UTF-16 units, and escapes in the head', () => {
    expect(foldString('😀'.repeat(5), 4, 2)).toEqual({ head: '😀😀', hidden: 3 });
    expect(foldString('short', 10)).toBeNull();
    const tokens = jsonTokens('a"b\n'.repeat(50), { foldAt: 10, foldHead: 4 });
    expect(tokens[0].fold!.head).toBe('"a\\"b\\n');
  });

  it('renders a bare scalar and undefined as null', () => {
    expect(tokensText(jsonTokens(42))).toBe('42');
    expect(tokensText(jsonTokens(undefined))).toBe('null');
  });
});
