// The mock backend's `validate_policy` and `save_policy`: golden answers the Rust side wrote
// (__fixtures__/policy-validate.json, by crates/policy/src/golden_tests.rs, which fails when they
// drift from the policy crate). So the editor's tests show the gateway's own problems, and no copy
// of the policy's rules answers for the gateway in TypeScript. A text the file has no answer for
// is an error that says how to add one.

import golden from './__fixtures__/policy-validate.json';
import type { PolicyProblem } from './types';

interface Case {
  text: string;
  problems: PolicyProblem[];
}

const BY_TEXT = new Map<string, PolicyProblem[]>((golden as { cases: Case[] }).cases.map((c) => [c.text, c.problems]));

export class NoGoldenValidation extends Error {}

/** The policy crate's problems with `text` (exactly this text: positions are in the messages). */
export function goldenValidate(text: string): PolicyProblem[] {
  const problems = BY_TEXT.get(text);
  if (problems) return JSON.parse(JSON.stringify(problems)) as PolicyProblem[];
  throw new NoGoldenValidation(
    `no golden validate_policy answer for this text; add {"text": ${JSON.stringify(text)}} to the cases of ` +
      'ui/src/lib/__fixtures__/policy-validate.json and run PORTCULLIS_BLESS=1 cargo test -p portcullis-policy --lib golden',
  );
}
