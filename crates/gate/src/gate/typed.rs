//! Arguments of the type the tool declares. A lenient server converts a value of the wrong type
//! before its tool runs; the policy reads the conversions it knows, and for an argument a rule
//! reads, a value whose type the pinned `inputSchema` does not allow is refused here, so no
//! conversion the policy does not know can decide what runs. The agent is told how to send it.

use portcullis_audit::{DecidedBy, Decision};
use portcullis_policy::{Action, Evaluation, Policy};

use super::{refused, Call, Gate, Ruling};

impl Gate {
    /// The refusal of a call whose argument, read by a rule of the tool's entry, has a type the
    /// tool's pinned schema does not allow; `None` when the call may be decided by the policy.
    pub(super) fn mistyped(&self, policy: &Policy, call: &Call, eval: &Evaluation) -> Option<Ruling> {
        // Refused either way: the policy's own reason says more than a type would.
        if matches!(eval.action, Action::Deny | Action::Hide) {
            return None;
        }
        let problem = self.pins.with_pinned_schema(&call.server, &call.tool, |schema| {
            policy.argument_type_problem(&call.tool, &call.arguments, schema)
        })?;
        let text = format!("call to {:?} refused: {problem}", call.tool);
        Some(refused(Decision::Denied, DecidedBy::Gateway, None, problem, text))
    }
}
