// Text from agents and servers, shown to the person deciding, exactly as it will be used.
//
// - `parseExact`: JSON.parse turns every number into a double, so 12345678901234567890 would be
//   shown as 12345678901234567000 while the gateway forwards the original digits. This parse
//   keeps each number as its JSON text (a `JsonNumber`); everything else is as JSON.parse gives.
// - `visible`: bidi controls reorder what is shown (`exe.txt` for `txt.exe`), zero-width and
//   control characters hide it; they are shown as `\u{..}` escapes, the same form the CLI uses.

/** A JSON number kept as the digits it was written with. */
export class JsonNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What `parseExact` returns: JSON.parse's values, with numbers as `JsonNumber`. */
export type ExactValue = null | boolean | string | JsonNumber | ExactValue[] | { [key: string]: ExactValue };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS: [string, ExactValue][] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** Parses JSON text like JSON.parse, keeping numbers exact. Throws SyntaxError on bad input. */
export function parseExact(text: string): ExactValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const string = (): string => {
    // A JSON string literal; JSON.parse decodes its escapes exactly as the spec says.
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (depth: number): ExactValue => {
    if (depth > 512) fail('nesting too deep');
    space();
    const c = text[i];
    if (c === '"') return string();
    if (c === '{') {
      i++;
      // No prototype: a key such as `__proto__` is an ordinary key here, as in JSON.parse.
      const out = Object.create(null) as { [key: string]: ExactValue };
      space();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        space();
        if (text[i++] !== ':') fail('expected ":"');
        out[key] = value(depth + 1);
        space();
        const next = text[i++];
        if (next === '}') return out;
        if (next !== ',') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out: ExactValue[] = [];
      space();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        space();
        const next = text[i++];
        if (next === ']') return out;
        if (next !== ',') fail('expected "," or "]"');
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) {
      i += number[0].length;
      return new JsonNumber(number[0]);
    }
    for (const [word, literal] of LITERALS) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return literal;
      }
    }
    return fail('unexpected character');
  };
  const out = value(0);
  space();
  if (i < text.length) fail('unexpected text after the value');
  return out;
}

/** The arguments of a held call as the prompt shows them: from their JSON text when the gateway
 * sent it (exact numbers), else the parsed value. */
export function exactArguments(call: { arguments: unknown; arguments_json?: string | null }): unknown {
  if (typeof call.arguments_json === 'string') {
    try {
      return parseExact(call.arguments_json);
    } catch {
      // Not expected from the gateway; the rounded value is still better than nothing.
    }
  }
  return call.arguments;
}

/** Characters that steer or hide text: controls (C0, DEL, C1), bidi embeddings, overrides,
 * isolates and marks, zero-width characters, the BOM, line and paragraph separators. Same set as
 * the Rust side (`portcullis_audit::neutralize::is_hidden`). */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** `text` with every hidden character shown as its `\u{..}` escape. */
export function visible(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}

/** Like `visible`, but keeps line breaks (descriptions shown as a block). */
export function visibleBlock(text: string): string {
  return text.split('\n').map(visible).join('\n');
}

/** Pretty JSON text of a `parseExact` value, every number with its original digits. */
export function stringifyExact(v: ExactValue, indent = 2, depth = 0): string {
  const pad = (d: number) => '\n' + ' '.repeat(d * indent);
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return `[${v.map((x) => pad(depth + 1) + stringifyExact(x, indent, depth + 1)).join(',')}${pad(depth)}]`;
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return '{}';
    const body = keys.map((k) => `${pad(depth + 1)}${JSON.stringify(k)}: ${stringifyExact(v[k], indent, depth + 1)}`);
    return `{${body.join(',')}${pad(depth)}}`;
  }
  return JSON.stringify(v);
}
