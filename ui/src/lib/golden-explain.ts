// The mock backend's `explain_policy`: golden answers the Rust side wrote
// (__fixtures__/policy-explain.json, by src-tauri/src/commands/policy.rs, which fails when they
// drift from the policy crate). So component tests show what the real gateway would answer, and
// no second copy of the precedence rules lives in TypeScript. A text the file has no answer for
// is an error that says how to add one.

import golden from './__fixtures__/policy-explain.json';
import type { PolicyExplanation, ToolDecision } from './types';

interface Case {
  text: string;
  tools: string[];
  answer: PolicyExplanation;
}

/** The same document whatever its whitespace (key order kept: it decides glob ties). */
function canonical(text: string): string | null {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return null;
  }
}

const CASES: Case[] = (golden as { cases: Case[] }).cases;
const BY_TEXT = new Map<string, Case[]>();
for (const c of CASES) {
  const key = canonical(c.text) ?? c.text;
  BY_TEXT.set(key, [...(BY_TEXT.get(key) ?? []), c]);
}

export class NoGoldenAnswer extends Error {}

/** The golden answer for `text` and `tools`; throws NoGoldenAnswer when there is none. */
export function goldenExplain(text: string, tools: string[]): PolicyExplanation {
  const cases = BY_TEXT.get(canonical(text) ?? text) ?? [];
  for (const c of cases) {
    if (c.answer.problems.length) return c.answer;
    const byTool = new Map<string, ToolDecision>(c.answer.tools.map((t) => [t.tool, t]));
    if (tools.every((t) => byTool.has(t))) return { problems: [], tools: tools.map((t) => byTool.get(t)!) };
  }
  throw new NoGoldenAnswer(
    `no golden explain_policy answer for tools ${JSON.stringify(tools)} of this text; add ` +
      `{"text": ${JSON.stringify(text)}, "tools": ${JSON.stringify(tools)}} to the cases of ` +
      'ui/src/lib/__fixtures__/policy-explain.json and run PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib golden',
  );
}
