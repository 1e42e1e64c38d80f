//! A dry run of a person's choice (DESIGN §5, §7 `--dry-run`): the grant or the policy rule it
//! would make, and how many earlier audited calls of the same tool it would have matched. It
//! decides nothing and writes nothing; the held call stays pending.
//!
//! The counting uses what each kind of grant itself compares: the keyed argument digest for an
//! exact call, the `when` condition for a scoped grant, everything for any arguments, and for a
//! rule written into the policy file the policy as it would then be, evaluated by the policy
//! crate. Audit rows keep *redacted* arguments, so a condition that reads a redacted value is
//! compared against `[redacted]`, not the secret; the answer counts those rows so a person knows.

use portcullis_audit::{AuditRow, REDACTED};
use portcullis_policy::{Action, CallFacts, Policy, RuleRef, When};
use serde::Serialize;
use serde_json::{json, Value};

use super::{Choice, ChoiceError, GrantChoice, PersonSide};
use portcullis_gate::gate::door::{self, door_of};
use portcullis_gate::held_calls::pending::{PendingApproval, Scope};

/// At most this many earlier calls are compared, newest first.
pub const DRY_RUN_ROWS: usize = 1000;

/// What a choice would do, and what it would have matched.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    pub id: String,
    pub server: String,
    pub tool: String,
    /// `"approve"` or `"deny"`.
    pub decision: &'static str,
    /// `"grant"` (in memory), `"policy"` (a rule in the server's policy file), `"pin"` (trust a
    /// changed tool's new definition) or `"nothing"` (this call only).
    pub writes: &'static str,
    /// The grant, when `writes` is `"grant"`.
    pub grant: Option<Value>,
    /// The `tools` key and entry, when `writes` is `"policy"`.
    pub rule: Option<Value>,
    /// Earlier audited calls the grant or rule covers.
    pub matched: usize,
    /// Earlier audited calls of this server and tool that were compared (newest first).
    pub compared: usize,
    /// At most this many are compared; `compared == limit` means older ones were not.
    pub limit: usize,
    /// Compared rows in which a value the grant or rule reads was redacted in the audit, so it
    /// was compared as `[redacted]`.
    pub redacted: usize,
}

/// Which earlier calls a choice covers.
enum Cover {
    /// Only the held call.
    Nothing,
    Exact(String),
    When(Box<When>),
    Any,
    /// Calls the policy with the new entry would decide with `Action`.
    Policy(Box<Policy>, Action),
    /// Calls the written rule would decide in that policy.
    Rule(Box<Policy>, RuleRef),
}

impl PersonSide {
    /// What `choice` on the held call `id` would do; decides nothing.
    pub fn dry_run(&self, id: &str, choice: &Choice) -> Result<DryRun, ChoiceError> {
        let p = self.broker.lookup(id)?;
        let (decision, writes, grant, rule, cover, session) = self.plan(&p, choice)?;
        let rows = self
            .gate
            .audit_store()
            .and_then(|store| store.calls_of(&p.server, &p.tool, DRY_RUN_ROWS))
            .map_err(|e| ChoiceError::Invalid(format!("cannot read the audit log: {e}")))?;
        let mut matched = 0;
        let mut redacted = 0;
        for row in &rows {
            // Another kind of request with the same name (a prompt named like a tool) is not this one.
            if row.method != p.method || session.as_deref().is_some_and(|s| s != row.session) {
                continue;
            }
            let (hit, read_redacted) = covers(&cover, row);
            matched += usize::from(hit);
            redacted += usize::from(read_redacted);
        }
        Ok(DryRun {
            id: id.to_owned(),
            server: p.server.clone(),
            tool: p.tool.clone(),
            decision,
            writes,
            grant,
            rule,
            matched,
            compared: rows.len(),
            limit: DRY_RUN_ROWS,
            redacted,
        })
    }

    /// What the choice would make, and how to tell which earlier calls it covers (and, for a
    /// session's grant, whose).
    #[allow(clippy::type_complexity)]
    fn plan(
        &self,
        p: &PendingApproval,
        choice: &Choice,
    ) -> Result<
        (
            &'static str,
            &'static str,
            Option<Value>,
            Option<Value>,
            Cover,
            Option<String>,
        ),
        ChoiceError,
    > {
        let session_grant =
            |effect: &str| json!({"effect": effect, "which": "any", "session": p.session, "expires_at_ms": null});
        Ok(match (choice, &p.pin_change) {
            (Choice::Approve(Scope::Once) | Choice::Edit { .. }, _) => {
                ("approve", "nothing", None, None, Cover::Nothing, None)
            }
            (Choice::Deny { always: false, .. }, _) => ("deny", "nothing", None, None, Cover::Nothing, None),
            (Choice::Approve(Scope::Always), Some(_)) => ("approve", "pin", None, None, Cover::Nothing, None),
            (Choice::Approve(Scope::Session), _) => (
                "approve",
                "grant",
                Some(session_grant("allow")),
                None,
                Cover::Any,
                Some(p.session.clone()),
            ),
            (Choice::Approve(Scope::Always), None) => {
                let (rule, cover) = self.policy_plan(p, "allow", None, Action::Allow)?;
                ("approve", "policy", None, Some(rule), cover, None)
            }
            (Choice::Deny { reason, always: true }, _) => {
                let reason = reason.as_deref().unwrap_or("denied always by the user");
                let (rule, cover) = self.policy_plan(p, "deny", Some(reason), Action::Deny)?;
                ("deny", "policy", None, Some(rule), cover, None)
            }
            (Choice::Rule(rule), _) => {
                let (planned, cover) = self.rule_plan(p, rule)?;
                let decision = if rule.allow { "approve" } else { "deny" };
                (decision, "policy", None, Some(planned), cover, None)
            }
            (Choice::Grant(g), _) => {
                let (grant, cover) = self.grant_plan(p, g)?;
                let decision = if g.allow { "approve" } else { "deny" };
                let session = (!g.every_session).then(|| p.session.clone());
                (decision, "grant", Some(grant), None, cover, session)
            }
        })
    }

    /// The entry "always" would write and the policy as it would be with it.
    fn policy_plan(
        &self,
        p: &PendingApproval,
        action: &str,
        reason: Option<&str>,
        effect: Action,
    ) -> Result<(Value, Cover), ChoiceError> {
        let door = door_of(p.method);
        let policies = self.gate.policies();
        let entry = policies.standing_entry(&p.server, door, p.rule.policy_rule(), action, reason);
        let text = policies.preview_entry(&p.server, door, &p.tool, entry.clone())?;
        let source = policies.path(&p.server).display().to_string();
        let policy = Policy::from_json_str(&text, &source).map_err(|e| ChoiceError::Invalid(e.to_string()))?;
        let key = portcullis_policy::exact_entry_key(door, &p.tool).map_err(|e| ChoiceError::Invalid(e.to_string()))?;
        Ok((
            json!({"key": key, "entry": entry}),
            Cover::Policy(Box::new(policy), effect),
        ))
    }

    /// The entry an "always" with a condition would write, the rule in it, and the policy with it.
    fn rule_plan(
        &self,
        p: &PendingApproval,
        rule: &portcullis_gate::policy_store::NewRule,
    ) -> Result<(Value, Cover), ChoiceError> {
        let written = self
            .gate
            .policies()
            .preview_rule(&p.server, door_of(p.method), &p.tool, rule)?;
        let source = self.gate.policies().path(&p.server).display().to_string();
        let policy = Policy::from_json_str(&written.text, &source).map_err(|e| ChoiceError::Invalid(e.to_string()))?;
        let new_rule = written.entry["rules"][written.index].clone();
        // False when an earlier rule of the author's (one that asks, placed before a deny the new
        // rule must not beat) still decides the held call: the person should know before writing.
        let places = self.gate.places(&p.server);
        let decides_this_call =
            door::evaluate_at(&policy, p.method, &p.tool, p.client.facts(&p.arguments, &places)).rule == written.name;
        let planned = json!({
            "decides_this_call": decides_this_call,
            "key": written.key,
            "entry": written.entry,
            "name": written.name,
            "rule": new_rule,
            "rule_text": portcullis_gate::policy_store::entry_text(&written.key, &written.entry),
        });
        Ok((planned, Cover::Rule(Box::new(policy), written.name)))
    }

    fn grant_plan(&self, p: &PendingApproval, g: &GrantChoice) -> Result<(Value, Cover), ChoiceError> {
        let (which, cover) = match (&g.when, g.exact) {
            (Some(_), true) => {
                return Err(ChoiceError::Invalid(
                    "a grant is for this exact call or for a condition, not both".into(),
                ))
            }
            (Some(when), false) => {
                let parsed = When::parse(when).map_err(|e| ChoiceError::Invalid(e.to_string()))?;
                ("when", Cover::When(Box::new(parsed)))
            }
            (None, true) => ("exact", Cover::Exact(self.gate.digester().digest(&p.arguments))),
            (None, false) => ("any", Cover::Any),
        };
        let grant = json!({
            "effect": if g.allow { "allow" } else { "deny" },
            "which": which,
            "when": g.when,
            "session": (!g.every_session).then(|| p.session.clone()),
            "for_secs": g.duration.map(|d| d.as_secs()),
            "reason": g.reason,
        });
        Ok((grant, cover))
    }
}

/// Whether `cover` covers the audited call, and whether it read a redacted value to say so.
fn covers(cover: &Cover, row: &AuditRow) -> (bool, bool) {
    let facts = CallFacts {
        arguments: &row.arguments,
        client_name: row.client_name.as_deref(),
        client_version: row.client_version.as_deref(),
        // Past calls are read as a server nothing is known about: relative paths strictly.
        places: portcullis_policy::Places::unknown(),
    };
    match cover {
        Cover::Nothing => (false, false),
        Cover::Exact(digest) => (row.arguments_digest == *digest, false),
        Cover::Any => (true, false),
        Cover::When(when) => (when.holds(&facts), reads_redacted(when.as_json(), &row.arguments)),
        Cover::Policy(policy, effect) => {
            let action = door::evaluate_at(policy, row.method, &row.tool, facts).action;
            let hit = action == *effect || (*effect == Action::Deny && action == Action::Hide);
            (hit, contains_redacted(&row.arguments))
        }
        Cover::Rule(policy, rule) => {
            let hit = door::evaluate_at(policy, row.method, &row.tool, facts).rule == *rule;
            (hit, contains_redacted(&row.arguments))
        }
    }
}

/// Whether a path the `when` object reads (`arguments.a.b`) meets a redacted value on the way.
fn reads_redacted(when: &Value, arguments: &Value) -> bool {
    let Value::Object(paths) = when else {
        return false;
    };
    paths.keys().any(|key| {
        let Some(path) = key.strip_prefix("arguments.") else {
            return false;
        };
        let mut current = arguments;
        for segment in path.split('.') {
            if is_redacted(current) {
                return true;
            }
            current = match current {
                Value::Object(map) => match map.get(segment) {
                    Some(next) => next,
                    None => return false,
                },
                Value::Array(items) => match segment.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(next) => next,
                    None => return false,
                },
                _ => return false,
            };
        }
        contains_redacted(current)
    })
}

fn is_redacted(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s.contains(REDACTED))
}

/// Whether any value in `value` was redacted.
fn contains_redacted(value: &Value) -> bool {
    match value {
        Value::String(_) => is_redacted(value),
        Value::Array(items) => items.iter().any(contains_redacted),
        Value::Object(map) => map.values().any(contains_redacted),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use portcullis_audit::{DecidedBy, Decision, NewDecision};
    use portcullis_wire::RequestId;

    use super::*;
    use portcullis_gate::gate::{Call, Caller, Verdict};

    async fn record(gate: &portcullis_gate::gate::Gate, session: &str, arguments: Value) {
        let row = NewDecision {
            method: portcullis_audit::Method::ToolsCall,
            time_ms: 1_000,
            session: session.into(),
            client_name: None,
            client_version: None,
            server: "srv".into(),
            tool: "ask".into(),
            arguments_digest: gate.digester().digest(&arguments),
            arguments,
            decision: Decision::Approved,
            decided_by: DecidedBy::User,
            rule: Some("tools.ask".into()),
            reason: None,
            wait_ms: None,
            request_id: None,
            arguments_text: None,
            original_arguments: None,
            extra_redact_keys: Vec::new(),
        };
        gate.record_for_test(row).await.unwrap();
    }

    fn grant(allow: bool, every_session: bool, when: Option<Value>, exact: bool) -> Choice {
        Choice::Grant(GrantChoice {
            allow,
            reason: None,
            every_session,
            duration: Some(Duration::from_secs(60)),
            when,
            exact,
        })
    }

    #[tokio::test]
    async fn a_dry_run_counts_what_each_kind_of_choice_covers_and_decides_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let gate = crate::choose::hold_tests::gate(&dir, 600);
        let _approver = gate.person.broker().attach_approver();
        record(&gate, "a", json!({"path": "/tmp/x/1"})).await;
        record(&gate, "b", json!({"path": "/tmp/x/2"})).await;
        record(&gate, "a", json!({"path": "/etc/p"})).await;
        record(&gate, "a", json!({"path": "/tmp/x/new"})).await;
        record(&gate, "a", json!({"path": "/tmp/x/3", "token": "abc"})).await;
        let id = RequestId::from_value(&json!(1)).unwrap();
        let call = Call::made("srv", "ask", json!({"path": "/tmp/x/new"}), id);
        let caller = Caller {
            session: "a".into(),
            ..Caller::default()
        };
        let Verdict::Hold(hold) = gate.decide(call, &caller).await else {
            panic!("held");
        };
        let id = hold.id().to_owned();
        let policy_before = std::fs::read_to_string(dir.path().join("policies/srv.json")).unwrap();
        let under = Some(json!({"arguments.path": {"path_under": "/tmp/x"}}));
        let count = |choice: Choice| {
            let run = gate.person.dry_run(&id, &choice).unwrap();
            assert_eq!(run.compared, 5);
            (run.matched, run.redacted, run.writes)
        };
        assert_eq!(
            count(grant(true, false, under.clone(), false)),
            (3, 0, "grant"),
            "this session, under /tmp/x"
        );
        assert_eq!(
            count(grant(false, true, under, false)),
            (4, 0, "grant"),
            "every session"
        );
        assert_eq!(
            count(grant(true, true, None, true)),
            (1, 0, "grant"),
            "the exact call, by digest"
        );
        assert_eq!(count(grant(true, true, None, false)), (5, 0, "grant"), "any arguments");
        let secret = Some(json!({"arguments.token": {"eq": "abc"}}));
        assert_eq!(
            count(grant(true, true, secret, false)),
            (0, 1, "grant"),
            "a redacted value is compared as stored, and said so"
        );
        assert_eq!(count(Choice::Approve(Scope::Session)), (4, 0, "grant"));
        assert_eq!(count(Choice::Approve(Scope::Once)), (0, 0, "nothing"));
        let always = gate.person.dry_run(&id, &Choice::Approve(Scope::Always)).unwrap();
        assert_eq!((always.writes, always.matched, always.redacted), ("policy", 5, 1));
        assert_eq!(always.rule.as_ref().unwrap()["key"], "ask");
        let deny_always = Choice::Deny {
            reason: Some("no".into()),
            always: true,
        };
        let deny = gate.person.dry_run(&id, &deny_always).unwrap();
        assert_eq!((deny.decision, deny.matched), ("deny", 5));
        assert_eq!(deny.rule.unwrap()["entry"]["action"], "deny");
        // Nothing was decided or written.
        assert!(gate.person.broker().get(&id).is_some(), "still pending");
        assert!(
            gate.person
                .broker()
                .grants
                .standing
                .list(portcullis_gate::clock::now_ms())
                .is_empty(),
            "no grant made"
        );
        let policy_after = std::fs::read_to_string(dir.path().join("policies/srv.json")).unwrap();
        assert_eq!(policy_before, policy_after, "the policy file is unchanged");
        assert!(matches!(
            gate.person.dry_run("999", &Choice::Approve(Scope::Once)),
            Err(ChoiceError::Decide(portcullis_gate::held_calls::DecideError::Unknown(
                _
            )))
        ));
    }

    #[test]
    fn a_redacted_value_on_a_read_path_is_noticed() {
        let args = json!({"url": "https://u:[redacted]@h/x", "auth": "[redacted]", "path": "/tmp/a"});
        assert!(reads_redacted(&json!({"arguments.url": {"prefix": "https://"}}), &args));
        assert!(
            reads_redacted(&json!({"arguments.auth.user": {"eq": "x"}}), &args),
            "a redacted subtree"
        );
        assert!(!reads_redacted(
            &json!({"arguments.path": {"path_under": "/tmp"}}),
            &args
        ));
        assert!(!reads_redacted(&json!({"client.name": {"eq": "x"}}), &args));
        assert!(contains_redacted(&args));
        assert!(!contains_redacted(&json!({"path": "/tmp/a", "n": [1, "b"]})));
    }
}
