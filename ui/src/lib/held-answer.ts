// A held answer: the call was decided and ran, and what the server answered holds findings the
// policy's `results` keep for a person (rule `results:hold`, `PendingApproval.answer` set). The
// person passes it to the agent once or refuses it: no grant, "always", session or edit covers an
// answer, since the next one is another text, and the keeper refuses every other choice
// (crates/keeper/src/choose.rs, `check_answer_choice`).

import type { AnswerFinding, AnswerRecord, ApprovalChoice, PendingApproval } from './types';

export type HeldAnswer = PendingApproval & { answer: AnswerRecord };

export function isHeldAnswer(a: PendingApproval | null | undefined): a is HeldAnswer {
  return a?.answer != null;
}

/** A finding that holds the answer for a person (the others were stripped, redacted or flagged). */
export function holdsIt(f: Pick<AnswerFinding, 'action'>): boolean {
  return f.action === 'hold';
}

/** The choices the keeper takes for a held answer: approve once (pass it on), or deny without "always". */
export function fitsHeldAnswer(choice: ApprovalChoice): boolean {
  if ('approve' in choice) return choice.approve === 'once';
  if ('deny' in choice) return !choice.deny.always;
  return false;
}
