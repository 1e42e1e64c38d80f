//! A person's answer to a held call, in the keeper: the call decided, the grant or policy rule an
//! "always" makes, and the other held calls the same answer settles at once (DESIGN §5).
//!
//! The gate asks and waits ([`portcullis_gate::held_calls`]); what a person chooses is decided here, by the
//! keeper's broker ([`ApprovalBroker`]) and written into the gate's policy files and pins.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::broker::ApprovalBroker;
use portcullis_gate::clock::now_ms;
use portcullis_gate::gate::door::door_of;
use portcullis_gate::gate::Gate;
use portcullis_gate::held_calls::pending::{HeldBy, PendingApproval, Scope};
use portcullis_gate::held_calls::{DecideError, Resolution};
use portcullis_gate::pins::PinError;
use portcullis_gate::policy_store::{InForce, UndoError, WriteError};

#[cfg(test)]
mod answer_tests;
#[cfg(test)]
mod door_tests;
pub mod dry_run;
#[cfg(test)]
pub(crate) mod hold_tests;
#[cfg(test)]
mod pin_tests;
#[cfg(test)]
mod rule_tests;

/// A person's choice on a held call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Approve(Scope),
    Deny {
        reason: Option<String>,
        always: bool,
    },
    /// A yes or no that also stands for later calls, in memory only ([`GrantChoice`]).
    Grant(GrantChoice),
    /// Approve once with these arguments instead (DESIGN §5 "approve with edits"): decided again
    /// by the policy, never loosened by the edit.
    Edit {
        arguments: Value,
    },
    /// "Always" with a condition: an argument rule written into the server's policy file
    /// (DESIGN §5), deciding the calls the condition covers for every session.
    Rule(portcullis_gate::policy_store::NewRule),
}

/// A standing grant cut from a held call (DESIGN §5): which calls, whose, how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantChoice {
    pub allow: bool,
    /// Told to the agent when the grant denies.
    pub reason: Option<String>,
    /// Every agent session, not only the held call's.
    pub every_session: bool,
    /// How long; `None`: until the gateway restarts (a session's grant ends with the session).
    pub duration: Option<std::time::Duration>,
    /// Only calls whose arguments satisfy this `when` object.
    pub when: Option<Value>,
    /// Only this exact call (same arguments).
    pub exact: bool,
}

/// The result of a person's choice: the call decided, and the other held calls the same
/// choice settled at once.
#[derive(Debug, Clone)]
pub struct Decided {
    pub approval: PendingApproval,
    pub grant: Option<String>,
    pub also_settled: Vec<String>,
    /// The policy file write an "always" made, which can be undone for a short while.
    pub policy_write: Option<portcullis_gate::policy_store::PolicyWrite>,
}

#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    #[error(transparent)]
    Decide(#[from] DecideError),
    #[error("could not change the policy file: {0}")]
    Policy(#[from] WriteError),
    #[error("{0}")]
    Invalid(String),
}

/// The person's side of the held calls of one keeper: its broker, and its gate's policy files
/// and pins that an "always" writes.
pub struct PersonSide {
    gate: Arc<Gate>,
    broker: Arc<ApprovalBroker>,
}

impl PersonSide {
    pub fn new(gate: Arc<Gate>, broker: Arc<ApprovalBroker>) -> Self {
        Self { gate, broker }
    }

    /// The broker: who is asked, what is held, the pause and the grants.
    pub fn broker(&self) -> &Arc<ApprovalBroker> {
        &self.broker
    }

    /// Pauses or resumes approvals: while paused, a call that would be held for a person is
    /// denied at once (decided by the gateway); calls already held keep waiting. Announced as
    /// [`portcullis_gate::events::GatewayEvent::PauseChanged`] when it changes.
    pub fn set_paused(&self, paused: bool) {
        self.broker.set_paused(paused);
    }

    pub fn paused(&self) -> bool {
        self.broker.paused()
    }

    /// The standing grant covering a request of `method` naming `tool` on `server` from `session`.
    fn find_standing(
        &self,
        method: portcullis_audit::Method,
        server: &str,
        tool: &str,
        session: &str,
        facts: portcullis_policy::CallFacts<'_>,
    ) -> Option<portcullis_gate::held_calls::Found> {
        let digest = self.gate.digester().digest(facts.arguments);
        let asked = crate::broker::standing::Asked {
            method,
            server,
            tool,
            session,
            digest: &digest,
            facts,
        };
        self.broker.grants.standing.find(&asked, now_ms())
    }

    /// A person asks for more time on a held call: its deadline moves `by` later, bounded by
    /// `approval.max_hold_secs` from when it was held, and the waiting call's timer follows.
    pub fn extend(
        &self,
        id: &str,
        by: std::time::Duration,
    ) -> Result<portcullis_gate::held_calls::Extended, DecideError> {
        self.broker.extend(id, by, self.gate.max_hold())
    }

    /// A person decides a held call (control API, desktop app). "Always" choices write the
    /// policy file first, so the rule is in force before the call goes on.
    pub fn choose(&self, id: &str, choice: Choice) -> Result<Decided, ChoiceError> {
        let pending = self.broker.get(id);
        if let Some(p) = pending.as_ref().filter(|p| p.rule == HeldBy::Answer) {
            check_answer_choice(p, &choice)?;
        }
        if let (Choice::Edit { arguments }, Some(p)) = (&choice, &pending) {
            self.check_edit(p, arguments)?;
        }
        let resolution = resolution_of(&choice);
        let mut grant = None;
        let mut policy_write = None;
        let mut written_rule = None;
        if let Some(p) = &pending {
            match (&choice, &p.pin_change) {
                // On a call held because its tool changed, "always" trusts the new definition. If
                // that fails (the tool changed again meanwhile, the file cannot be written), this
                // call still goes on as approved, and the next one is held again: nothing is
                // trusted that the person did not see.
                (Choice::Approve(Scope::Always), Some(change)) => {
                    match self.gate.accept_tool(&p.server, &p.tool, Some(&change.new_digest)) {
                        Ok(_) | Err(PinError::NotChanged { .. }) => {}
                        Err(e) => tracing::warn!(error = %e, "approved, but the changed tool was not accepted"),
                    }
                }
                (Choice::Approve(Scope::Session), Some(change)) => {
                    let grants = &self.broker.grants;
                    grants.grant_changed_tool(&p.server, &p.tool, &p.session, &change.new_digest);
                    grants.grant_session(p.method, &p.server, &p.tool, &p.session);
                }
                // "Always" writes into the section of the request that asked: `tools`,
                // `resources`, `prompts` or `server_requests`.
                (Choice::Approve(Scope::Always), None) => {
                    let policies = self.gate.policies();
                    let door = door_of(p.method);
                    let entry = policies.standing_entry(&p.server, door, p.rule.policy_rule(), "allow", None);
                    policy_write = Some(policies.write_entry_at(&p.server, door, &p.tool, entry)?);
                }
                (Choice::Deny { reason, always: true }, _) => {
                    let reason = reason.as_deref().unwrap_or("denied always by the user");
                    let policies = self.gate.policies();
                    let door = door_of(p.method);
                    let entry = policies.standing_entry(&p.server, door, p.rule.policy_rule(), "deny", Some(reason));
                    policy_write = Some(policies.write_entry_at(&p.server, door, &p.tool, entry)?);
                }
                (Choice::Approve(Scope::Session), None) => {
                    grant = Some(
                        self.broker
                            .grants
                            .grant_session(p.method, &p.server, &p.tool, &p.session),
                    );
                }
                (Choice::Grant(g), _) => grant = Some(self.add_grant(p, g)?),
                (Choice::Rule(rule), _) => {
                    let door = door_of(p.method);
                    let (write, name) = self.gate.policies().write_rule(&p.server, door, &p.tool, rule)?;
                    tracing::info!(server = %p.server, tool = %p.tool, rule = %name, "conditional rule written");
                    policy_write = Some(write);
                    written_rule = Some(name);
                }
                _ => {}
            }
        }
        let approval = self.broker.resolve(id, resolution.clone())?;
        let also_settled = self.settle_covered(&approval, &choice, &resolution, written_rule.as_ref());
        Ok(Decided {
            approval,
            grant,
            also_settled,
            policy_write,
        })
    }

    /// Takes back a policy write a decision made (see [`portcullis_gate::policy_store::PolicyStore::undo`]).
    pub fn undo_policy_write(&self, write_id: &str) -> Result<portcullis_gate::policy_store::PolicyWrite, UndoError> {
        self.gate.policies().undo(write_id, Instant::now())
    }

    /// Edited arguments may only make a call the policy would still hold or allow: an edit that the
    /// policy (or a standing deny) refuses is refused here, and the call keeps waiting.
    fn check_edit(&self, p: &PendingApproval, arguments: &Value) -> Result<(), ChoiceError> {
        if p.method != portcullis_audit::Method::ToolsCall {
            // A resource's URI, a prompt's or a server's request are approved or denied as asked.
            return Err(ChoiceError::Invalid(format!(
                "only a tool call's arguments can be edited; approve or deny this {} as it was asked",
                p.method
            )));
        }
        if !arguments.is_object() {
            return Err(ChoiceError::Invalid("edited arguments must be a JSON object".into()));
        }
        // The edited call must read back strictly, as the agent's had to.
        let probe = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
            "params": {"name": p.tool, "arguments": arguments}});
        if let Err(e) = portcullis_wire::Message::from_value(&probe) {
            return Err(ChoiceError::Invalid(format!("edited arguments refused: {e}")));
        }
        let places = self.gate.places(&p.server);
        let facts = p.client.facts(arguments, &places);
        if let Some(InForce::Policy(policy)) = self.gate.policies().get(&p.server) {
            let eval = policy.evaluate_call(&p.tool, &facts);
            if matches!(
                eval.action,
                portcullis_policy::Action::Deny | portcullis_policy::Action::Hide
            ) {
                let why = eval.reason.unwrap_or_else(|| "denied".into());
                return Err(ChoiceError::Invalid(format!(
                    "the policy refuses the edited arguments (rule {}: {why}); the call keeps waiting",
                    eval.rule
                )));
            }
        }
        let edited = PendingApproval {
            arguments: arguments.clone(),
            ..p.clone()
        };
        if let Some(found) = self.standing_grant_for(&edited) {
            if found.effect == portcullis_gate::held_calls::Effect::Deny {
                return Err(ChoiceError::Invalid(format!(
                    "a standing deny ({}) covers the edited arguments; the call keeps waiting",
                    found.id
                )));
            }
        }
        Ok(())
    }

    /// Turns a [`GrantChoice`] on `p` into a standing grant; returns its id.
    fn add_grant(&self, p: &PendingApproval, g: &GrantChoice) -> Result<String, ChoiceError> {
        use crate::broker::standing::{Effect, NewGrant, Which};
        let which = match (&g.when, g.exact) {
            (Some(_), true) => {
                return Err(ChoiceError::Invalid(
                    "a grant is for this exact call or for a condition, not both".into(),
                ))
            }
            (Some(when), false) => Which::When(std::sync::Arc::new(
                portcullis_policy::When::parse(when).map_err(|e| ChoiceError::Invalid(e.to_string()))?,
            )),
            (None, true) => Which::Exact(self.gate.digester().digest(&p.arguments)),
            (None, false) => Which::Any,
        };
        let now = now_ms();
        let expires_at_ms = g
            .duration
            .map(|d| now.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
        let grant = NewGrant {
            server: p.server.clone(),
            tool: p.tool.clone(),
            effect: if g.allow { Effect::Allow } else { Effect::Deny },
            reason: g.reason.clone(),
            session: (!g.every_session).then(|| p.session.clone()),
            which,
            expires_at_ms,
        };
        Ok(self.broker.grants.standing.add_for(p.method, grant, now))
    }

    /// Every other held call the choice covers is decided the same way, at once (DESIGN §5):
    /// a grant covers what it covers; a session approval the tool in that session; a policy
    /// write whatever the new policy now allows or denies. "Once" covers only its call.
    fn settle_covered(
        &self,
        decided: &PendingApproval,
        choice: &Choice,
        resolution: &Resolution,
        written_rule: Option<&portcullis_policy::RuleRef>,
    ) -> Vec<String> {
        // The same name at another door (the prompt `x` beside the tool `x`) is another request;
        // a held answer is decided only by itself, and decides no held call.
        let is_answer = |p: &PendingApproval| p.rule == HeldBy::Answer;
        let same_tool = |p: &PendingApproval| {
            p.server == decided.server
                && p.tool == decided.tool
                && p.method == decided.method
                && !is_answer(p)
                && !is_answer(decided)
        };
        let mut settled = Vec::new();
        for p in self.broker.pending().into_iter().filter(same_tool) {
            let outcome = match choice {
                Choice::Approve(Scope::Once) | Choice::Deny { always: false, .. } | Choice::Edit { .. } => None,
                Choice::Approve(Scope::Session) => (p.session == decided.session).then(|| resolution.clone()),
                Choice::Grant(_) => self.standing_grant_for(&p).map(|found| match found.effect {
                    portcullis_gate::held_calls::Effect::Allow => Resolution::Approved(Scope::Once),
                    portcullis_gate::held_calls::Effect::Deny => Resolution::Rejected {
                        reason: found.reason,
                        always: false,
                    },
                }),
                Choice::Approve(Scope::Always) | Choice::Deny { always: true, .. } => self.policy_now_decides(&p, None),
                // Only the calls the new rule itself decides: nothing else changed.
                Choice::Rule(_) => written_rule.and_then(|name| self.policy_now_decides(&p, Some(name))),
            };
            if let Some(outcome) = outcome {
                if self.broker.resolve(&p.id, outcome).is_ok() {
                    settled.push(p.id);
                }
            }
        }
        settled
    }

    fn standing_grant_for(&self, p: &PendingApproval) -> Option<portcullis_gate::held_calls::Found> {
        let places = self.gate.places(&p.server);
        self.find_standing(
            p.method,
            &p.server,
            &p.tool,
            &p.session,
            p.client.facts(&p.arguments, &places),
        )
    }

    /// What the policy in force says of a held call now that a rule was written: settled when it
    /// no longer asks.
    /// With `by_rule`, only when that rule is what decides.
    fn policy_now_decides(
        &self,
        p: &PendingApproval,
        by_rule: Option<&portcullis_policy::RuleRef>,
    ) -> Option<Resolution> {
        let Some(InForce::Policy(policy)) = self.gate.policies().get(&p.server) else {
            return None;
        };
        let places = self.gate.places(&p.server);
        let facts = p.client.facts(&p.arguments, &places);
        let eval = portcullis_gate::gate::door::evaluate_at(&policy, p.method, &p.tool, facts);
        if by_rule.is_some_and(|rule| *rule != eval.rule) {
            return None;
        }
        match eval.action {
            portcullis_policy::Action::Allow => Some(Resolution::Approved(Scope::Once)),
            portcullis_policy::Action::Deny | portcullis_policy::Action::Hide => Some(Resolution::Rejected {
                reason: Some("denied by the rule just written".into()),
                always: false,
            }),
            portcullis_policy::Action::RequireApproval => None,
        }
    }
}

/// A held answer is passed or refused once: no grant, no "always", no edit covers what a server
/// answers, since the next answer is another text.
fn check_answer_choice(p: &PendingApproval, choice: &Choice) -> Result<(), ChoiceError> {
    match choice {
        Choice::Approve(Scope::Once) | Choice::Deny { always: false, .. } => Ok(()),
        _ => Err(ChoiceError::Invalid(format!(
            "this is the answer of {} from {}, held for what it holds: it can only be passed once or \
             refused (approve once, or deny without \"always\")",
            p.tool, p.server
        ))),
    }
}

/// How the chosen call itself ends.
fn resolution_of(choice: &Choice) -> Resolution {
    match choice {
        Choice::Approve(scope) => Resolution::Approved(*scope),
        Choice::Deny { reason, always } => Resolution::Rejected {
            reason: reason.clone(),
            always: *always,
        },
        Choice::Edit { arguments } => Resolution::Edited(arguments.clone()),
        Choice::Grant(g) if g.allow => Resolution::Approved(Scope::Once),
        Choice::Rule(r) if r.allow => Resolution::Approved(Scope::Always),
        Choice::Rule(r) => Resolution::Rejected {
            reason: r.reason.clone(),
            always: true,
        },
        Choice::Grant(g) => Resolution::Rejected {
            reason: g.reason.clone(),
            always: false,
        },
    }
}
