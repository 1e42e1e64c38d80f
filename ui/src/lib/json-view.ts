// Pretty, highlighted JSON as a flat list of tokens, for the approval prompt and the audit
// detail pane. Long string values are folded: the token keeps the full text and a short head,
// and the view shows an expander. No HTML is produced here; the view renders text nodes only.
// Strings and keys have their hidden characters (bidi, controls) shown as escapes, and numbers
// kept exact by `parseExact` (a `JsonNumber`) are shown with every digit.

import { JsonNumber, visible } from './exact-json';

export type TokenKind = 'key' | 'string' | 'number' | 'boolean' | 'null' | 'punct' | 'space';

export interface Token {
  kind: TokenKind;
  /** The text as shown when not folded (a string token includes its quotes). */
  text: string;
  /** For long strings: the shown head (quotes included) and how many characters it hides. */
  fold?: { head: string; hidden: number };
  /** Stable id of a foldable token, to remember which ones a person opened. */
  id?: number;
}

export interface JsonViewOptions {
  indent?: number;
  /** Strings longer than this (in characters, quotes excluded) are folded. */
  foldAt?: number;
  /** How many characters of a folded string are shown. */
  foldHead?: number;
}

/** Splits a long string into the part shown folded and the number of characters hidden. */
export function foldString(s: string, foldAt = 120, head = 80): { head: string; hidden: number } | null {
  const chars = Array.from(s);
  if (chars.length <= foldAt) return null;
  const shown = Math.min(head, foldAt);
  return { head: chars.slice(0, shown).join(''), hidden: chars.length - shown };
}

export function jsonTokens(value: unknown, options: JsonViewOptions = {}): Token[] {
  const indent = options.indent ?? 2;
  const foldAt = options.foldAt ?? 120;
  const foldHead = options.foldHead ?? 80;
  const out: Token[] = [];
  let nextId = 0;
  const push = (kind: TokenKind, text: string) => out.push({ kind, text });
  const pad = (depth: number) => push('space', `\n${' '.repeat(depth * indent)}`);

  const str = (s: string, kind: 'string' | 'key') => {
    const text = visible(JSON.stringify(s));
    const fold = kind === 'string' ? foldString(s, foldAt, foldHead) : null;
    if (fold) {
      const head = visible(JSON.stringify(fold.head)).slice(0, -1); // open quote, no closing quote
      out.push({ kind, text, fold: { head, hidden: fold.hidden }, id: nextId++ });
    } else {
      push(kind, text);
    }
  };

  const walk = (v: unknown, depth: number) => {
    if (v === null || v === undefined) push('null', 'null');
    else if (typeof v === 'string') str(v, 'string');
    else if (v instanceof JsonNumber) push('number', v.text);
    else if (typeof v === 'number') push('number', Number.isFinite(v) ? String(v) : 'null');
    else if (typeof v === 'boolean') push('boolean', String(v));
    else if (Array.isArray(v)) {
      if (v.length === 0) return push('punct', '[]');
      push('punct', '[');
      v.forEach((item, i) => {
        pad(depth + 1);
        walk(item, depth + 1);
        if (i < v.length - 1) push('punct', ',');
      });
      pad(depth);
      push('punct', ']');
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return push('punct', '{}');
      push('punct', '{');
      entries.forEach(([k, item], i) => {
        pad(depth + 1);
        str(k, 'key');
        push('punct', ': ');
        walk(item, depth + 1);
        if (i < entries.length - 1) push('punct', ',');
      });
      pad(depth);
      push('punct', '}');
    } else {
      push('string', JSON.stringify(String(v)));
    }
  };
  walk(value, 0);
  return out;
}

/** The text of the tokens, folded ones shortened unless their id is in `open`. */
export function tokensText(tokens: Token[], open: Set<number> = new Set()): string {
  return tokens
    .map((t) => (t.fold && t.id !== undefined && !open.has(t.id) ? `${t.fold.head}…"` : t.text))
    .join('');
}
