// What comes back (`results`, policies/README.md): what the gate does with what it finds in an
// answer before the agent reads it. Four kinds of finding, each with its own choices; written at
// the file's top level and in any entry. For one tool, the field of the entry that decides it
// (its own, or the glob pattern that matches it) wins over the file's, which wins over the
// default (the policy crate's `results_for`). Pure functions over plain JSON values.
//
// Writing follows policy-model.ts: the document is edited in place, every other key and the
// order of keys are kept, a new key goes where the documentation order puts it, a field set back
// to inherit is removed, and so is a `results` object left empty. A tool's fields are written to
// its own entry, made as an argument rule's edit makes one (rule-edit.ts `ownEntry`): a copy of
// the glob entry that decides it, or an entry in the state the form shows, so nothing but the
// answers changes for it or for the other tools the glob covers.

import { ENTRY_FIELDS, withKey, type PolicyDoc, type ToolView } from './policy-model';
import { ownEntry } from './rule-edit';

export type FindingKind = 'invisible' | 'escapes' | 'secrets' | 'instructions';
export type Treatment = 'strip' | 'redact' | 'flag' | 'hold';

/** The fields of `results`, in documentation order. */
export const FINDING_KINDS: FindingKind[] = ['invisible', 'escapes', 'secrets', 'instructions'];

/** The choices each field takes (policies/policy.schema.json, `RawResults`). */
export const TREATMENT_CHOICES: Record<FindingKind, readonly Treatment[]> = {
  invisible: ['strip', 'flag', 'hold'],
  escapes: ['strip', 'flag', 'hold'],
  secrets: ['redact', 'flag', 'hold'],
  instructions: ['flag', 'hold'],
};

/** What a field neither the entry nor the file names takes. */
export const RESULTS_DEFAULTS: Record<FindingKind, Treatment> = {
  invisible: 'strip',
  escapes: 'strip',
  secrets: 'flag',
  instructions: 'flag',
};

export const FINDING_LABELS: Record<FindingKind, string> = {
  invisible: 'Hidden characters',
  escapes: 'Terminal escapes',
  secrets: 'Secrets',
  instructions: 'Instructions to the model',
};

/** What each kind of finding is, in a line. */
export const FINDING_HELP: Record<FindingKind, string> = {
  invisible: 'Characters a person does not see: Unicode tag characters, zero-width characters, bidi overrides.',
  escapes: 'Terminal escape sequences (colours, links, clipboard writes) and other control characters.',
  secrets: 'Private keys, cloud access keys, tokens, passwords in URLs and assignments.',
  instructions: 'Text shaped as instructions to the model: "ignore previous instructions", chat template tokens, <system> tags.',
};

/** What each choice does with a finding, in a line. */
export const TREATMENT_HELP: Record<Treatment, string> = {
  strip: 'Removed from the answer before the agent reads it; the audit records it.',
  redact: 'Replaced by [redacted] in the answer the agent reads; the audit records it.',
  flag: 'The answer reaches the agent as it came; the audit records the finding.',
  hold: 'The agent gets nothing until a person passes the answer, once, in the approval prompt.',
};

/** Where a value comes from: the tool's entry, the file's top-level `results`, or the default. */
export type ResultSource = 'entry' | 'file' | 'default';

export interface EffectiveResult {
  value: Treatment;
  source: ResultSource;
}

export type EffectiveResults = Record<FindingKind, EffectiveResult>;

/** Top-level fields in documentation order (policies/README.md). */
export const RESULTS_POLICY_ORDER = [
  'version',
  'default',
  'hide',
  'approval_timeout',
  'redact',
  'results',
  'tools',
  'resources',
  'prompts',
  'server_requests',
];
/** Entry fields in documentation order, `results` last. */
export const RESULTS_ENTRY_ORDER = [...ENTRY_FIELDS, 'results'];

type Entry = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function table(doc: PolicyDoc): Record<string, unknown> {
  return isObject(doc.tools) ? doc.tools : {};
}

export function isFindingKind(kind: unknown): kind is FindingKind {
  return typeof kind === 'string' && (FINDING_KINDS as string[]).includes(kind);
}

/** Whether `value` is one of the choices of `kind`. */
export function isChoice(kind: FindingKind, value: unknown): value is Treatment {
  return typeof value === 'string' && (TREATMENT_CHOICES[kind] as string[]).includes(value);
}

/** A field as written in a `results` object, or null when it is absent or not one of its choices
 * (the schema check reports such a value; the gateway refuses the whole file). */
function written(results: unknown, kind: FindingKind): Treatment | null {
  if (!isObject(results)) return null;
  const v = results[kind];
  return isChoice(kind, v) ? v : null;
}

/** The file's `results`: each field as the top level writes it, else the default. */
export function fileResults(doc: PolicyDoc): EffectiveResults {
  const out = {} as EffectiveResults;
  for (const kind of FINDING_KINDS) {
    const v = written(doc.results, kind);
    out[kind] = v === null ? { value: RESULTS_DEFAULTS[kind], source: 'default' } : { value: v, source: 'file' };
  }
  return out;
}

/** The `results` that apply to answers of the tools entry `key` decides (null: no entry decides,
 * e.g. the tool gets the policy's default): the entry's fields, then the file's, then the defaults. */
export function entryResults(doc: PolicyDoc, key: string | null): EffectiveResults {
  const file = fileResults(doc);
  const entry = key === null ? undefined : table(doc)[key];
  const own = isObject(entry) ? entry.results : undefined;
  const out = {} as EffectiveResults;
  for (const kind of FINDING_KINDS) {
    const v = written(own, kind);
    out[kind] = v === null ? file[kind] : { value: v, source: 'entry' };
  }
  return out;
}

function checked(kind: FindingKind, value: Treatment | null): void {
  if (!isFindingKind(kind)) throw new Error(`"${String(kind)}" is not a kind of finding (${FINDING_KINDS.join(', ')}).`);
  if (value !== null && !isChoice(kind, value)) {
    const choices = TREATMENT_CHOICES[kind];
    throw new Error(`"${String(value)}" is not a choice for ${kind}: ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}.`);
  }
}

/**
 * `owner` with its `results` field `kind` set to `value` (null: removed, and `results` with it
 * when nothing is left). Returns `owner` itself when there is nothing to remove.
 */
function withResult(owner: Entry, kind: FindingKind, value: Treatment | null, order: string[]): Entry {
  const old = owner.results;
  if (value === null) {
    if (!isObject(old) || !(kind in old)) return owner;
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(old)) if (k !== kind) rest[k] = v;
    if (Object.keys(rest).length) return { ...owner, results: rest };
    const out: Entry = {};
    for (const [k, v] of Object.entries(owner)) if (k !== 'results') out[k] = v;
    return out;
  }
  const results = withKey(isObject(old) ? old : {}, kind, value, FINDING_KINDS);
  return withKey(owner, 'results', results, order);
}

/** Sets (value) or removes (null: the default applies) the file's top-level `results` field `kind`.
 * Throws when `value` is not one of the field's choices. */
export function setFileResult(doc: PolicyDoc, kind: FindingKind, value: Treatment | null): PolicyDoc {
  checked(kind, value);
  return withResult(doc, kind, value, RESULTS_POLICY_ORDER);
}

/**
 * Sets (value) or removes (null: as the file says) the `results` field `kind` of the tool's own
 * entry, made first when it has none (see the module docs). Throws when `value` is not one of
 * the field's choices, and for a tool the form cannot change or that is hidden (its answers
 * never come back).
 */
export function setToolResult(doc: PolicyDoc, tool: string, view: ToolView, kind: FindingKind, value: Treatment | null): PolicyDoc {
  checked(kind, value);
  if (view.locked || view.state.kind === 'hide') throw new Error(view.locked ?? 'A hidden tool is refused; no answer of it comes back.');
  const own = ownEntry(doc, tool, view);
  const entry = withResult(own.entry, kind, value, RESULTS_ENTRY_ORDER);
  if (entry === own.entry) return doc; // nothing to remove: no entry is made for it
  return withKey(own.doc, 'tools', withKey(table(own.doc), tool, entry, []), RESULTS_POLICY_ORDER);
}

/** Which fields the tool's deciding entry names itself (for a short note on its row). */
export function entryOverrides(results: EffectiveResults): FindingKind[] {
  return FINDING_KINDS.filter((k) => results[k].source === 'entry');
}
