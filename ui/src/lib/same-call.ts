// When two held calls are "the same call": same agent session, server and tool, and the same
// arguments (compared in a canonical form: object keys sorted, numbers as their exact digits, so
// `{"a":1,"b":2}` and `{"b":2,"a":1}` are alike and large integers are compared digit by digit).

import type { PendingApproval } from './types';
import { JsonNumber, parseExact, type ExactValue } from './exact-json';

/** The arguments' JSON text in a canonical form; the text itself if it does not parse. */
export function canonicalArguments(argumentsJson: string): string {
  try {
    return canonical(parseExact(argumentsJson));
  } catch {
    return argumentsJson;
  }
}

function canonical(v: ExactValue): string {
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export function sameCall(a: PendingApproval, b: PendingApproval): boolean {
  return (
    a.session === b.session &&
    a.server === b.server &&
    a.tool === b.tool &&
    (a.arguments_json === b.arguments_json || canonicalArguments(a.arguments_json) === canonicalArguments(b.arguments_json))
  );
}
