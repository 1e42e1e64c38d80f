// Arguments as a person reads them (DESIGN §5 "the prompt explains the call"): one entry per
// top-level argument; a string is shown as its lines and marked when it is a URL, a path or a
// command so it stands out; any other value is exact JSON (every digit kept). Hidden characters
// (bidi, controls) are made visible by the view.
//
// Every argument is in view, whole or folded — never hidden below a scroll without a sign. A
// long value (a file's content, a big object) is folded: its name, its size and "folded" are
// shown on one line with a button that unfolds it, and its first lines are shown under it. So a
// write with `path` and a long `content` shows both at a glance in the small prompt window.

import { JsonNumber, stringifyExact, type ExactValue } from './exact-json';
import type { EditPair } from './line-diff';

export type ArgumentKind = 'url' | 'path' | 'command' | 'text' | 'json';

export interface ArgumentEntry {
  key: string;
  kind: ArgumentKind;
  /** The lines shown (a string's own lines; pretty JSON's lines). */
  lines: string[];
  /** The value's size: UTF-8 bytes of the string, or of its JSON text. */
  bytes: number;
  /** Too long to show whole at first: shown folded (see `preview`, `sizeLabel`). */
  folded: boolean;
  /** Short enough to sit on its name's line (`count 1`), which saves the small box a line. */
  inline: boolean;
}

/** A value with more lines than this, or more bytes than FOLD_BYTES, starts folded. */
export const FOLD_LINES = 6;
export const FOLD_BYTES = 480;
/** A one-line value up to this many characters is shown on its name's line. */
export const INLINE_CHARS = 40;
/** What a folded value shows of itself: its first lines, cut to this many characters in all. */
export const PREVIEW_LINES = 3;
export const PREVIEW_CHARS = 180;

const COMMAND_KEY = /^(command|cmd|script|shell|exec|code|query|sql)$/i;

export function kindOf(key: string, value: string): ArgumentKind {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'url';
  if (COMMAND_KEY.test(key)) return 'command';
  if (!value.includes('\n') && /^(\/|~\/|\.\.?\/|[A-Za-z]:\\)/.test(value)) return 'path';
  return 'text';
}

function entry(key: string, kind: ArgumentKind, text: string): ArgumentEntry {
  const lines = text.split('\n');
  const bytes = new TextEncoder().encode(text).length;
  const folded = lines.length > FOLD_LINES || bytes > FOLD_BYTES;
  return { key, kind, lines, bytes, folded, inline: lines.length === 1 && [...text].length <= INLINE_CHARS };
}

/** The entries of `args` (from `parseExact`); a non-object is one JSON entry without a key. */
export function argumentEntries(args: unknown): ArgumentEntry[] {
  const json = (key: string, v: unknown) => entry(key, 'json', stringifyExact(v as ExactValue));
  if (args === null || typeof args !== 'object' || Array.isArray(args) || args instanceof JsonNumber) {
    return [json('', args)];
  }
  return Object.entries(args as Record<string, unknown>).map(([key, v]) =>
    typeof v === 'string' ? entry(key, kindOf(key, v), v) : json(key, v),
  );
}

/**
 * The entries a line diff of `pairs` does not already show (server-filesystem's `edit_file`:
 * `path` and `dryRun` beside `edits`), so the diff view hides no argument.
 */
export function entriesBesideDiff(args: unknown, pairs: EditPair[]): ArgumentEntry[] {
  const inDiff = new Set(pairs.map((p) => p.at.replace(/\[\d+\]$/, '')));
  const own = pairs.find((p) => p.at === '');
  const obj = (args ?? {}) as Record<string, unknown>;
  return argumentEntries(args).filter(
    (e) => !inDiff.has(e.key) && !(own && (obj[e.key] === own.oldText || obj[e.key] === own.newText)),
  );
}

/** A size as a person reads it: "812 B", "12.4 kB", "3.1 MB" (powers of 1000, as "kB" says). */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The size of an entry, and its line count when it has several: "12.4 kB, 202 lines". */
export function sizeLabel(e: Pick<ArgumentEntry, 'bytes' | 'lines'>): string {
  return e.lines.length > 1 ? `${formatSize(e.bytes)}, ${e.lines.length} lines` : formatSize(e.bytes);
}

/** The first lines of a folded value, cut to PREVIEW_CHARS in all (a cut line ends in "…"). */
export function preview(lines: string[]): string[] {
  const out: string[] = [];
  let left = PREVIEW_CHARS;
  for (const line of lines.slice(0, PREVIEW_LINES)) {
    if (left <= 0) break;
    const chars = [...line]; // code points: a cut never splits a surrogate pair
    out.push(chars.length > left ? `${chars.slice(0, left).join('')}…` : line);
    left -= chars.length;
  }
  return out;
}
