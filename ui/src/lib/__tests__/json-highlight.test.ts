import { describe, expect, it } from 'vitest';
import { highlightLines } from '../json-highlight';

describe('raw JSON colours', () => {
  it('tells keys from string values, and numbers, literals and punctuation apart', () => {
    const [line] = highlightLines('  "action": "deny", "max": -2.5e3, "on": true}');
    const kinds = line.filter((t) => t.text.trim()).map((t) => `${t.kind}:${t.text}`);
    expect(kinds).toEqual([
      'key:"action"', 'punct::', 'string:"deny"', 'punct:,', 'key:"max"', 'punct::', 'number:-2.5e3',
      'punct:,', 'key:"on"', 'punct::', 'literal:true', 'punct:}',
    ]);
  });

  it('joins back to exactly the text, half-typed and broken text included', () => {
    for (const text of ['{"a": "unterminated\n  , nul, @@ ]', 'x"\\"" :', '', '\n\n', '{"k\\u00e9": [1,2]}']) {
      const back = highlightLines(text).map((l) => l.map((t) => t.text).join('')).join('\n');
      expect(back).toBe(text);
    }
  });

  it('an escaped quote does not end a string', () => {
    const [line] = highlightLines('"say \\"hi\\"": 1');
    expect(line[0]).toEqual({ kind: 'key', text: '"say \\"hi\\""' });
  });
});
