import { describe, expect, it } from 'vitest';
import { editPairs, lineDiff } from '../line-diff';

describe('lineDiff', () => {
  it('keeps common lines and marks removed and added ones', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc\nd')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'del', text: 'b' },
      { op: 'add', text: 'x' },
      { op: 'same', text: 'c' },
      { op: 'add', text: 'd' },
    ]);
  });

  it('diffs identical text as all same, and empty old text as one empty line removed', () => {
    expect(lineDiff('a\nb', 'a\nb')?.every((l) => l.op === 'same')).toBe(true);
    expect(lineDiff('', 'n')).toEqual([
      { op: 'del', text: '' },
      { op: 'add', text: 'n' },
    ]);
  });

  it('refuses inputs too large to diff (the view falls back to raw)', () => {
    const big = Array.from({ length: 1000 }, (_, i) => String(i)).join('\n');
    expect(lineDiff(big, big + '\nx')).toBeNull();
  });
});

describe('editPairs', () => {
  it('finds edit_file edits, a nested pair and a top-level pair', () => {
    expect(editPairs({ path: '/p', edits: [{ oldText: 'a', newText: 'b' }, { note: 1 }, { oldText: 'c', newText: 'd' }] })).toEqual([
      { at: 'edits[0]', oldText: 'a', newText: 'b' },
      { at: 'edits[2]', oldText: 'c', newText: 'd' },
    ]);
    expect(editPairs({ change: { before: 'a', after: 'b' } })).toEqual([{ at: 'change', oldText: 'a', newText: 'b' }]);
    expect(editPairs({ old_string: 'a', 'new-string': 'b' })).toEqual([{ at: '', oldText: 'a', newText: 'b' }]);
  });

  it('is empty for calls that are not edits', () => {
    expect(editPairs({ path: '/p', content: 'x' })).toEqual([]);
    expect(editPairs({ old: 'a' })).toEqual([]);
    expect(editPairs({ old: 1, new: 2 })).toEqual([]);
    expect(editPairs(['a'])).toEqual([]);
    expect(editPairs(null)).toEqual([]);
  });
});
