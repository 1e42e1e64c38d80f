// A JSON parser that remembers where each value sits in the text, so problems reported by JSON
// path (ours or the gateway's) can be shown on their line. It also refuses a key repeated within
// one object, as the gateway's loader does.

export type Segment = string | number;

export interface Position {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
  offset: number;
}

export type ParseResult =
  | { ok: true; value: unknown; locate: (path: Segment[]) => Position | null }
  | { ok: false; message: string; position: Position };

class ParseError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

function positionOf(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1, offset };
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

export function parseJson(text: string): ParseResult {
  let i = 0;
  const offsets = new Map<string, number>();

  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const fail = (message: string, at = i): never => {
    throw new ParseError(message, at);
  };
  const describeHere = () => (i >= text.length ? 'end of input' : `'${text[i]}'`);

  const string = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string', start);
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && e in ESCAPES) {
          out += ESCAPES[e];
          i += 2;
        } else {
          fail('invalid escape');
        }
      } else if (c.charCodeAt(0) < 0x20) {
        fail('control character in string');
      } else {
        out += c;
        i++;
      }
    }
  };

  const number = (): number => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail(`expected a value, found ${describeHere()}`);
    i += m![0].length;
    return Number(m![0]);
  };

  const value = (path: Segment[], depth: number): unknown => {
    if (depth > 256) fail('nesting too deep');
    ws();
    const key = JSON.stringify(path);
    if (!offsets.has(key)) offsets.set(key, i);
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a key in double quotes, found ${describeHere()}`);
        const keyStart = i;
        const name = string();
        if (seen.has(name)) fail(`duplicate key "${name}"`, keyStart);
        seen.add(name);
        offsets.set(JSON.stringify([...path, name]), keyStart);
        ws();
        if (text[i] !== ':') fail(`expected ':', found ${describeHere()}`);
        i++;
        const v = value([...path, name], depth + 1);
        Object.defineProperty(obj, name, { value: v, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail(`expected ',' or '}', found ${describeHere()}`);
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value([...path, arr.length], depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail(`expected ',' or ']', found ${describeHere()}`);
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    return fail(`expected a value, found ${describeHere()}`);
  };

  try {
    const result = value([], 0);
    ws();
    if (i < text.length) fail(`unexpected ${describeHere()} after the document`);
    const locate = (path: Segment[]): Position | null => {
      // The deepest known prefix: a problem about a missing field points at its parent.
      for (let n = path.length; n >= 0; n--) {
        const at = offsets.get(JSON.stringify(path.slice(0, n)));
        if (at !== undefined) return positionOf(text, at);
      }
      return null;
    };
    return { ok: true, value: result, locate };
  } catch (e) {
    if (e instanceof ParseError) {
      return { ok: false, message: e.message, position: positionOf(text, e.offset) };
    }
    throw e;
  }
}

/**
 * Reads a problem path as the gateway writes it — `$`, `$.tools["vm_start"].rate_limit.max`,
 * `$.hide[0]` — into segments. Unknown syntax ends the reading (the prefix still locates).
 */
export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  let i = path.startsWith('$') ? 1 : 0;
  while (i < path.length) {
    if (path[i] === '.') {
      const m = /^\.([^.[\]]+)/.exec(path.slice(i));
      if (!m) break;
      out.push(m[1]);
      i += m[0].length;
    } else if (path[i] === '[') {
      const rest = path.slice(i);
      const index = /^\[(\d+)\]/.exec(rest);
      if (index) {
        out.push(Number(index[1]));
        i += index[0].length;
        continue;
      }
      const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest);
      if (!quoted) break;
      out.push(JSON.parse(quoted[1]) as string);
      i += quoted[0].length;
    } else {
      // A path without `$` and dots: `tools.x` style from older callers.
      const m = /^([^.[\]]+)/.exec(path.slice(i));
      if (!m) break;
      out.push(m[1]);
      i += m[0].length;
    }
  }
  return out;
}

/** Writes segments the way the gateway does: plain names with dots, other keys bracketed. */
export function formatPath(path: Segment[]): string {
  let out = '$';
  for (const s of path) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** Pretty-prints like the gateway's policy writer: 2-space indent and a trailing newline. */
export function stringifyPretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
