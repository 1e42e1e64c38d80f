import { describe, expect, it } from 'vitest';
import { decidingKey, globMatches } from '../glob';

describe('glob', () => {
  it.each([
    ['delete_*', 'delete_vm', true],
    ['delete_*', 'delete_', true],
    ['delete_*', 'undelete_vm', false],
    ['a**b', 'a/x/b', true],
    ['vm_?', 'vm_1', true],
    ['vm_?', 'vm_12', false],
    ['vm_[0-9]', 'vm_7', true],
    ['vm_[!0-9]', 'vm_7', false],
    ['vm_[^0-9]', 'vm_x', true],
    ['a.b', 'axb', false],
    ['a.b', 'a.b', true],
    ['{x}', '{x}', true],
    ['Get*', 'get_x', false],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(globMatches(pattern, name)).toBe(expected);
  });

  it('exact name first, then most literal characters, then fewer wildcards, then first written', () => {
    expect(decidingKey(['pve_*', 'pve_get_*_status', 'pve_get_vm_status'], 'pve_get_vm_status')).toBe('pve_get_vm_status');
    expect(decidingKey(['pve_*', 'pve_get_*_status'], 'pve_get_vm_status')).toBe('pve_get_*_status');
    expect(decidingKey(['a*c*', 'a*cd'], 'abcd')).toBe('a*cd');
    expect(decidingKey(['ab*', 'a*b'], 'abb')).toBe('ab*');
    expect(decidingKey(['x*'], 'y')).toBeNull();
  });
});
