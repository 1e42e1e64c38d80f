// Argument rules of a tool's entry (`tools.<name>.rules`, DESIGN §4), edited in the policy
// document: shown as lines, added, changed, moved and deleted. Rules are tried in order and the
// first whose `when` holds decides, so the position is the precedence and a move changes it. A
// new rule is placed as the prompt's "always" places one (`newRuleIndex`), never loosening a deny.
//
// Rules are written only to the tool's own entry. A tool decided by a glob entry gets its own
// entry on its first rule edit, as a copy of that glob entry (its rules, action, rate limit), so
// the other tools the glob covers keep theirs and this one is decided as before except where the
// edit says otherwise — what the prompt's "always" with a condition does too (policy crate,
// edit/rule.rs). A tool decided by the default gets an entry in the state the form shows.

import { describeWhen } from './condition';
import { ENTRY_FIELDS, POLICY_FIELDS, setToolState, withKey, type Action, type PolicyDoc, type ToolView } from './policy-model';

export interface Rule {
  when: Record<string, unknown>;
  action: Action;
  reason: string | null;
}

type Entry = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function table(doc: PolicyDoc): Record<string, unknown> {
  return isObject(doc.tools) ? doc.tools : {};
}

/** The key of the entry whose rules a tool's row shows: its own entry, else the glob entry that
 * decides it; null when neither exists (decided by the default, or hidden). */
export function rulesKey(doc: PolicyDoc, tool: string, view: ToolView): string | null {
  if (view.state.kind === 'hide') return null;
  const t = table(doc);
  if (isObject(t[tool])) return tool;
  if (view.source.kind === 'glob' && isObject(t[view.source.key])) return view.source.key;
  return null;
}

/** The rules of entry `key`, as written (entries of any shape: the gateway judges them). */
export function rulesOf(doc: PolicyDoc, key: string | null): unknown[] {
  if (key === null) return [];
  const entry = table(doc)[key];
  return isObject(entry) && Array.isArray(entry.rules) ? entry.rules : [];
}

/** A rule read for the form, or null when it is not one the form can show. */
export function ruleOf(value: unknown): Rule | null {
  if (!isObject(value) || !isObject(value.when)) return null;
  const a = value.action;
  if (a !== 'allow' && a !== 'deny' && a !== 'require_approval') return null;
  return { when: value.when, action: a, reason: typeof value.reason === 'string' ? value.reason : null };
}

const ACTION_WORDS: Record<Action, string> = { allow: 'allow', deny: 'deny', require_approval: 'ask' };

/** One rule in words, its decision apart (the view colours it): `deny` + ` when path starts with /etc — reason "…"`. */
export function ruleWords(value: unknown): { action: Action | null; verb: string; rest: string } {
  const rule = ruleOf(value);
  if (!rule) return { action: null, verb: '', rest: `not a rule the form can read: ${JSON.stringify(value)}` };
  const reason = rule.reason ? ` — reason “${rule.reason}”` : '';
  return { action: rule.action, verb: ACTION_WORDS[rule.action], rest: ` when ${describeWhen(rule.when)}${reason}` };
}

/** One rule in words: `deny when path starts with /etc — reason "…"`. */
export function describeRule(value: unknown): string {
  const w = ruleWords(value);
  return w.verb + w.rest;
}

/** The rule as written to the file: `when`, `action`, and `reason` when there is one. */
function written(rule: Rule): Entry {
  const out: Entry = { when: rule.when, action: rule.action };
  const reason = rule.reason?.trim();
  if (reason) out.reason = reason;
  return out;
}

/** The tool's own entry, made as the module docs say when it has none (results-model.ts makes
 * one the same way). */
export function ownEntry(doc: PolicyDoc, tool: string, view: ToolView): { doc: PolicyDoc; entry: Entry } {
  const t = table(doc);
  if (isObject(t[tool])) return { doc, entry: t[tool] as Entry };
  if (view.source.kind === 'glob' && isObject(t[view.source.key])) {
    return { doc, entry: structuredClone(t[view.source.key] as Entry) };
  }
  const next = setToolState(doc, tool, view.state, view);
  return { doc: next, entry: table(next)[tool] as Entry };
}

/** Returns the policy with the tool's own rules replaced by `edit(rules)`; an empty list drops `rules`. */
function withRules(doc: PolicyDoc, tool: string, view: ToolView, edit: (rules: unknown[]) => unknown[]): PolicyDoc {
  if (view.locked || view.state.kind === 'hide') throw new Error(view.locked ?? 'A hidden tool is refused whatever its rules say.');
  const own = ownEntry(doc, tool, view);
  const rules = edit(Array.isArray(own.entry.rules) ? [...own.entry.rules] : []);
  let entry: Entry;
  if (rules.length) entry = withKey(own.entry, 'rules', rules, ENTRY_FIELDS);
  else {
    entry = { ...own.entry };
    delete entry.rules;
  }
  return withKey(own.doc, 'tools', withKey(table(own.doc), tool, entry, []), POLICY_FIELDS);
}

/**
 * Where a new rule goes, as the prompt's "always" with a condition places one (policy crate,
 * edit/rule.rs): a deny first, where it only tightens; any other right after the last deny, so
 * it never loosens a deny the author wrote. The person can move it from there.
 */
export function newRuleIndex(rules: unknown[], action: Action): number {
  if (action === 'deny') return 0;
  let last = -1;
  rules.forEach((r, i) => {
    if (isObject(r) && r.action === 'deny') last = i;
  });
  return last + 1;
}

/** Puts `rule` at `index` (replacing that rule), or, when `index` is null, as a new rule where
 * `newRuleIndex` says. */
export function putRule(doc: PolicyDoc, tool: string, view: ToolView, index: number | null, rule: Rule): PolicyDoc {
  return withRules(doc, tool, view, (rules) => {
    if (index === null) {
      rules.splice(newRuleIndex(rules, rule.action), 0, written(rule));
      return rules;
    }
    if (index < 0 || index >= rules.length) throw new Error(`There is no rule ${index + 1}.`);
    rules[index] = written(rule);
    return rules;
  });
}

/** Moves rule `from` to position `to` (both in range). */
export function moveRule(doc: PolicyDoc, tool: string, view: ToolView, from: number, to: number): PolicyDoc {
  return withRules(doc, tool, view, (rules) => {
    if (from < 0 || from >= rules.length || to < 0 || to >= rules.length) throw new Error('No rule to move there.');
    const [moved] = rules.splice(from, 1);
    rules.splice(to, 0, moved);
    return rules;
  });
}

export function deleteRule(doc: PolicyDoc, tool: string, view: ToolView, index: number): PolicyDoc {
  return withRules(doc, tool, view, (rules) => {
    if (index < 0 || index >= rules.length) throw new Error(`There is no rule ${index + 1}.`);
    rules.splice(index, 1);
    return rules;
  });
}
