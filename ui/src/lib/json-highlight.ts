// Colours for the raw JSON editor: the text cut into tokens, line by line. Lenient on purpose —
// the person is typing, so the text is often not JSON yet; anything unrecognised is plain text
// and the tokens always join back to exactly the text.

export type TokenKind = 'key' | 'string' | 'number' | 'literal' | 'punct' | 'plain';

export interface Token {
  kind: TokenKind;
  text: string;
}

const TOKEN = /"(?:[^"\\\n]|\\.)*"?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\b(?:true|false|null)\b|[{}[\],:]|\s+|[^"\s{}[\],:]+/g;

function kindOf(text: string, rest: string): TokenKind {
  if (text.startsWith('"')) return /^\s*:/.test(rest) ? 'key' : 'string';
  if (/^-?\d/.test(text)) return 'number';
  if (text === 'true' || text === 'false' || text === 'null') return 'literal';
  if (/^[{}[\],:]$/.test(text)) return 'punct';
  return 'plain';
}

/** The tokens of each line of `text` (a string never spans lines in JSON). */
export function highlightLines(text: string): Token[][] {
  return text.split('\n').map((line) => {
    const tokens: Token[] = [];
    for (const m of line.matchAll(TOKEN)) {
      const t = m[0];
      tokens.push({ kind: kindOf(t, line.slice((m.index ?? 0) + t.length)), text: t });
    }
    return tokens;
  });
}
