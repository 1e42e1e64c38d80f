//! What the CLI (through the control API, `http/control.rs`) and the desktop app (in-process)
//! ask of a running gateway: the held calls and a person's answers, the standing grants, the
//! pause switch, the policy files, the tool pins and the gateway's health. One API for both, so
//! neither reaches into the gate's parts.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use portcullis_audit::AuditFault;

use crate::broker::standing::Listed;
use crate::broker::ApproverGuard;
use crate::choose::dry_run::DryRun;
use crate::choose::{Choice, ChoiceError, Decided};
use crate::Keeper;
use portcullis_gate::held_calls::pending::PendingApproval;
use portcullis_gate::held_calls::{DecideError, Extended};
use portcullis_gate::pins::{PinError, ToolPin};
use portcullis_gate::policy_store::{InForce, PolicyProblem, PolicyState, PolicyWrite, ReloadMode, UndoError};

/// What a person checks when calls are refused (`GET /control/status`).
#[derive(Debug, Clone)]
pub struct Health {
    /// Why the audit cannot be written now; every call is refused until it can.
    pub audit: Option<AuditFault>,
    /// The policy files that could not be put in force.
    pub policies: Vec<PolicyProblem>,
    /// How changed policy files reach the gate (watched, or polled only and why).
    pub policy_reload: ReloadMode,
}

/// A call explained by the policy the gate holds now, beside where that policy came from
/// (`POST /control/policy/explain`, `portcullis policy explain`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct GateExplanation {
    pub state: PolicyState,
    /// How the policy in force decides the call; `None` when no policy is in force.
    pub explanation: Option<portcullis_policy::Explanation>,
    /// The explanation as the CLI prints it, one line each.
    pub lines: Vec<String>,
    /// How changed files reach the gate.
    pub reload: ReloadMode,
}

/// Held calls and a person's answers.
impl Keeper {
    /// Every call held for a person, oldest first.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        self.person.broker().pending()
    }

    /// The live client sessions, by server then oldest first: this process's HTTP entry's, and
    /// those every `connect` announced over its keeper link.
    pub fn live_sessions(&self) -> Vec<portcullis_gate::held_calls::LiveSession> {
        self.person.broker().live_sessions.list()
    }

    /// Whether the call `id` is still held.
    pub fn is_pending(&self, id: &str) -> bool {
        self.plane.gate().pending(id).is_some()
    }

    /// A person decides the held call `id` ([`crate::choose::PersonSide::choose`]).
    pub fn choose(&self, id: &str, choice: Choice) -> Result<Decided, ChoiceError> {
        self.person.choose(id, choice)
    }

    /// What `choice` on `id` would write and match in the audit; decides nothing. Reads the
    /// audit database: call it off the async threads.
    pub fn dry_run(&self, id: &str, choice: &Choice) -> Result<DryRun, ChoiceError> {
        self.person.dry_run(id, choice)
    }

    /// Moves the held call's deadline `by` later, bounded by `approval.max_hold_secs` from when
    /// it was held.
    pub fn extend_approval(&self, id: &str, by: Duration) -> Result<Extended, DecideError> {
        self.person.extend(id, by)
    }

    /// Counts someone who answers prompts while the guard lives: with nobody, held calls are
    /// refused at once instead of waiting for no one.
    pub fn attach_approver(&self) -> ApproverGuard {
        self.person.broker().attach_approver()
    }

    /// Whether approvals are paused (held calls denied at once).
    pub fn paused(&self) -> bool {
        self.person.broker().paused()
    }

    /// Pauses or resumes approvals ([`crate::broker::ApprovalBroker::set_paused`]).
    pub fn set_paused(&self, paused: bool) {
        self.person.broker().set_paused(paused);
    }
}

/// Standing grants, policy files, pins and health.
impl Keeper {
    /// The standing grants in force now.
    pub fn standing_grants(&self) -> Vec<Listed> {
        self.person
            .broker()
            .grants
            .standing
            .list(portcullis_gate::clock::now_ms())
    }

    /// Ends the standing grant `id` at once; `false` if it is not in force.
    pub fn revoke_grant(&self, id: &str) -> bool {
        self.person.broker().grants.standing.revoke(id)
    }

    /// Where `server`'s policy file is, whether or not it exists.
    pub fn policy_path(&self, server: &str) -> PathBuf {
        self.plane.gate().policy_path(server)
    }

    /// Why no policy is in force for `server`, when no valid one was ever loaded (every call of
    /// it is refused); `None` when one is, or `server` is not configured.
    pub fn policy_broken(&self, server: &str) -> Option<Arc<str>> {
        match self.plane.gate().policy(server) {
            Some(InForce::Broken(why)) => Some(why),
            Some(InForce::Policy(_)) | None => None,
        }
    }

    /// Where `server`'s policy in force came from; `None` for a server not configured.
    pub fn policy_state(&self, server: &str) -> Option<PolicyState> {
        self.plane.gate().policy_state(server)
    }

    /// How the policy the gate holds for `server` decides a call of `tool`; `None` for a server
    /// not configured.
    pub fn explain_policy(
        &self,
        server: &str,
        tool: &str,
        facts: &portcullis_policy::CallFacts<'_>,
    ) -> Option<GateExplanation> {
        let state = self.plane.gate().policy_state(server)?;
        let (explanation, lines) = match self.plane.gate().policy(server)? {
            InForce::Policy(policy) => {
                let explanation = policy.explain(tool, facts);
                let lines = explanation.lines();
                (Some(explanation), lines)
            }
            InForce::Broken(why) => (None, vec![format!("every call is refused: {why}")]),
        };
        Some(GateExplanation {
            state,
            explanation,
            lines,
            reload: self.plane.gate().policy_reload_mode(),
        })
    }

    /// Reads `server`'s policy file again now (after the app saved it; the watcher would too).
    pub fn reload_policy(&self, server: &str) {
        self.plane.gate().reload_policy(server);
    }

    /// Takes back the policy write an "always" decision made ([`Decided::policy_write`]).
    pub fn undo_policy_write(&self, write_id: &str) -> Result<PolicyWrite, UndoError> {
        self.person.undo_policy_write(write_id)
    }

    /// Whether the audit can be written, and which policy files were rejected.
    pub fn health(&self) -> Health {
        Health {
            audit: self.plane.gate().audit_fault(),
            policies: self.plane.gate().policy_problems(),
            policy_reload: self.plane.gate().policy_reload_mode(),
        }
    }

    /// Every pinned tool, with its pending change if the server changed it (control API, desktop).
    pub fn tool_pins(&self) -> Vec<ToolPin> {
        self.plane.gate().tool_pins()
    }

    /// The pinned tools whose servers changed them; their calls are held until accepted.
    pub fn changed_tools(&self) -> Vec<ToolPin> {
        self.plane.gate().changed_tools()
    }

    /// Trusts the changed definition of `tool`; with `digest`, only if that is still the change
    /// the person reviewed (`PinChange::new_digest`).
    pub fn accept_tool(&self, server: &str, tool: &str, digest: Option<&str>) -> Result<ToolPin, PinError> {
        self.plane.gate().accept_tool(server, tool, digest)
    }
}
