//! The wire form of a person's choice on a held call, as the web views send it, and its
//! conversion to the gateway's [`Choice`]. Every axis the gateway offers (DESIGN §5) has a form
//! here; the prompt builds them in `ui/src/lib/grant.ts`.

use std::time::Duration;

use portcullis_gate::held_calls::pending::Scope;
use portcullis_gate::policy_store::NewRule;
use portcullis_keeper::choose::{Choice, GrantChoice};
use serde::Deserialize;
use serde_json::Value;

use crate::ipc::{IpcError, IpcResult};

/// `{approve: "once" | "session" | "always"}`, `{deny: {reason, always}}`,
/// `{edit: {arguments_json}}`, `{grant: {...}}` or `{rule: {allow, reason, when}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[ts(rename = "ApprovalChoice")]
pub enum ChoiceArg {
    Approve(Scope),
    Deny {
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        always: bool,
    },
    /// Approve once with these arguments instead. Sent as JSON text so integers beyond 2^53
    /// reach the gateway as typed (JavaScript numbers would round them).
    Edit {
        arguments_json: String,
    },
    /// A standing grant (in memory): which calls, whose, how long.
    Grant(GrantArg),
    /// "Always" with a condition: an argument rule written into the server's policy file.
    Rule(RuleArg),
}

/// An argument rule cut from the held call, for every session, written into the policy file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct RuleArg {
    /// Allow (`true`) or deny the calls it covers.
    pub allow: bool,
    /// Told to the agent when the rule denies.
    #[serde(default)]
    pub reason: Option<String>,
    /// The policy `when` object the rule decides.
    #[ts(type = "Record<string, unknown>")]
    pub when: Value,
}

/// A standing grant cut from the held call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct GrantArg {
    /// Approve (`true`) or deny the calls it covers.
    pub allow: bool,
    /// Told to the agent when the grant denies.
    #[serde(default)]
    pub reason: Option<String>,
    /// Every agent session, not only the held call's.
    pub every_session: bool,
    /// How long; `null`: until the gateway restarts (a session's grant ends with the session).
    #[serde(default)]
    pub duration_secs: Option<u64>,
    /// Only calls whose arguments satisfy this policy `when` object.
    #[serde(default)]
    #[ts(type = "Record<string, unknown> | null")]
    pub when: Option<Value>,
    /// Only this exact call (same arguments).
    #[serde(default)]
    pub exact: bool,
}

impl ChoiceArg {
    pub fn into_choice(self) -> IpcResult<Choice> {
        Ok(match self {
            Self::Approve(scope) => Choice::Approve(scope),
            Self::Deny { reason, always } => Choice::Deny {
                reason: reason.filter(|r| !r.trim().is_empty()),
                always,
            },
            Self::Edit { arguments_json } => {
                let arguments = serde_json::from_str(&arguments_json)
                    .map_err(|e| IpcError::new("invalid_choice", format!("the edited arguments are not JSON: {e}")))?;
                Choice::Edit { arguments }
            }
            Self::Grant(g) => {
                if g.duration_secs == Some(0) {
                    return Err(IpcError::new("invalid_choice", "a grant lasts at least a second"));
                }
                Choice::Grant(GrantChoice {
                    allow: g.allow,
                    reason: g.reason.filter(|r| !r.trim().is_empty()),
                    every_session: g.every_session,
                    duration: g.duration_secs.map(Duration::from_secs),
                    when: g.when,
                    exact: g.exact,
                })
            }
            Self::Rule(r) => Choice::Rule(NewRule {
                allow: r.allow,
                reason: r.reason.filter(|r| !r.trim().is_empty()),
                when: r.when,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: Value) -> Result<Choice, String> {
        let arg = serde_json::from_value::<ChoiceArg>(v).map_err(|e| e.to_string())?;
        arg.into_choice().map_err(|e| e.message)
    }

    #[test]
    fn choices_parse_as_the_ui_sends_them() {
        assert_eq!(
            parse(json!({"approve": "session"})).unwrap(),
            Choice::Approve(Scope::Session)
        );
        assert_eq!(
            parse(json!({"deny": {"reason": "no", "always": true}})).unwrap(),
            Choice::Deny {
                reason: Some("no".into()),
                always: true
            }
        );
        assert_eq!(
            parse(json!({"deny": {"reason": "  ", "always": false}})).unwrap(),
            Choice::Deny {
                reason: None,
                always: false
            },
            "a blank reason is no reason"
        );
        assert!(parse(json!({"approve": "forever"})).is_err());
        assert!(parse(json!({"allow": "once"})).is_err());
    }

    #[test]
    fn edited_arguments_keep_large_integers_exact() {
        let Choice::Edit { arguments } =
            parse(json!({"edit": {"arguments_json": "{\"n\": 12345678901234567890}"}})).unwrap()
        else {
            panic!("an edit is Choice::Edit");
        };
        assert_eq!(arguments.to_string(), r#"{"n":12345678901234567890}"#);
        let bad = parse(json!({"edit": {"arguments_json": "{nope"}})).unwrap_err();
        assert!(bad.contains("not JSON"), "{bad}");
    }

    #[test]
    fn grants_carry_every_axis() {
        let got = parse(json!({"grant": {
            "allow": false, "reason": "wrong target", "every_session": true, "duration_secs": 300,
            "when": {"arguments.path": {"path_under": "/tmp"}}, "exact": false
        }}))
        .unwrap();
        assert_eq!(
            got,
            Choice::Grant(GrantChoice {
                allow: false,
                reason: Some("wrong target".into()),
                every_session: true,
                duration: Some(Duration::from_secs(300)),
                when: Some(json!({"arguments.path": {"path_under": "/tmp"}})),
                exact: false,
            })
        );
        assert!(parse(json!({"grant": {"allow": true, "every_session": false, "duration_secs": 0}})).is_err());
    }

    #[test]
    fn a_rule_carries_its_condition() {
        let when = json!({"arguments.path": {"path_under": "/tmp"}});
        assert_eq!(
            parse(json!({"rule": {"allow": false, "reason": " ", "when": when}})).unwrap(),
            Choice::Rule(NewRule {
                allow: false,
                reason: None,
                when: when.clone(),
            })
        );
        assert!(
            parse(json!({"rule": {"allow": true}})).is_err(),
            "a rule needs its condition"
        );
    }
}
