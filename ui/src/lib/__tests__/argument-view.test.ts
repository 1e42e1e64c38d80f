import { describe, expect, it } from 'vitest';
import { argumentEntries, entriesBesideDiff, FOLD_BYTES, FOLD_LINES, formatSize, preview, sizeLabel } from '../argument-view';
import { editPairs } from '../line-diff';

describe('argument view: every argument in view, a long one folded with its size', () => {
  it('a write with a path and a long content: the path whole, the content folded', () => {
    const content = Array.from({ length: 300 }, (_, i) => `line ${i} of the file`).join('\n');
    const [path, body] = argumentEntries({ path: '/home/me/notes.md', content });
    expect([path.key, path.kind, path.folded, path.inline]).toEqual(['path', 'path', false, true]);
    expect([body.key, body.folded, sizeLabel(body)]).toEqual(['content', true, '6.2 kB, 300 lines']);
  });

  it('folds past FOLD_LINES lines or FOLD_BYTES bytes (UTF-8), not before', () => {
    const lines = (n: number) => Array.from({ length: n }, () => 'x').join('\n');
    expect(argumentEntries({ v: lines(FOLD_LINES) })[0].folded).toBe(false);
    expect(argumentEntries({ v: lines(FOLD_LINES + 1) })[0].folded).toBe(true);
    expect(argumentEntries({ v: 'é'.repeat(FOLD_BYTES / 2) })[0]).toMatchObject({ bytes: FOLD_BYTES, folded: false });
    expect(argumentEntries({ v: 'é'.repeat(FOLD_BYTES / 2 + 1) })[0].folded).toBe(true);
    expect(argumentEntries({ v: { list: Array.from({ length: 10 }, (_, i) => i) } })[0]).toMatchObject({ kind: 'json', folded: true });
  });

  it('a short one-line value sits on its name\'s line; a longer or multi-line one below it', () => {
    const [n, s, long, two] = argumentEntries({ n: 1, s: 'x'.repeat(40), long: 'x'.repeat(41), two: 'a\nb' });
    expect([n.inline, s.inline, long.inline, two.inline]).toEqual([true, true, false, false]);
  });

  it('sizes read as a person reads them', () => {
    expect([0, 999, 1000, 12_400, 999_949, 3_100_000].map(formatSize)).toEqual(['0 B', '999 B', '1.0 kB', '12.4 kB', '999.9 kB', '3.1 MB']);
    expect(sizeLabel({ bytes: 20, lines: ['one'] })).toBe('20 B');
  });

  it('a folded value shows its first lines, cut to a bounded length, never splitting a character', () => {
    expect(preview(['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c']);
    expect(preview(['y'.repeat(500)])).toEqual([`${'y'.repeat(180)}…`]);
    expect(preview(['😀'.repeat(200)])[0]).toBe(`${'😀'.repeat(180)}…`);
    expect(preview(['z'.repeat(170), 'w'.repeat(30), 'v'])).toEqual(['z'.repeat(170), `${'w'.repeat(10)}…`]);
  });

  it('beside a diff, the arguments the diff does not show', () => {
    const edit = { path: '/a.ts', edits: [{ oldText: 'a', newText: 'b' }], dryRun: false };
    expect(entriesBesideDiff(edit, editPairs(edit)).map((e) => e.key)).toEqual(['path', 'dryRun']);
    const own = { file_path: '/a', old_string: 'x', new_string: 'y', replace_all: true };
    expect(entriesBesideDiff(own, editPairs(own)).map((e) => e.key)).toEqual(['file_path', 'replace_all']);
  });
});
