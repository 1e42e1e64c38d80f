import { describe, expect, it } from 'vitest';
import type { PolicyDoc } from '../policy-model';
import { SEED, viewOf } from '../__fixtures__/seed-policy';
import { deleteRule, describeRule, moveRule, newRuleIndex, putRule, rulesKey, rulesOf, type Rule } from '../rule-edit';

const entry = (doc: PolicyDoc, key: string) => (doc.tools as Record<string, Record<string, unknown>>)[key];
const DENY_ETC: Rule = { when: { 'arguments.path': { prefix: '/etc' } }, action: 'deny', reason: 'not /etc' };

describe('describeRule', () => {
  it('says the decision, the conditions and the reason', () => {
    expect(describeRule({ when: { 'arguments.path': { prefix: '/etc' } }, action: 'deny', reason: 'not /etc' })).toBe(
      'deny when path starts with /etc — reason “not /etc”',
    );
    expect(describeRule(entry(SEED, 'execute_query').rules && (entry(SEED, 'execute_query').rules as unknown[])[0])).toBe(
      'allow when query matches regex ^\\s*SELECT\\b',
    );
    expect(describeRule({ when: { 'arguments.x': { eq: 1 } }, action: 'require_approval' })).toBe('ask when x is 1');
    expect(describeRule({ action: 'deny' })).toMatch(/^not a rule the form can read/);
  });
});

describe('putRule / moveRule / deleteRule', () => {
  it('adds to the own entry, keeping its other fields and their order; a new deny goes first', () => {
    const out = putRule(SEED, 'execute_query', viewOf(SEED, 'execute_query'), null, DENY_ETC);
    const e = entry(out, 'execute_query');
    expect(Object.keys(e)).toEqual(['action', 'rules', 'class']);
    expect(e.rules).toEqual([
      { when: { 'arguments.path': { prefix: '/etc' } }, action: 'deny', reason: 'not /etc' },
      { when: { 'arguments.query': { regex: '^\\s*SELECT\\b' } }, action: 'allow' },
    ]);
    expect(Object.keys(out.tools as object)).toEqual(Object.keys(SEED.tools as object));
    expect(SEED.tools).toEqual(structuredClone(SEED.tools)); // the input is not changed
  });

  it('puts `rules` where the documentation order has it in an entry without one', () => {
    const out = putRule(SEED, 'vm_start', viewOf(SEED, 'vm_start'), null, DENY_ETC);
    expect(Object.keys(entry(out, 'vm_start'))).toEqual(['action', 'approval_timeout', 'rules']);
    expect(rulesOf(out, rulesKey(out, 'vm_start', viewOf(SEED, 'vm_start')))).toHaveLength(1);
  });

  it('replaces a rule in place; an empty reason is left out', () => {
    const out = putRule(SEED, 'execute_query', viewOf(SEED, 'execute_query'), 0, { ...DENY_ETC, reason: '  ' });
    expect(entry(out, 'execute_query').rules).toEqual([{ when: { 'arguments.path': { prefix: '/etc' } }, action: 'deny' }]);
  });

  it('a tool decided by a glob gets its own entry, copied from the glob, which stays as it was', () => {
    const view = viewOf(SEED, 'pve_get_vm_status');
    expect(rulesKey(SEED, 'pve_get_vm_status', view)).toBe('pve_get_*_status');
    const out = putRule(SEED, 'pve_get_vm_status', view, null, DENY_ETC);
    expect(entry(out, 'pve_get_vm_status')).toEqual({ rate_limit: { max: 10, window: 60 }, rules: [{ ...DENY_ETC }] });
    expect(entry(out, 'pve_get_*_status')).toEqual({ rate_limit: { max: 10, window: 60 } });
  });

  it('a tool decided by the default gets an entry in the state the form shows', () => {
    const out = putRule(SEED, 'unlisted', viewOf(SEED, 'unlisted'), null, { ...DENY_ETC, action: 'allow', reason: null });
    expect(entry(out, 'unlisted')).toEqual({ action: 'deny', rules: [{ when: DENY_ETC.when, action: 'allow' }] });
  });

  it.each<[Rule['action'], unknown[], number]>([
    ['deny', [], 0],
    ['deny', [{ action: 'allow' }], 0],
    ['allow', [{ action: 'allow' }, { action: 'deny' }, { action: 'allow' }], 2],
    ['require_approval', [{ action: 'deny' }], 1],
    ['allow', [{ action: 'allow' }], 0],
  ])('a new %s rule among %j goes at %d (never loosening a deny)', (action, rules, at) => {
    expect(newRuleIndex(rules, action)).toBe(at);
  });

  it('moves change the order (the first match wins); deleting the last rule drops `rules`', () => {
    const two = putRule(SEED, 'execute_query', viewOf(SEED, 'execute_query'), null, DENY_ETC);
    const view = viewOf(SEED, 'execute_query');
    const moved = moveRule(two, 'execute_query', view, 0, 1);
    expect((entry(moved, 'execute_query').rules as Rule[]).map((r) => r.action)).toEqual(['allow', 'deny']);
    const back = moveRule(moved, 'execute_query', view, 1, 0);
    expect((entry(back, 'execute_query').rules as Rule[]).map((r) => r.action)).toEqual(['deny', 'allow']);
    const one = deleteRule(back, 'execute_query', view, 1);
    expect((entry(one, 'execute_query').rules as Rule[]).map((r) => r.action)).toEqual(['deny']);
    const none = deleteRule(one, 'execute_query', view, 0);
    expect(Object.keys(entry(none, 'execute_query'))).toEqual(['action', 'class']);
    expect(() => moveRule(two, 'execute_query', view, 1, 2)).toThrow(/No rule/);
    expect(() => deleteRule(two, 'execute_query', view, 5)).toThrow(/no rule 6/);
  });

  it('refuses hidden tools, whose calls no rule can let through', () => {
    expect(() => putRule(SEED, 'delete_disk', viewOf(SEED, 'delete_disk'), null, DENY_ETC)).toThrow(/delete_\*/);
    expect(() => putRule(SEED, 'secret_tool', viewOf(SEED, 'secret_tool'), null, DENY_ETC)).toThrow(/hidden/);
    expect(rulesKey(SEED, 'secret_tool', viewOf(SEED, 'secret_tool'))).toBeNull();
  });
});
