import { describe, expect, it } from 'vitest';
import { decidedBySentence, decidedByShort } from '../decided-by';
import type { DecidedBy } from '../types';

describe('decided-by words', () => {
  const all: DecidedBy[] = ['policy', 'user', 'timeout', 'client', 'gateway'];

  it('shows each value as the CLI prints it: the one who decides is "user", never "person"', () => {
    expect(all.map(decidedByShort)).toEqual(['policy', 'user', 'timeout', 'client', 'gateway']);
    expect(decidedBySentence('user')).toBe('by the user');
    for (const by of all) expect(`${decidedByShort(by)} ${decidedBySentence(by)}`).not.toMatch(/person|people|human/i);
  });

  it('never repeats the decision as its own cause, and falls back to the raw name for a new one', () => {
    expect(decidedBySentence('timeout')).toBe('because no one decided in time');
    for (const by of all.filter((b) => b !== 'user' && b !== 'policy')) expect(decidedBySentence(by)).not.toContain(`by ${by}`);
    expect(decidedBySentence('later' as DecidedBy)).toBe('by later');
    expect(decidedByShort('later' as DecidedBy)).toBe('later');
  });
});
