// A line diff for edit-style tool calls (DESIGN §5 "arguments as a person reads them"): when a
// held call replaces text — server-filesystem's `edit_file` sends `edits: [{oldText, newText}]`,
// other servers send `{old_string, new_string}` or similar — the person should read what changes,
// not two blobs to compare by eye. The diff is a plain longest-common-subsequence over lines:
// edits are short, and the table is bounded (MAX_CELLS) so a huge argument falls back to the
// raw view instead of freezing the prompt.

export type DiffLine = { op: 'same' | 'del' | 'add'; text: string };

export interface EditPair {
  /** Where the pair sits in the arguments ("edits[0]", or "" for the arguments themselves). */
  at: string;
  oldText: string;
  newText: string;
}

const MAX_CELLS = 250_000;

/** The line diff of `a` to `b`, or null when the inputs are too large to diff here. */
export function lineDiff(a: string, b: string): DiffLine[] | null {
  const x = a.split('\n');
  const y = b.split('\n');
  if ((x.length + 1) * (y.length + 1) > MAX_CELLS) return null;
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..].
  const lcs: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      out.push({ op: 'same', text: x[i++] });
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: 'del', text: x[i++] });
    } else {
      out.push({ op: 'add', text: y[j++] });
    }
  }
  while (i < x.length) out.push({ op: 'del', text: x[i++] });
  while (j < y.length) out.push({ op: 'add', text: y[j++] });
  return out;
}

// Keys that name the old and new text of one replacement, compared without case, `_` or `-`.
const OLD_KEYS = new Set(['oldtext', 'oldstring', 'oldstr', 'old', 'search', 'find', 'before', 'original']);
const NEW_KEYS = new Set(['newtext', 'newstring', 'newstr', 'new', 'replace', 'replacement', 'after', 'updated']);

const norm = (k: string) => k.toLowerCase().replace(/[_-]/g, '');

function pairOf(at: string, obj: Record<string, unknown>): EditPair | null {
  let oldText: string | undefined;
  let newText: string | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v !== 'string') continue;
    if (OLD_KEYS.has(norm(k))) oldText ??= v;
    else if (NEW_KEYS.has(norm(k))) newText ??= v;
  }
  return oldText !== undefined && newText !== undefined ? { at, oldText, newText } : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The old/new string pairs in a call's arguments: the arguments object itself, or any
 * top-level argument that is such an object or an array of them. Empty when the call is not
 * an edit.
 */
export function editPairs(args: unknown): EditPair[] {
  if (!isObject(args)) return [];
  const own = pairOf('', args);
  if (own) return [own];
  const pairs: EditPair[] = [];
  for (const [key, v] of Object.entries(args)) {
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const p = isObject(item) ? pairOf(`${key}[${i}]`, item) : null;
        if (p) pairs.push(p);
      });
    } else if (isObject(v)) {
      const p = pairOf(key, v);
      if (p) pairs.push(p);
    }
  }
  return pairs;
}
