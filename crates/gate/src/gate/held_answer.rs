//! An answer held for a person: the call was decided and ran, and what came back holds findings
//! the policy's `results` keep for a person (`hold`). The agent reads nothing of it until a person
//! passes it; refused, timed out, or with nobody to ask, the agent gets a refusal that says why.
//!
//! It is asked through the same seam as a held call ([`crate::held_calls`]), as a
//! [`PendingApproval`] with rule [`HeldBy::Answer`] and the answer's record (excerpt and findings)
//! in `answer`: the same prompt, notification, CLI and control API. What differs is decided by
//! the keeper: no grant covers an answer, and a person passes or refuses each one, once.
//!
//! The path: `session/reply.rs` reads the final answer → [`Forwarded::inspect`] → held:
//! [`Gate::ask_about_answer`] → [`Forwarded::settle_held`] → the answer (or the refusal) goes on,
//! and `finish_answer` writes the row's outcome with the findings as the person decided them.

use std::future::Future;
use std::time::{Duration, Instant};

use portcullis_wire::Message;

use super::hold::wait_for_person;
use super::{Call, Caller, Forwarded, Gate};
use crate::answers::Treated;
use crate::clock::{now_ms, rfc3339};
use crate::held_calls::pending::{HeldBy, PendingApproval};
use crate::held_calls::{Asked, AtOnce, Question, Resolution};

/// An answer inspected ahead of the row's completion.
pub enum Inspected {
    /// It goes on to the agent as it is (treated, when something was taken out).
    Ready(Message),
    /// It waits for a person: [`Gate::ask_about_answer`], then [`Forwarded::settle_held`].
    Held(HeldAnswer),
}

/// A held answer: the answer as treated, and what its prompt shows.
pub struct HeldAnswer {
    treated: Treated,
    question: Box<PendingApproval>,
}

/// What became of a held answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerVerdict {
    /// A person passed it to the agent.
    Passed,
    /// Not passed, and why, in words the agent reads ("denied by the user: …").
    Refused(String),
}

impl Forwarded {
    /// Inspects the answer as the policy says ([`crate::answers`]) before the row is completed,
    /// where a held answer can still be waited for. The row is completed later, by
    /// [`Forwarded::finish_answer`], with what is kept here.
    pub fn inspect(&mut self, response: Message) -> Inspected {
        let Some(check) = self.answer_check.take() else {
            return Inspected::Ready(response);
        };
        match crate::answers::treat(response, &check) {
            Err(response) => Inspected::Ready(response),
            Ok(treated) if treated.holds => match self.answer_question.take() {
                Some(question) => Inspected::Held(HeldAnswer { treated, question }),
                // Cannot happen (the question is made whenever the policy can hold): fail closed.
                None => self.withhold(treated, "it could not be asked about"),
            },
            Ok(treated) => {
                self.inspected = Some(treated.record);
                Inspected::Ready(treated.message)
            }
        }
    }

    /// The answer as the person decided: passed as treated, or refused with why. The findings
    /// that held it say `passed` or `refused` in the audit.
    pub fn settle_held(&mut self, held: HeldAnswer, verdict: &AnswerVerdict) -> Message {
        let HeldAnswer { mut treated, .. } = held;
        let action = match verdict {
            AnswerVerdict::Passed => "passed",
            AnswerVerdict::Refused(_) => "refused",
        };
        for finding in &mut treated.record.findings {
            if finding.action == portcullis_policy::Treatment::Hold.as_str() {
                action.clone_into(&mut finding.action);
            }
        }
        match verdict {
            AnswerVerdict::Passed => {
                self.inspected = Some(treated.record);
                treated.message
            }
            AnswerVerdict::Refused(why) => match self.withhold(treated, why) {
                Inspected::Ready(message) => message,
                Inspected::Held(_) => unreachable!("withhold is ready"),
            },
        }
    }

    /// The refusal in place of a held answer; the record kept for the row.
    fn withhold(&mut self, treated: Treated, why: &str) -> Inspected {
        let message = super::withheld(&treated, self.method, self.asker.is_some(), why);
        self.inspected = Some(treated.record);
        Inspected::Ready(message)
    }
}

/// An answer inspected where there is no row to complete and nobody waits to be asked (an
/// upstream task's result, `session/task_answers.rs`): treated as `check` says, and withheld,
/// saying why, when the policy would hold it.
pub fn treat_unasked(answer: Message, check: &crate::answers::AnswerCheck) -> Message {
    match crate::answers::treat(answer, check) {
        Err(answer) => answer,
        Ok(treated) if treated.holds => super::withheld(
            &treated,
            portcullis_audit::Method::ToolsCall,
            false,
            "it came as the server's task result, which is not asked about",
        ),
        Ok(treated) => treated.message,
    }
}

impl Gate {
    /// What a person would be shown of the call's answer, should it hold: made while the call
    /// is at hand (its tool's description, its risk), only when the policy can hold the answer.
    pub(super) fn answer_question(&self, call: &Call, caller: &Caller) -> Box<PendingApproval> {
        let timeout = crate::held_calls::timeout(None, self.approval_timeout_secs);
        Box::new(self.pending_approval(call, caller, &HeldBy::Answer, timeout, None))
    }

    /// Asks a person about a held answer, and waits (bounded by the approval timeout, which a
    /// person may extend; ended early when `client_gone` completes).
    pub async fn ask_about_answer(&self, held: &HeldAnswer, client_gone: impl Future<Output = ()>) -> AnswerVerdict {
        let mut approval = (*held.question).clone();
        let record = &held.treated.record;
        approval.asks = crate::held_calls::answer_asks(&approval, &record.findings);
        approval.answer = Some(record.clone());
        let timeout =
            Duration::from_millis(u64::try_from(approval.expires_at_ms - approval.requested_at_ms).unwrap_or(0));
        let now = now_ms();
        let expires = now.saturating_add(approval.expires_at_ms - approval.requested_at_ms);
        (approval.requested_at, approval.requested_at_ms) = (rfc3339(now), now);
        (approval.expires_at, approval.expires_at_ms) = (rfc3339(expires), expires);
        let question = Question {
            places: self.places(&approval.server),
            // No grant covers an answer: the digest is never looked up.
            digest: String::new(),
            approval,
        };
        let started = Instant::now();
        let ticket = match self.held.ask(question).await {
            Asked::Held(ticket) => ticket,
            Asked::AtOnce(at_once) => return AnswerVerdict::Refused(at_once_words(at_once)),
        };
        let no_tick: Option<fn(u64, u64)> = None;
        let (resolved, timeout) = wait_for_person(&*self.held, ticket, started, timeout, client_gone, no_tick).await;
        match resolved {
            Resolution::Approved(_) => AnswerVerdict::Passed,
            Resolution::Rejected { reason: Some(r), .. } => AnswerVerdict::Refused(format!("the user refused it: {r}")),
            Resolution::Rejected { reason: None, .. } => AnswerVerdict::Refused("the user refused it".into()),
            Resolution::TimedOut => AnswerVerdict::Refused(format!("nobody decided within {} s", timeout.as_secs())),
            Resolution::Orphaned => AnswerVerdict::Refused("no approver is running any more".into()),
            Resolution::Cancelled { why } | Resolution::Lost { why } => AnswerVerdict::Refused(why),
            // An answer cannot be edited (the keeper refuses the choice): fail closed all the same.
            Resolution::Edited(_) => AnswerVerdict::Refused("an answer cannot be edited".into()),
        }
    }
}

/// Why a held answer was refused without asking anyone.
fn at_once_words(at_once: AtOnce) -> String {
    match at_once {
        AtOnce::Paused => "Portcullis is paused (resume in the Portcullis app)".into(),
        AtOnce::NoApprover => {
            "no approver is running (open the Portcullis app or run `portcullis approvals watch`)".into()
        }
        AtOnce::Unreachable { why } => format!("Portcullis could not be reached to ask a person ({why})"),
        // The keeper never answers an answer from a grant; should one, the answer is not passed.
        AtOnce::Grant(_) | AtOnce::ChangeApproved => "a grant cannot pass an answer".into(),
    }
}

/// The record of a held answer, for tests.
#[cfg(test)]
impl HeldAnswer {
    pub fn record(&self) -> &portcullis_audit::AnswerRecord {
        &self.treated.record
    }
}
