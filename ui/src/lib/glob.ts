// Tool name patterns of the policy format (policies/README.md, "Tool name patterns"):
// `*` any run (`**` the same), `?` one character, `[abc]` / `[a-z]` / `[!a-z]` / `[^a-z]` a class.
// Everything else is literal. Matching is case-sensitive and covers the whole name.

interface Compiled {
  regex: RegExp;
  literals: number;
  wildcards: number;
}

const cache = new Map<string, Compiled>();

function escape(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

function compile(pattern: string): Compiled {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const chars = Array.from(pattern);
  let source = '';
  let literals = 0;
  let wildcards = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '*') {
      while (chars[i + 1] === '*') i++;
      source += '[\\s\\S]*';
      wildcards++;
    } else if (c === '?') {
      source += '[\\s\\S]';
      wildcards++;
    } else if (c === '[') {
      const close = chars.indexOf(']', i + 2);
      if (close === -1) {
        source += escape(c);
        literals++;
        continue;
      }
      let body = chars.slice(i + 1, close);
      const negated = body[0] === '!' || body[0] === '^';
      if (negated) body = body.slice(1);
      if (!negated && body.length === 1) {
        // `[*]`: how a literal `*` is written; the key still names one tool.
        source += escape(body[0]);
        literals++;
        i = close;
        continue;
      }
      const inner = body.map((b) => (b === '-' ? '-' : escape(b))).join('');
      source += negated ? `[^${inner}]` : `[${inner}]`;
      wildcards++;
      i = close;
    } else {
      source += escape(c);
      literals++;
    }
  }
  let regex: RegExp;
  try {
    regex = new RegExp(`^${source}$`, 'u');
  } catch {
    regex = /(?!)/; // an invalid class never matches; the gateway reports the pattern
  }
  const compiled = { regex, literals, wildcards };
  cache.set(pattern, compiled);
  return compiled;
}

export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

export function globMatches(pattern: string, name: string): boolean {
  if (!isGlob(pattern)) return pattern === name;
  return compile(pattern).regex.test(name);
}

/**
 * The key of `keys` that decides `name`: the exact name, else the most specific matching glob
 * (most literal characters, then fewest wildcards, then first written), else null.
 */
export function decidingKey(keys: string[], name: string): string | null {
  if (keys.includes(name)) return name;
  const exact = keys.find((key) => isGlob(key) && compile(key).wildcards === 0 && globMatches(key, name));
  if (exact) return exact;
  let best: { key: string; literals: number; wildcards: number } | null = null;
  for (const key of keys) {
    if (!isGlob(key) || !globMatches(key, name)) continue;
    const { literals, wildcards } = compile(key);
    if (
      !best ||
      literals > best.literals ||
      (literals === best.literals && wildcards < best.wildcards)
    ) {
      best = { key, literals, wildcards };
    }
  }
  return best?.key ?? null;
}
