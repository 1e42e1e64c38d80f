import { describe, expect, it } from 'vitest';
import { setDefault, setToolState, starterPolicy, stateFor, withKey, type PolicyDoc, type ToolState } from '../policy-model';
import { parseJson, stringifyPretty } from '../json-doc';
import { SEED, viewOf } from '../__fixtures__/seed-policy';
import everything from '../../../../policies/everything.json?raw';
import filesystem from '../../../../policies/filesystem.json?raw';

const parse = (text: string) => {
  const r = parseJson(text);
  if (!r.ok) throw new Error(r.message);
  return r.value as PolicyDoc;
};


// A field this version of the UI does not know (a newer format's): kept by every edit.
const WITH_UNKNOWN: PolicyDoc = structuredClone(SEED);
(WITH_UNKNOWN.tools as Record<string, Record<string, unknown>>).execute_query.x_note = 'kept';


describe('toolView: the gateway decision → five states', () => {
  it.each<[string, ToolState, string]>([
    ['vm_agent_exec_status', { kind: 'allow' }, 'entry'],
    ['pve_get_vm_status', { kind: 'rate_limit', max: 10, window: 60 }, 'glob'],
    ['pve_list_nodes', { kind: 'require_approval', timeout: null }, 'glob'],
    ['vm_delete', { kind: 'deny', reason: 'Deleting VMs is not allowed from agents' }, 'entry'],
    ['vm_start', { kind: 'require_approval', timeout: 120 }, 'entry'],
    ['execute_query', { kind: 'require_approval', timeout: null }, 'entry'],
    ['delete_disk', { kind: 'hide' }, 'hide'],
    ['secret_tool', { kind: 'hide' }, 'hide'],
    ['unlisted', { kind: 'deny', reason: null }, 'default'],
  ])('%s is %j (from %s)', (tool, state, source) => {
    const view = viewOf(SEED, tool);
    expect(view.state).toEqual(state);
    expect(view.source.kind).toBe(source);
  });

  it('the most specific glob decides (15 literal characters beat 4)', () => {
    expect(viewOf(SEED, 'pve_get_vm_status').source).toEqual({ kind: 'glob', key: 'pve_get_*_status' });
  });

  it('counts argument rules and locks tools hidden by a glob', () => {
    expect(viewOf(SEED, 'execute_query').rules).toBe(1);
    expect(viewOf(SEED, 'delete_disk').locked).toMatch(/delete_\*/);
    expect(viewOf(SEED, 'secret_tool').locked).toBeNull();
  });

  it('a missing default means require_approval', () => {
    expect(viewOf({ version: '1' }, 'x').state).toEqual({ kind: 'require_approval', timeout: null });
  });
});

describe('setToolState: five states → policy', () => {
  it('allow on an exact entry drops what other states own, keeps unknown fields and order', () => {
    const out = setToolState(WITH_UNKNOWN, 'execute_query', { kind: 'allow' });
    expect(out.tools).toBeDefined();
    const entry = (out.tools as Record<string, Record<string, unknown>>).execute_query;
    expect(Object.keys(entry)).toEqual(['rules', 'class', 'x_note']);
    expect(Object.keys(out.tools as object)).toEqual(Object.keys(SEED.tools as object));
    expect(Object.keys(out)).toEqual(Object.keys(SEED));
  });

  it('does not mutate its input', () => {
    const before = JSON.stringify(SEED);
    setToolState(SEED, 'vm_start', { kind: 'deny', reason: 'no' });
    setToolState(SEED, 'vm_start', { kind: 'hide' });
    expect(JSON.stringify(SEED)).toBe(before);
  });

  it('rate limit writes {max, window}; a new field goes in documentation order', () => {
    const out = setToolState(SEED, 'vm_start', { kind: 'rate_limit', max: 3, window: 30 });
    expect((out.tools as Record<string, unknown>).vm_start).toEqual({ rate_limit: { max: 3, window: 30 } });
    const withRules = setToolState(WITH_UNKNOWN, 'execute_query', { kind: 'rate_limit', max: 1, window: 5 });
    expect(Object.keys((withRules.tools as Record<string, object>).execute_query)).toEqual(['rate_limit', 'rules', 'class', 'x_note']);
  });

  it('require approval sets action and timeout, or drops the timeout to inherit', () => {
    const a = setToolState(SEED, 'vm_agent_exec_status', { kind: 'require_approval', timeout: 90 });
    expect((a.tools as Record<string, unknown>).vm_agent_exec_status).toEqual({ action: 'require_approval', approval_timeout: 90 });
    const b = setToolState(SEED, 'vm_start', { kind: 'require_approval', timeout: null });
    expect((b.tools as Record<string, unknown>).vm_start).toEqual({ action: 'require_approval' });
    // A deny reason is not carried over to the person asked to approve.
    const c = setToolState(SEED, 'vm_delete', { kind: 'require_approval', timeout: null });
    expect((c.tools as Record<string, unknown>).vm_delete).toEqual({ action: 'require_approval' });
  });

  it('deny sets action and reason; an empty reason is left out', () => {
    const a = setToolState(SEED, 'vm_start', { kind: 'deny', reason: 'not today' });
    expect((a.tools as Record<string, unknown>).vm_start).toEqual({ action: 'deny', reason: 'not today' });
    const b = setToolState(SEED, 'vm_delete', { kind: 'deny', reason: '' });
    expect((b.tools as Record<string, unknown>).vm_delete).toEqual({ action: 'deny' });
  });

  it('a tool decided by a glob gets its own entry at the end; the glob stays', () => {
    const out = setToolState(SEED, 'pve_get_vm_status', { kind: 'deny', reason: null });
    const keys = Object.keys(out.tools as object);
    expect(keys[keys.length - 1]).toBe('pve_get_vm_status');
    expect((out.tools as Record<string, unknown>)['pve_get_*_status']).toEqual({ rate_limit: { max: 10, window: 60 } });
  });

  it('hide appends the exact name to hide; leaving hide removes it', () => {
    const hidden = setToolState(SEED, 'vm_start', { kind: 'hide' });
    expect(hidden.hide).toEqual(['delete_*', 'secret_tool', 'vm_start']);
    expect(viewOf(hidden, 'vm_start').state.kind).toBe('hide');
    const back = setToolState(SEED, 'secret_tool', { kind: 'allow' });
    expect(back.hide).toEqual(['delete_*']);
    expect((back.tools as Record<string, unknown>).secret_tool).toEqual({});
  });

  it('a tool hidden by a glob cannot be unhidden from the form', () => {
    expect(() => setToolState(SEED, 'delete_disk', { kind: 'allow' }, viewOf(SEED, 'delete_disk'))).toThrow(/delete_\*/);
  });

  it('creates hide and tools where the documentation order puts them', () => {
    const out = setToolState({ version: '1', default: 'allow', redact: ['k'] }, 'a', { kind: 'hide' });
    expect(Object.keys(out)).toEqual(['version', 'default', 'hide', 'redact']);
    const out2 = setToolState({ version: '1', default: 'allow', redact: ['k'] }, 'a', { kind: 'deny', reason: null });
    expect(Object.keys(out2)).toEqual(['version', 'default', 'redact', 'tools']);
  });

  it('round trip: every state written reads back the same', () => {
    const states: ToolState[] = [
      { kind: 'allow' },
      { kind: 'rate_limit', max: 4, window: 9 },
      { kind: 'require_approval', timeout: 30 },
      { kind: 'require_approval', timeout: null },
      { kind: 'deny', reason: 'why' },
      { kind: 'deny', reason: null },
      { kind: 'hide' },
    ];
    for (const tool of ['pve_list_nodes', 'secret_tool', 'execute_query']) {
      for (const s of states) expect(viewOf(setToolState(SEED, tool, s), tool).state).toEqual(s);
    }
  });

  it('keeps the shipped example files byte for byte when nothing changes', () => {
    for (const text of [everything, filesystem]) {
      const doc = parse(text);
      expect(JSON.parse(stringifyPretty(doc))).toEqual(JSON.parse(text));
      // Setting a tool to the state it is in leaves the document as it was.
      for (const tool of Object.keys(doc.tools as object)) {
        const view = viewOf(doc, tool);
        if (view.source.kind !== 'entry' || view.rules) continue;
        expect(setToolState(doc, tool, view.state)).toEqual(doc);
      }
    }
  });

  it('edits the shipped filesystem policy precisely', () => {
    const doc = parse(filesystem);
    const out = setToolState(doc, 'move_file', { kind: 'require_approval', timeout: 30 });
    const expected = structuredClone(doc) as { tools: Record<string, unknown> };
    // The state's own fields change; what the file says about the tool (class, risk) stays.
    expected.tools.move_file = { action: 'require_approval', approval_timeout: 30, class: 'delete', risk: 'high' };
    expect(out).toEqual(expected);
    expect(Object.keys(out.tools as object)).toEqual(Object.keys(doc.tools as object));
  });
});

describe('helpers', () => {
  it('withKey keeps an existing key in place and inserts a new one by order', () => {
    expect(Object.keys(withKey({ a: 1, c: 3 }, 'b', 2, ['a', 'b', 'c']))).toEqual(['a', 'b', 'c']);
    expect(Object.keys(withKey({ c: 3, a: 1 }, 'a', 9, ['a', 'b', 'c']))).toEqual(['c', 'a']);
    expect(Object.keys(withKey({ x: 1 }, 'y', 2, []))).toEqual(['x', 'y']);
  });

  it('setDefault writes default after version', () => {
    expect(Object.keys(setDefault({ version: '1', tools: {} }, 'allow'))).toEqual(['version', 'default', 'tools']);
  });

  it('starterPolicy allows read tools and asks about the rest', () => {
    const doc = starterPolicy([
      { name: 'read_file', title: null, description: null, annotations: null, input_schema: null, risk: 'read' },
      { name: 'write_file', title: null, description: null, annotations: null, input_schema: null, risk: 'write' },
    ]);
    expect(doc).toEqual({ version: '1', default: 'require_approval', tools: { read_file: {} } });
    expect(viewOf(doc, 'write_file').state.kind).toBe('require_approval');
  });

  it('stateFor keeps the current values of the same kind and uses defaults for a new one', () => {
    const rl: ToolState = { kind: 'rate_limit', max: 2, window: 3 };
    expect(stateFor('rate_limit', rl)).toBe(rl);
    expect(stateFor('rate_limit', { kind: 'allow' })).toEqual({ kind: 'rate_limit', max: 10, window: 60 });
    expect(stateFor('deny', { kind: 'allow' })).toEqual({ kind: 'deny', reason: null });
  });
});
