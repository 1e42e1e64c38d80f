// Arguments as a person reads them (DESIGN §5 "the prompt explains the call"): one entry per
// top-level argument; a string is shown as its lines — never folded behind a character count,
// the first lines always in view and the rest a scroll away — and marked when it is a URL, a
// path or a command so it stands out; any other value is exact JSON (every digit kept). Hidden
// characters (bidi, controls) are made visible by the view.

import { JsonNumber, stringifyExact, type ExactValue } from './exact-json';

export type ArgumentKind = 'url' | 'path' | 'command' | 'text' | 'json';

export interface ArgumentEntry {
  key: string;
  kind: ArgumentKind;
  /** The lines shown (a string's own lines; pretty JSON's lines). */
  lines: string[];
}

const COMMAND_KEY = /^(command|cmd|script|shell|exec|code|query|sql)$/i;

export function kindOf(key: string, value: string): ArgumentKind {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'url';
  if (COMMAND_KEY.test(key)) return 'command';
  if (!value.includes('\n') && /^(\/|~\/|\.\.?\/|[A-Za-z]:\\)/.test(value)) return 'path';
  return 'text';
}

/** The entries of `args` (from `parseExact`); a non-object is one JSON entry without a key. */
export function argumentEntries(args: unknown): ArgumentEntry[] {
  const json = (key: string, v: unknown): ArgumentEntry => ({
    key,
    kind: 'json',
    lines: stringifyExact(v as ExactValue).split('\n'),
  });
  if (args === null || typeof args !== 'object' || Array.isArray(args) || args instanceof JsonNumber) {
    return [json('', args)];
  }
  return Object.entries(args as Record<string, unknown>).map(([key, v]) =>
    typeof v === 'string' ? { key, kind: kindOf(key, v), lines: v.split('\n') } : json(key, v),
  );
}
