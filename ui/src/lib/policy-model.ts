// The policy editor's model: each live tool is in one of five states, written to the policy
// document (policies/README.md). Pure functions over plain JSON values.
//
// Which entry decides a tool, and with which action, is not decided here: the gateway's
// `explain_policy` answers it with the policy crate's own precedence rules (`ToolDecision`), and
// this module only reads the named entry's fields for the form and edits the document.
//
// Writing changes as little as it can: an existing entry is edited in place, every field the
// form does not own (rules, class, risk, fields this version does not know) and the order of
// keys are kept, and a new key goes where the documentation order puts it among the keys
// already there. (One JavaScript limit: object keys that look like array indices, e.g. a tool
// named "42", are listed first by the engine and so lose their place.)

import type { DecidedAction, Decider, ToolDecision, ServerTool } from './types';

export type Action = 'allow' | 'deny' | 'require_approval';

export type ToolState =
  | { kind: 'allow' }
  | { kind: 'rate_limit'; max: number; window: number }
  | { kind: 'require_approval'; timeout: number | null }
  | { kind: 'deny'; reason: string | null }
  | { kind: 'hide' };

export type StateKind = ToolState['kind'];

export const STATE_KINDS: StateKind[] = ['allow', 'rate_limit', 'require_approval', 'deny', 'hide'];

/** What each state does, in a sentence (the state buttons' tooltips). */
export const STATE_HELP: Record<StateKind, string> = {
  allow: 'Calls run without asking anyone.',
  rate_limit: 'Calls run without asking, at most the number you set per window, per agent session; more are refused.',
  require_approval: "Each call waits for the user's approval in the prompt; no answer in time refuses it.",
  deny: 'Calls are refused; the agent reads the reason.',
  hide: 'Agents do not see the tool in the list, and calls to it are refused.',
};

export const STATE_LABELS: Record<StateKind, string> = {
  allow: 'Allow',
  rate_limit: 'Rate limit',
  require_approval: 'Require approval',
  deny: 'Deny',
  hide: 'Hide',
};

/** What decides a tool: the gateway's answer (`explain_policy`). */
export type Source = Decider;

export interface ToolView {
  state: ToolState;
  source: Source;
  /** Argument rules of the deciding entry (listed and edited under the row: rule-edit.ts). */
  rules: number;
  /** Why the form cannot change this tool, or null. */
  locked: string | null;
}

export type PolicyDoc = Record<string, unknown>;
type Entry = Record<string, unknown>;

/** Top-level fields in documentation order. */
export const POLICY_FIELDS = ['version', 'default', 'hide', 'approval_timeout', 'redact', 'tools'];
/** Entry fields in documentation order. */
export const ENTRY_FIELDS = ['action', 'reason', 'rate_limit', 'approval_timeout', 'rules', 'class', 'risk'];

export const DEFAULT_RATE_LIMIT = { max: 10, window: 60 };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function tools(policy: PolicyDoc): Record<string, unknown> {
  return isObject(policy.tools) ? policy.tools : {};
}

/** The `default` the form's selector shows (the document's field; absent: require_approval). */
export function defaultAction(policy: PolicyDoc): Action {
  const d = policy.default;
  return d === 'allow' || d === 'deny' || d === 'require_approval' ? d : 'require_approval';
}

function stateOfAction(action: Exclude<DecidedAction, 'hide'>, entry: Entry): ToolState {
  switch (action) {
    case 'deny':
      return { kind: 'deny', reason: typeof entry.reason === 'string' ? entry.reason : null };
    case 'require_approval':
      return {
        kind: 'require_approval',
        timeout: typeof entry.approval_timeout === 'number' ? entry.approval_timeout : null,
      };
    case 'allow': {
      const rl = entry.rate_limit;
      if (isObject(rl) && typeof rl.max === 'number' && typeof rl.window === 'number') {
        return { kind: 'rate_limit', max: rl.max, window: rl.window };
      }
      return { kind: 'allow' };
    }
  }
}

/** The form's view of a tool: the kind from the gateway's decision, its values from the entry it names. */
export function toolView(policy: PolicyDoc, decision: ToolDecision): ToolView {
  const d = decision.decider;
  if (decision.action === 'hide' || d.kind === 'hide') {
    const pattern = d.kind === 'hide' ? d.pattern : '';
    return {
      state: { kind: 'hide' },
      source: d,
      rules: 0,
      locked: pattern !== decision.tool ? `Hidden by the pattern "${pattern}" in hide; change it in the raw JSON.` : null,
    };
  }
  const table = tools(policy);
  const key = d.kind === 'entry' || d.kind === 'glob' ? d.key : null;
  const entry = key !== null && isObject(table[key]) ? (table[key] as Entry) : {};
  return {
    state: stateOfAction(decision.action, entry),
    source: d,
    rules: Array.isArray(entry.rules) ? entry.rules.length : 0,
    locked: null,
  };
}

/**
 * Returns a copy of `obj` with `key` set to `value`: in place when the key exists, else at the
 * position `order` gives it relative to the keys already there (last when it is not in `order`).
 */
export function withKey(obj: Record<string, unknown>, key: string, value: unknown, order: string[]): Record<string, unknown> {
  if (key in obj) return { ...obj, [key]: value };
  const rank = order.indexOf(key);
  const keys = Object.keys(obj);
  let at = keys.length;
  if (rank !== -1) {
    const later = keys.findIndex((k) => {
      const r = order.indexOf(k);
      return r > rank;
    });
    if (later !== -1) at = later;
  }
  const out: Record<string, unknown> = {};
  keys.slice(0, at).forEach((k) => (out[k] = obj[k]));
  out[key] = value;
  keys.slice(at).forEach((k) => (out[k] = obj[k]));
  return out;
}

function without(obj: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** The entry fields each state writes; the others the form owns are removed. */
function applyState(entry: Entry, state: Exclude<ToolState, { kind: 'hide' }>): Entry {
  const set = (e: Entry, k: string, v: unknown) => withKey(e, k, v, ENTRY_FIELDS);
  switch (state.kind) {
    case 'allow':
      return without(entry, 'action', 'reason', 'rate_limit', 'approval_timeout');
    case 'rate_limit': {
      const old = isObject(entry.rate_limit) ? entry.rate_limit : {};
      const rl = withKey(withKey(old, 'max', state.max, ['max', 'window']), 'window', state.window, ['max', 'window']);
      return set(without(entry, 'action', 'reason', 'approval_timeout'), 'rate_limit', rl);
    }
    case 'require_approval': {
      // A deny reason would mislead the person asked to approve; an approval's own reason stays.
      const drop = entry.action === 'deny' ? ['rate_limit', 'reason'] : ['rate_limit'];
      let e = set(without(entry, ...drop), 'action', 'require_approval');
      e = state.timeout === null ? without(e, 'approval_timeout') : set(e, 'approval_timeout', state.timeout);
      return e;
    }
    case 'deny': {
      let e = set(without(entry, 'rate_limit', 'approval_timeout'), 'action', 'deny');
      e = state.reason === null || state.reason === '' ? without(e, 'reason') : set(e, 'reason', state.reason);
      return e;
    }
  }
}

/**
 * Returns a new policy in which `tool` is in `state`. The tool gets (or keeps) an entry under
 * its exact name; a glob entry that covered it is left for the other tools it covers.
 * Throws when `current` (the tool's view now) is locked: hidden by a glob in `hide`, which the
 * format has no exception to.
 */
export function setToolState(policy: PolicyDoc, tool: string, state: ToolState, current: ToolView | null = null): PolicyDoc {
  if (current?.locked && state.kind !== 'hide') throw new Error(current.locked);
  const hide = Array.isArray(policy.hide) ? policy.hide : undefined;
  let next: PolicyDoc = { ...policy };

  if (state.kind === 'hide') {
    if (current?.state.kind === 'hide' || hide?.includes(tool)) return next;
    return withKey(next, 'hide', [...(hide ?? []), tool], POLICY_FIELDS);
  }
  if (hide && hide.includes(tool)) {
    next = { ...next, hide: hide.filter((h) => h !== tool) };
  }
  const table = isObject(policy.tools) ? policy.tools : {};
  const own = isObject(table[tool]) ? (table[tool] as Entry) : {};
  const entry = applyState(own, state);
  const newTable = withKey(table, tool, entry, []);
  return withKey(next, 'tools', newTable, POLICY_FIELDS);
}

/** Sets the action a tool that matches no entry gets. */
export function setDefault(policy: PolicyDoc, action: Action): PolicyDoc {
  return withKey(policy, 'default', action, POLICY_FIELDS);
}

/** A new policy for a server that has none: read-only tools run, everything else asks. */
export function starterPolicy(toolList: ServerTool[]): PolicyDoc {
  const entries: Record<string, unknown> = {};
  for (const t of toolList) if (t.risk === 'read') entries[t.name] = {};
  return { version: '1', default: 'require_approval', tools: entries };
}

export function sameState(a: ToolState, b: ToolState): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The state a person gets on picking `kind`, reusing what `current` already holds. */
export function stateFor(kind: StateKind, current: ToolState): ToolState {
  if (kind === current.kind) return current;
  switch (kind) {
    case 'allow':
      return { kind };
    case 'hide':
      return { kind };
    case 'rate_limit':
      return { kind, ...DEFAULT_RATE_LIMIT };
    case 'require_approval':
      return { kind, timeout: null };
    case 'deny':
      return { kind, reason: null };
  }
}

/** One line that says what decides the tool. */
export function describeSource(view: ToolView): string {
  switch (view.source.kind) {
    case 'entry':
      return view.rules > 0
        ? `its own entry; the argument rule${view.rules === 1 ? '' : 's'} below can decide otherwise by what a call sends`
        : 'its own entry in the policy';
    case 'glob':
      return `no entry of its own: the pattern "${view.source.key}" decides`;
    case 'default':
      return "no entry: the policy's default for unlisted tools";
    case 'hide':
      return `hidden by the pattern "${view.source.pattern}"`;
  }
}
