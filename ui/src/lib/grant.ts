// A person's decision along the three axes of DESIGN §5 — which calls, whose, how long — and the
// `ApprovalChoice` the gateway takes for it. The conditions offered are cut from the held call's
// own values: a directory above a path (`path_under`), a URL's scheme and host (`prefix`), the
// exact command (`eq`).

import type { ApprovalChoice } from './types';

export type Which = 'this' | 'condition' | 'any';
export type Whose = 'session' | 'every';
/** Seconds, or `once` / `restart` / `always`. */
export type HowLong = 'once' | 300 | 900 | 3600 | 'restart' | 'always';

export const HOW_LONG: { value: HowLong; label: string }[] = [
  { value: 'once', label: 'Once' },
  { value: 300, label: '5 min' },
  { value: 900, label: '15 min' },
  { value: 3600, label: '1 h' },
  { value: 'restart', label: 'Until restart' },
  { value: 'always', label: 'Always' },
];

/** A condition on one argument, as a policy `when` object and in words. */
export interface Condition {
  when: Record<string, unknown>;
  label: string;
}

export interface Axes {
  allow: boolean;
  which: Which;
  whose: Whose;
  howLong: HowLong;
  condition: Condition | null;
  reason: string | null;
}

/** Why this combination cannot be chosen, or null. */
export function unavailable(a: Axes): string | null {
  if (a.which === 'condition' && !a.condition) return 'pick a condition';
  if (a.howLong === 'once' && a.which !== 'this') return '"once" decides only this call';
  if (a.howLong === 'always' && a.which === 'this') return '"always" is for a condition or any arguments';
  return null;
}

/** The gateway's choice for these axes (null when `unavailable`). */
export function choiceFor(a: Axes): ApprovalChoice | null {
  if (unavailable(a)) return null;
  const reason = a.reason?.trim() ? a.reason.trim() : null;
  if (a.howLong === 'once') return a.allow ? { approve: 'once' } : { deny: { reason, always: false } };
  // "Always" with a condition: an argument rule in the policy file, for every session.
  if (a.howLong === 'always' && a.which === 'condition' && a.condition)
    return { rule: { allow: a.allow, reason: a.allow ? null : reason, when: a.condition.when } };
  if (a.howLong === 'always') return a.allow ? { approve: 'always' } : { deny: { reason, always: true } };
  return {
    grant: {
      allow: a.allow,
      reason: a.allow ? null : reason,
      every_session: a.whose === 'every',
      duration_secs: a.howLong === 'restart' ? null : a.howLong,
      when: a.which === 'condition' && a.condition ? a.condition.when : null,
      exact: a.which === 'this',
    },
  };
}

/** The conditions a person can pick from the call's top-level string arguments. */
export function conditionsFrom(args: unknown): Condition[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const out: Condition[] = [];
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    if (typeof value !== 'string' || !value) continue;
    const at = `arguments.${key}`;
    const url = urlBase(value);
    if (url) out.push({ when: { [at]: { prefix: url } }, label: `${key} on ${url}` });
    else if (value.startsWith('/') || value.startsWith('~/')) {
      for (const dir of parents(value)) out.push({ when: { [at]: { path_under: dir } }, label: `${key} under ${dir}` });
    } else if (/command|cmd|script|query/i.test(key)) {
      out.push({ when: { [at]: { eq: value } }, label: `${key} exactly ${short(value)}` });
    }
  }
  return out;
}

/** `https://host/` of an http(s) URL (the prefix that keeps a grant on that host). */
export function urlBase(value: string): string | null {
  const m = /^(https?):\/\/([^/?#@\s]+)(?:[/?#]|$)/i.exec(value);
  return m ? `${m[1].toLowerCase()}://${m[2].toLowerCase()}/` : null;
}

/** The directories above a path, nearest first (never the root alone): `/a/b/c` → `/a/b`, `/a`. */
export function parents(path: string): string[] {
  const parts = path.split('/');
  const out: string[] = [];
  for (let i = parts.length - 1; i > 1; i--) {
    const dir = parts.slice(0, i).join('/');
    if (dir && dir !== '~' && !parts.slice(0, i).includes('..')) out.push(dir);
  }
  return out;
}

function short(s: string): string {
  return s.length > 40 ? `${s.slice(0, 39)}…` : s;
}
