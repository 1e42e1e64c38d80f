import { describe, expect, it } from 'vitest';
import { isGlob } from '../glob';

describe('isGlob', () => {
  it.each([
    ['delete_*', true],
    ['vm_?', true],
    ['vm_[0-9]', true],
    ['read_file', false],
    ['a.b', false],
  ])('%s: %s', (pattern, expected) => {
    expect(isGlob(pattern)).toBe(expected);
  });
});
