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

use portcullis_policy::{Action, Evaluation};

use super::{Call, Caller, Gate, Verdict};
use crate::approval::pending::HeldBy;
use crate::pins::PinChange;

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
        let timeout = eval.approval_timeout_secs;
        self.ask(call, caller, HeldBy::PinChanged, timeout, Some(change)).await
    }
}

#[cfg(test)]
mod tests;
