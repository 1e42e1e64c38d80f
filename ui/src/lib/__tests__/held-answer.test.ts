import { describe, expect, it } from 'vitest';
import { fitsHeldAnswer, holdsIt, isHeldAnswer } from '../held-answer';
import { makeApproval, makeHeldAnswer } from '../mock-data';
import type { ApprovalChoice } from '../types';

describe('held answer', () => {
  it('is a pending approval with its answer set', () => {
    expect(isHeldAnswer(makeHeldAnswer())).toBe(true);
    expect(isHeldAnswer(makeApproval())).toBe(false);
    expect(isHeldAnswer(null)).toBe(false);
  });

  it('is held by the findings whose action is hold, not by those stripped, redacted or flagged', () => {
    const findings = makeHeldAnswer().answer!.findings;
    expect(findings.filter(holdsIt).map((f) => f.what)).toEqual(['AWS access key', 'tag characters']);
    for (const action of ['strip', 'redact', 'flag', 'passed', 'refused']) expect(holdsIt({ action })).toBe(false);
  });

  it('takes approve once and deny without "always", as the keeper does, and nothing else', () => {
    const fits: ApprovalChoice[] = [{ approve: 'once' }, { deny: { reason: null, always: false } }, { deny: { reason: 'no', always: false } }];
    const refused: ApprovalChoice[] = [
      { approve: 'session' },
      { approve: 'always' },
      { deny: { reason: null, always: true } },
      { edit: { arguments_json: '{}' } },
      { grant: { allow: true, reason: null, every_session: false, duration_secs: 3600, when: null, exact: false } },
      { rule: { allow: false, reason: null, when: {} } },
    ];
    for (const c of fits) expect(fitsHeldAnswer(c), JSON.stringify(c)).toBe(true);
    for (const c of refused) expect(fitsHeldAnswer(c), JSON.stringify(c)).toBe(false);
  });
});
