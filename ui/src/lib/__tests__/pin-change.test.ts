import { describe, expect, it } from 'vitest';
import { descriptionChange, diffLine, shortValue, VALUE_CHARS } from '../pin-change';
import { makePinChange } from '../mock-data';

describe('pin-change', () => {
  it('shortValue: strings bare, others compact JSON, long ones cut to the limit with …', () => {
    expect(shortValue('two\n  lines')).toBe('two lines');
    expect(shortValue({ a: [1, 2] })).toBe('{"a":[1,2]}');
    const long = shortValue('x'.repeat(VALUE_CHARS * 2));
    expect(long).toHaveLength(VALUE_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });

  it('diffLine marks added, removed and changed values', () => {
    expect(diffLine({ path: 'a', change: 'added', old: null, new: 1 })).toBe('a: + 1');
    expect(diffLine({ path: 'b', change: 'removed', old: 'x', new: null })).toBe('b: − x');
    expect(diffLine({ path: 'c', change: 'changed', old: true, new: false })).toBe('c: true → false');
  });

  it('descriptionChange only when the description is a changed field', () => {
    const change = makePinChange();
    expect(descriptionChange(change)).toEqual({
      old: (change.old as { description: string }).description,
      new: (change.new as { description: string }).description,
    });
    expect(descriptionChange(makePinChange({ fields: ['annotations'] }))).toBeNull();
  });
});
