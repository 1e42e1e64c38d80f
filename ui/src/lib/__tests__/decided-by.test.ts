import { describe, expect, it } from 'vitest';
import { decidedBySentence, decidedByShort } from '../decided-by';
import type { DecidedBy } from '../types';

describe('decided-by words', () => {
  it('never repeats the decision as its own cause', () => {
    expect(decidedBySentence('timeout')).toBe('because no one decided in time');
    expect(decidedByShort('user')).toBe('person');
  });

  it('has words for every decider and falls back to the raw name for a new one', () => {
    const all: DecidedBy[] = ['policy', 'user', 'timeout', 'client', 'gateway'];
    for (const by of all) expect(decidedBySentence(by)).not.toContain(by === 'user' ? 'user' : `by ${by}`);
    expect(decidedBySentence('later' as DecidedBy)).toBe('by later');
  });
});
