//! Calls to a tool whose definition changed since it was pinned ([`crate::pins`]).
//!
//! Precedence, after the policy is evaluated:
//! 1. `deny` and `hide` win: a call the policy refuses needs no person, changed or not.
//! 2. A rate limit that refuses an allowed call refuses it: no prompt for a call that could not
//!    go on anyway.
//! 3. Otherwise — `allow` or `require_approval` — the call is held with rule `pin:changed`, even
//!    where the policy allows it. One approval covers both the change and the policy's own
//!    `require_approval`.
//!
//! A grant given before the change ("approve for this session") does not let the call through:
//! it approved the old definition. "For this session" on a `pin:changed` hold is bound to the new
//! definition's digest; "always" accepts the new definition (see [`Gate::choose`]).

use std::sync::Arc;

use portcullis_audit::{DecidedBy, Decision};
use portcullis_policy::{Action, Evaluation};

use super::{refused, Call, Caller, Gate, Hold, Ruling, Verdict};
use crate::approval::pending::HeldBy;
use crate::pins::{PinChange, PIN_RULE};

impl Gate {
    /// The change that holds this call, unless the policy refuses it anyway.
    pub(super) fn pending_change(&self, call: &Call, eval: &Evaluation) -> Option<PinChange> {
        if matches!(eval.action, Action::Deny | Action::Hide) {
            return None;
        }
        self.pins.change(&call.server, &call.tool)
    }

    pub(super) async fn hold_changed(
        self: &Arc<Self>,
        call: Call,
        caller: &Caller,
        eval: Evaluation,
        change: PinChange,
    ) -> Verdict {
        if eval.action == Action::Allow {
            let ruling = self.rule(&call, caller, &eval);
            if ruling.message.is_some() {
                return self.settle(call, caller, ruling, None).await.into();
            }
        }
        let grants = &self.approvals.grants;
        let standing = if grants.changed_tool_allows(&call.server, &call.tool, &caller.session, &change.new_digest) {
            Some("changed definition approved earlier for this session")
        } else if grants.take_continuation(
            &call.continuation_key(caller, &self.digester),
            call.request_state.as_deref(),
        ) {
            Some("retry of a call already approved")
        } else {
            None
        };
        if let Some(reason) = standing {
            let ruling = Ruling {
                decision: Decision::Approved,
                decided_by: DecidedBy::User,
                rule: Some(PIN_RULE.to_owned()),
                reason: Some(reason.into()),
                message: None,
            };
            return self.settle(call, caller, ruling, None).await.into();
        }
        let fields = change.fields.join(", ");
        if !self.approvals.has_approver() {
            let reason =
                format!("tool changed since it was pinned ({fields}); needs approval, but no approver is running");
            let text = format!(
                "call to {tool:?} is held because server {server:?} changed the tool since it was first seen \
                 ({fields}), but no approver is running; the call was not forwarded (a person can accept the \
                 change with `portcullis tools accept {server} {tool}`)",
                tool = call.tool,
                server = call.server,
            );
            let ruling = refused(
                Decision::Denied,
                DecidedBy::Gateway,
                Some(PIN_RULE.to_owned()),
                reason,
                text,
            );
            return self.settle(call, caller, ruling, None).await.into();
        }
        let timeout = crate::approval::timeout(eval.approval_timeout_secs, self.approval_timeout_secs);
        let hold = Hold::start(
            self.clone(),
            call,
            caller.clone(),
            HeldBy::PinChanged,
            timeout,
            Some(change),
        );
        Verdict::Hold(Box::new(hold))
    }
}

#[cfg(test)]
mod tests;
