//! The gate's parts as the rest of the gateway uses them: policy files, held calls, grants,
//! the tool catalog and pins. Each method says what the caller does; outside the crate the same
//! things are reached through [`crate::Gateway`].

use std::sync::Arc;

use portcullis_wire::Message;
use serde_json::Value;

use super::Gate;
use crate::held_calls::pending::{ClientInfo, PendingApproval};
use crate::held_calls::LiveSession;
use crate::held_calls::Resolution;
use crate::pins::{PinError, ToolPin};
use crate::policy_store::{InForce, PolicyProblem};

impl Gate {
    /// The policy in force for `server` (`None`: not a configured server).
    pub fn policy(&self, server: &str) -> Option<InForce> {
        self.policies.get(server)
    }

    /// Where `server`'s policy file is (whether or not it exists).
    pub fn policy_path(&self, server: &str) -> std::path::PathBuf {
        self.policies.path(server)
    }

    /// Reads `server`'s policy file again now (the watcher would, a moment later).
    pub fn reload_policy(&self, server: &str) {
        self.policies.reload(server);
    }

    /// A server configured at run time: its policy file is loaded and watched.
    pub fn add_server(&self, server: &str) {
        self.policies.add_server(server);
    }

    /// Where `server` resolves the paths it is given (unknown until [`Gate::set_places`]).
    pub fn places(&self, server: &str) -> Arc<portcullis_policy::Places> {
        let places = self.places.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        places.get(server).cloned().unwrap_or_default()
    }

    /// Sets where `server` resolves paths (at start, and when its config changes).
    pub fn set_places(&self, server: &str, places: portcullis_policy::Places) {
        let mut all = self.places.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.insert(server.to_owned(), Arc::new(places));
    }

    /// Where `server`'s policy in force came from.
    pub fn policy_state(&self, server: &str) -> Option<crate::policy_store::PolicyState> {
        self.policies.state(server)
    }

    /// How changed policy files reach the gate.
    pub fn policy_reload_mode(&self) -> crate::policy_store::ReloadMode {
        self.policies.reload_mode()
    }

    /// The policy files that could not be put in force.
    pub fn policy_problems(&self) -> Vec<PolicyProblem> {
        self.policies.problems()
    }

    /// Why the audit cannot be written now, if it cannot (every call is refused meanwhile).
    pub fn audit_fault(&self) -> Option<portcullis_audit::AuditFault> {
        self.audit.fault()
    }

    /// The policy files, as an "always" writes them and an undo takes the write back.
    pub fn policies(&self) -> &Arc<crate::policy_store::PolicyStore> {
        &self.policies
    }

    /// A reader on the audit database.
    pub fn audit_store(&self) -> Result<portcullis_audit::AuditStore, portcullis_audit::AuditError> {
        self.audit.store()
    }

    /// Whether this gate announced the row `id` itself (`AuditAppended`, at commit).
    pub fn announced(&self, id: i64) -> bool {
        self.announced
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&id)
    }

    /// The held call `id`, while it waits.
    pub fn pending(&self, id: &str) -> Option<PendingApproval> {
        self.held.pending(id)
    }

    /// Gives a held call up (the client cancelled its task): recorded as `cancelled`.
    pub fn cancel_held(&self, id: &str, why: String) {
        self.held.end(id, Resolution::Cancelled { why });
    }

    /// A session began, or its client said who it is: the keeper lists it until it ends.
    pub fn announce_session(&self, session: &str, server: &str, client: ClientInfo) {
        self.held.announce(LiveSession {
            session: session.to_owned(),
            server: server.to_owned(),
            client,
            via: String::new(),
            pid: 0,
            since_ms: crate::clock::now_ms(),
        });
    }

    /// The session ended: its held calls are withdrawn and its grants end.
    pub fn withdraw_session(&self, session: &str) {
        self.held.withdraw_session(session);
        self.continuations.end_session(session);
    }

    /// The client cancelled request `request_id` (its exact JSON text); `true` if it was still held.
    pub fn withdraw_request(&self, session: &str, request_id: &str) -> bool {
        self.held.withdraw_request(session, request_id)
    }

    /// Moves the deadline of a call this gate holds `by` later, bounded by `approval.max_hold_secs`
    /// from when it was held (a held call that became a task waits that long).
    pub fn extend(
        &self,
        id: &str,
        by: std::time::Duration,
    ) -> Result<crate::held_calls::Extended, crate::held_calls::DecideError> {
        self.held.extend(id, by, self.max_hold())
    }

    /// `approval.max_hold_secs`: the longest a call may be held, extensions included.
    pub fn max_hold(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.max_hold_secs)
    }

    /// Removes the tools `server`'s policy hides from a `tools/list` page one session was sent,
    /// learning the tools and their definitions on the way ([`crate::tools_filter`]).
    pub fn filter_listed(&self, server: &str, session: &str, response: Message) -> Message {
        let policy = match self.policies.get(server) {
            Some(InForce::Policy(policy)) => Some(policy),
            _ => None,
        };
        let learn = crate::tools_filter::Learn {
            server,
            session,
            catalog: &self.catalog,
            pins: &self.pins,
        };
        crate::tools_filter::filter(response, policy.as_ref(), &learn)
    }

    /// Removes the entries `server`'s policy hides from a resource, template or prompt list page
    /// ([`crate::tools_filter::filter_entries`]).
    pub fn filter_entries(&self, server: &str, response: Message, kind: &crate::tools_filter::ListKind) -> Message {
        let policy = match self.policies.get(server) {
            Some(InForce::Policy(policy)) => Some(policy),
            _ => None,
        };
        crate::tools_filter::filter_entries(response, policy.as_ref(), kind)
    }

    /// The server-wide tool list, read outside any agent session (the monitor connection).
    pub fn learn_server_tools(&self, server: &str, tools: &[Value]) {
        self.catalog.learn(server, tools);
    }

    /// What one session was told of the tools is gone (its upstream ended, or the list changed).
    pub fn forget_session_tools(&self, server: &str, session: &str) {
        self.catalog.forget(server, session);
    }

    /// The `inputSchema` of `tool` as `session` of `server` was told it, else as the server last
    /// listed it: what says which arguments a call mirrors into `Mcp-Param-*` headers.
    pub fn tool_input_schema(&self, server: &str, session: &str, tool: &str) -> Option<Value> {
        self.catalog.input_schema(server, session, tool)
    }

    /// Drops rate-limit counters whose window has emptied.
    pub fn prune_rate_limits(&self) {
        self.rate_limits.prune();
    }

    /// Every pinned tool, with its pending change if its server changed it.
    pub fn tool_pins(&self) -> Vec<ToolPin> {
        self.pins.list()
    }

    /// The pinned tools whose servers changed them.
    pub fn changed_tools(&self) -> Vec<ToolPin> {
        self.pins.changed()
    }

    /// Trusts the changed definition of `tool` (with `digest`, only if that is the change reviewed).
    pub fn accept_tool(&self, server: &str, tool: &str, digest: Option<&str>) -> Result<ToolPin, PinError> {
        self.pins.accept(server, tool, digest)
    }
}

/// Test setup for the app's command tests: the state a held call's answer or a `tools/list`
/// page would leave, made directly.
#[cfg(feature = "test-support")]
impl Gate {
    pub fn observe_tools(&self, server: &str, tools: &[Value]) {
        self.pins.observe(server, tools);
    }

    pub fn write_policy_entry(
        &self,
        server: &str,
        tool: &str,
        entry: Value,
    ) -> Result<crate::policy_store::PolicyWrite, crate::policy_store::WriteError> {
        self.policies.write_entry(server, tool, entry)
    }
}

#[cfg(feature = "test-support")]
impl Gate {
    /// Writes an audit row as the gate does (a dry run's tests need earlier calls).
    pub async fn record_for_test(
        &self,
        row: portcullis_audit::NewDecision,
    ) -> Result<i64, portcullis_audit::AuditError> {
        self.audit.record(row).await
    }
}
