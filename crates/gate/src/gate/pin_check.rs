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

use portcullis_policy::{Action, Evaluation};

use super::{Call, Caller, Gate, Step};
use crate::held_calls::pending::HeldBy;
use crate::pins::PinChange;

impl Gate {
    /// The change that holds this call, unless the policy refuses it anyway.
    pub(super) fn pending_change(&self, call: &Call, eval: &Evaluation) -> Option<PinChange> {
        if matches!(eval.action, Action::Deny | Action::Hide) {
            return None;
        }
        self.pins.change(&call.server, &call.tool)
    }

    /// A call to a changed tool: refused when the policy's own allow would refuse it (its rate
    /// limit), else asked of a person as `pin:changed`.
    pub(super) fn changed_step(&self, call: &Call, caller: &Caller, eval: Evaluation, change: PinChange) -> Step {
        if eval.action == Action::Allow {
            let ruling = self.rule(call, caller, &eval);
            if ruling.message.is_some() {
                return Step::Settle(ruling);
            }
        }
        Step::Ask {
            rule: HeldBy::PinChanged,
            timeout_secs: eval.approval_timeout_secs,
            change: Some(Box::new(change)),
        }
    }
}
