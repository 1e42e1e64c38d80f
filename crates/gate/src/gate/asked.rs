//! What a held call's prompt says of why it asks and how risky the call is — from the policy
//! and what the server listed, not a guess from the tool's name alone.
//!
//! - Why: the deciding rule's or entry's own `reason`, and which part of the policy asked, in
//!   words a person reads ("the policy entry for write_file in fs.json", "argument rule 1 of …:
//!   arguments.path path_under \"/etc\""), from the same [`portcullis_policy::Policy::explain`]
//!   that `policy explain` prints.
//! - Class and risk: the entry's `class` and `risk` when the policy sets them; else the class
//!   guessed from the name, description and annotations ([`portcullis_policy::guess`]) and the
//!   level that class gets in a starter policy. A tool the server never listed, or whose
//!   definition changed since it was pinned, is at least high risk whatever the rest says: its
//!   name and description are exactly what cannot be trusted.

use portcullis_policy::{guess, starter, Door, Matched, Risk, RuleRef, ToolClass};
use serde_json::Value;

use super::{door, Call, Caller, Gate};
use crate::held_calls::pending::{HeldBy, RiskBasis};
use crate::pins::PinChange;
use crate::policy_store::InForce;
use crate::tool_catalog::ToolDescription;

/// The prompt's facts about one held call.
pub(super) struct Asking {
    pub reason: Option<String>,
    pub asked_by: String,
    pub class: ToolClass,
    pub risk_level: Risk,
    pub risk_basis: RiskBasis,
    pub info: ToolDescription,
}

impl Gate {
    pub(super) fn asking(&self, call: &Call, caller: &Caller, rule: &HeldBy, pin_change: Option<&PinChange>) -> Asking {
        let known = self.catalog.get(&call.server, &caller.session, &call.tool);
        let policy = match self.policies.get(&call.server) {
            Some(InForce::Policy(policy)) => Some(policy),
            _ => None,
        };
        let file = self
            .policies
            .path(&call.server)
            .file_name()
            .map_or_else(|| format!("{}.json", call.server), |n| n.to_string_lossy().into_owned());
        let places = self.places(&call.server);
        let facts = caller.facts(&call.arguments, &places);
        let at = door::door_of(call.method);
        let explained = policy.as_ref().map(|p| match at {
            Door::Tools => p.explain(&call.tool, &facts),
            _ => p.explain_request(at, &call.tool, &door::request_facts(call.method, facts)),
        });
        let explained = explained.filter(|e| rule.policy_rule() == Some(&e.evaluation.rule));
        let (asked_by, reason) = match (&explained, rule) {
            (_, HeldBy::PinChanged) => (
                "the tool's definition changed since it was pinned".to_owned(),
                Some(format!("the server changed {:?} since it was first seen", call.tool)),
            ),
            (_, HeldBy::Answer) => (
                format!("the results of {file}: an answer with these findings waits for a person"),
                None,
            ),
            (_, HeldBy::Policy(RuleRef::NoPolicyFile)) => {
                (format!("no policy file ({file} does not exist): every call asks"), None)
            }
            (Some(e), _) => (words(e, at, &file, &call.tool), e.evaluation.reason.clone()),
            (None, rule) => (format!("{rule} in {file}"), None),
        };
        let annotations = match (&explained, &policy) {
            (Some(e), Some(p)) => e.evaluation.entry().map(|key| p.annotations_in(at, key)),
            _ => None,
        }
        .unwrap_or_default();
        let info = known.info;
        let guessed = match at {
            Door::Tools => guess::tool_class(&call.tool, info.description.as_deref(), info.annotations.as_ref()),
            _ => door::class_of(call.method),
        };
        let class = annotations.class.unwrap_or(guessed);
        let from_policy = annotations.class.is_some() || annotations.risk.is_some();
        // The level a class gets when the policy gives none, as `policy init` writes it.
        let level = annotations.risk.unwrap_or_else(|| starter::class_risk(class));
        let (risk_level, risk_basis) = if pin_change.is_some() {
            (level.max(Risk::High), RiskBasis::DefinitionChanged)
        } else if !known.listed && at == Door::Tools {
            (level.max(Risk::High), RiskBasis::NeverListed)
        } else if from_policy {
            (level, RiskBasis::Policy)
        } else {
            (level, RiskBasis::Guessed)
        };
        Asking {
            reason,
            asked_by,
            class,
            risk_level,
            risk_basis,
            info,
        }
    }
}

/// Which part of the policy decided, as a person says it.
fn words(e: &portcullis_policy::Explanation, at: Door, file: &str, tool: &str) -> String {
    // A tool's entry is "the policy entry"; another section's says which section it is in.
    let what = match at {
        Door::Tools => "policy entry".to_owned(),
        at => format!("{at} entry"),
    };
    let entry = match &e.matched {
        Matched::Exact { key, .. } if at.server_request().is_some() => format!("the {at} entry in {file}"),
        Matched::Exact { key, .. } => format!("the {what} for {key} in {file}"),
        Matched::Glob { key, .. } => format!("the {what} {} in {file} (a pattern matching {tool})", key.key),
        Matched::Default if at.server_request().is_some() => {
            return format!("the default of {file} (it has no {at} entry)")
        }
        Matched::Default => return format!("the default of {file} (no entry names {tool})"),
        Matched::Hidden { pattern } => return format!("the hide pattern {pattern} in {file}"),
    };
    match e.rules.iter().find(|r| r.held) {
        Some(rule) => format!(
            "argument rule {} of {entry}: {}",
            rule.index + 1,
            when_words(&rule.when)
        ),
        None => entry,
    }
}

/// `{"arguments.path": {"path_under": "/etc"}}` → `arguments.path path_under "/etc"`.
fn when_words(when: &Value) -> String {
    let Some(fields) = when.as_object() else {
        return when.to_string();
    };
    let mut parts = Vec::new();
    for (field, test) in fields {
        match test.as_object() {
            Some(ops) => parts.extend(ops.iter().map(|(op, value)| format!("{field} {op} {value}"))),
            None => parts.push(format!("{field} {test}")),
        }
    }
    parts.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_as_words() {
        let when = serde_json::json!({"arguments.path": {"path_under": "/etc"}, "client.name": {"eq": "x", "ne": "y"}});
        assert_eq!(
            when_words(&when),
            r#"arguments.path path_under "/etc" and client.name eq "x" and client.name ne "y""#
        );
    }
}
