import { describe, expect, it } from 'vitest';
import schema from '../../../../policies/policy.schema.json';
import type { PolicyDoc } from '../policy-model';
import { SEED, viewOf } from '../__fixtures__/seed-policy';
import { rulesKey } from '../rule-edit';
import {
  FINDING_KINDS,
  RESULTS_DEFAULTS,
  TREATMENT_CHOICES,
  entryOverrides,
  entryResults,
  fileResults,
  setFileResult,
  setToolResult,
  type FindingKind,
  type Treatment,
} from '../results-model';
import { validatePolicyValue } from '../policy-schema';

const entry = (doc: PolicyDoc, key: string) => (doc.tools as Record<string, Record<string, unknown>>)[key];
const values = (r: ReturnType<typeof fileResults>) => Object.fromEntries(FINDING_KINDS.map((k) => [k, `${r[k].value} (${r[k].source})`]));

// `results` decides no call, so the gateway's answer of what decides a tool is the SEED's.
const WITH_RESULTS: PolicyDoc = {
  version: '1',
  default: 'deny',
  hide: ['delete_*', 'secret_tool'],
  approval_timeout: 45,
  results: { secrets: 'redact', instructions: 'hold' },
  tools: {
    vm_agent_exec_status: {},
    'pve_get_*_status': { rate_limit: { max: 10, window: 60 } },
    'pve_*': { action: 'require_approval', results: { invisible: 'hold' } },
    vm_delete: { action: 'deny', reason: 'Deleting VMs is not allowed from agents' },
    vm_start: { action: 'require_approval', results: { secrets: 'flag', escapes: 'flag' }, approval_timeout: 120 },
    execute_query: (SEED.tools as Record<string, unknown>).execute_query,
  },
};

describe('the choices', () => {
  it('are those of the policy schema, defaults included', () => {
    const defs = (schema as unknown as { $defs: Record<string, { properties?: Record<string, { $ref: string; default: string }>; enum?: string[] }> }).$defs;
    const props = defs.RawResults.properties!;
    expect(Object.keys(props)).toEqual(FINDING_KINDS);
    for (const kind of FINDING_KINDS) {
      const ref = props[kind].$ref.replace('#/$defs/', '');
      expect([...TREATMENT_CHOICES[kind]].sort()).toEqual([...defs[ref].enum!].sort());
      expect(props[kind].default).toBe(RESULTS_DEFAULTS[kind]);
    }
  });
});

describe('fileResults / entryResults', () => {
  it('a file without results: the defaults', () => {
    expect(values(fileResults(SEED))).toEqual({
      invisible: 'strip (default)',
      escapes: 'strip (default)',
      secrets: 'flag (default)',
      instructions: 'flag (default)',
    });
  });

  it("the file's fields win over the defaults", () => {
    expect(values(fileResults(WITH_RESULTS))).toEqual({
      invisible: 'strip (default)',
      escapes: 'strip (default)',
      secrets: 'redact (file)',
      instructions: 'hold (file)',
    });
  });

  it("an entry's fields win over the file's, which win over the defaults", () => {
    expect(values(entryResults(WITH_RESULTS, 'vm_start'))).toEqual({
      invisible: 'strip (default)',
      escapes: 'flag (entry)',
      secrets: 'flag (entry)',
      instructions: 'hold (file)',
    });
    expect(entryOverrides(entryResults(WITH_RESULTS, 'vm_start'))).toEqual(['escapes', 'secrets']);
  });

  it('a tool takes the fields of the entry that decides it: its own, or its glob', () => {
    const key = rulesKey(WITH_RESULTS, 'pve_list_nodes', viewOf(SEED, 'pve_list_nodes'));
    expect(key).toBe('pve_*');
    expect(values(entryResults(WITH_RESULTS, key))).toMatchObject({ invisible: 'hold (entry)', secrets: 'redact (file)' });
    // Decided by the default, hidden or without an entry: the file's.
    expect(entryResults(WITH_RESULTS, null)).toEqual(fileResults(WITH_RESULTS));
    expect(entryResults(WITH_RESULTS, 'vm_agent_exec_status')).toEqual(fileResults(WITH_RESULTS));
  });

  it('a value that is not one of its choices is not taken (the schema check reports it)', () => {
    const bad: PolicyDoc = { version: '1', results: { invisible: 'redact', secrets: 'strip', escapes: 'hold' } };
    expect(values(fileResults(bad))).toMatchObject({ invisible: 'strip (default)', secrets: 'flag (default)', escapes: 'hold (file)' });
    expect(validatePolicyValue(bad).map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$.results.invisible: expected one of "strip", "flag", "hold", found the string "redact"',
      '$.results.secrets: expected one of "redact", "flag", "hold", found the string "strip"',
    ]);
  });
});

describe('setFileResult', () => {
  it('adds results where the documentation order puts it, the rest of the document as it was', () => {
    const out = setFileResult(SEED, 'secrets', 'hold');
    expect(Object.keys(out)).toEqual(['version', 'default', 'hide', 'approval_timeout', 'results', 'tools']);
    expect(out.results).toEqual({ secrets: 'hold' });
    expect({ ...out, results: undefined }).toEqual({ ...SEED, results: undefined });
    expect(SEED.results).toBeUndefined(); // the input is not changed
    expect(validatePolicyValue(out)).toEqual([]);
  });

  it('changes a field in place and puts a new one in the documentation order', () => {
    const doc: PolicyDoc = { version: '1', results: { instructions: 'hold', secrets: 'redact' }, tools: {}, default: 'allow' };
    const changed = setFileResult(doc, 'secrets', 'flag');
    expect(changed.results).toEqual({ instructions: 'hold', secrets: 'flag' });
    expect(Object.keys(changed.results as object)).toEqual(['instructions', 'secrets']);
    expect(Object.keys(changed)).toEqual(['version', 'results', 'tools', 'default']);
    const added = setFileResult(changed, 'escapes', 'hold');
    expect(Object.keys(added.results as object)).toEqual(['escapes', 'instructions', 'secrets']);
  });

  it('setting a field back to the default removes it, and an emptied results with it', () => {
    const doc: PolicyDoc = { version: '1', results: { invisible: 'flag', secrets: 'hold' }, tools: {} };
    const one = setFileResult(doc, 'invisible', null);
    expect(one).toEqual({ version: '1', results: { secrets: 'hold' }, tools: {} });
    const none = setFileResult(one, 'secrets', null);
    expect(none).toEqual({ version: '1', tools: {} });
    expect(Object.keys(none)).toEqual(['version', 'tools']);
    expect(setFileResult(none, 'secrets', null)).toBe(none); // nothing to remove: the same document
  });

  it('refuses a choice a field does not take, and a field that does not exist', () => {
    const bad: [FindingKind, string][] = [
      ['invisible', 'redact'],
      ['escapes', 'redact'],
      ['secrets', 'strip'],
      ['instructions', 'strip'],
      ['instructions', 'redact'],
      ['secrets', 'block'],
    ];
    for (const [kind, value] of bad) expect(() => setFileResult(SEED, kind, value as Treatment)).toThrow(/is not a choice for/);
    expect(() => setFileResult(SEED, 'instructions', 'strip' as Treatment)).toThrow('"strip" is not a choice for instructions: flag or hold.');
    expect(() => setFileResult(SEED, 'hidden' as FindingKind, 'strip')).toThrow(/not a kind of finding/);
    for (const kind of FINDING_KINDS) for (const value of TREATMENT_CHOICES[kind]) expect(validatePolicyValue(setFileResult(SEED, kind, value))).toEqual([]);
  });
});

describe('setToolResult', () => {
  it("writes to the tool's own entry, results last, its other fields and order kept", () => {
    const out = setToolResult(SEED, 'execute_query', viewOf(SEED, 'execute_query'), 'instructions', 'hold');
    expect(entry(out, 'execute_query')).toEqual({ ...entry(SEED, 'execute_query'), results: { instructions: 'hold' } });
    expect(Object.keys(entry(out, 'execute_query'))).toEqual(['action', 'rules', 'class', 'results']);
    expect(Object.keys(out.tools as object)).toEqual(Object.keys(SEED.tools as object));
    expect(Object.keys(out)).toEqual(Object.keys(SEED));
    expect(entry(SEED, 'execute_query').results).toBeUndefined();
  });

  it('changes a field in place; back to inherit removes it, and an emptied results', () => {
    const view = viewOf(SEED, 'vm_start');
    const changed = setToolResult(WITH_RESULTS, 'vm_start', view, 'secrets', 'hold');
    expect(Object.keys(entry(changed, 'vm_start'))).toEqual(['action', 'results', 'approval_timeout']);
    expect(entry(changed, 'vm_start').results).toEqual({ secrets: 'hold', escapes: 'flag' });
    const one = setToolResult(changed, 'vm_start', view, 'secrets', null);
    expect(entry(one, 'vm_start').results).toEqual({ escapes: 'flag' });
    const none = setToolResult(one, 'vm_start', view, 'escapes', null);
    expect(entry(none, 'vm_start')).toEqual({ action: 'require_approval', approval_timeout: 120 });
    expect(none.results).toEqual(WITH_RESULTS.results); // the file's are not touched
    expect(setToolResult(none, 'vm_start', view, 'escapes', null)).toBe(none);
  });

  it('a tool a glob decides gets an entry of its own, copied from the glob, which keeps its own', () => {
    const out = setToolResult(WITH_RESULTS, 'pve_list_nodes', viewOf(SEED, 'pve_list_nodes'), 'secrets', 'hold');
    expect(entry(out, 'pve_list_nodes')).toEqual({ action: 'require_approval', results: { invisible: 'hold', secrets: 'hold' } });
    expect(entry(out, 'pve_*')).toEqual({ action: 'require_approval', results: { invisible: 'hold' } });
    // Back to the file's on a field the glob names: an own entry without it.
    const back = setToolResult(WITH_RESULTS, 'pve_list_nodes', viewOf(SEED, 'pve_list_nodes'), 'invisible', null);
    expect(entry(back, 'pve_list_nodes')).toEqual({ action: 'require_approval' });
    // A field neither names: nothing to do, no entry made.
    expect(setToolResult(WITH_RESULTS, 'pve_list_nodes', viewOf(SEED, 'pve_list_nodes'), 'escapes', null)).toBe(WITH_RESULTS);
  });

  it('refuses a choice the field does not take, and a hidden tool', () => {
    expect(() => setToolResult(SEED, 'vm_start', viewOf(SEED, 'vm_start'), 'secrets', 'strip' as Treatment)).toThrow(
      '"strip" is not a choice for secrets: redact, flag or hold.',
    );
    expect(() => setToolResult(SEED, 'secret_tool', viewOf(SEED, 'secret_tool'), 'secrets', 'hold')).toThrow();
  });
});
