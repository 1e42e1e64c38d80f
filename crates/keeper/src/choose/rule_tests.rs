//! "Always" with a condition: the rule is written, settles exactly the held calls it covers, and
//! an undo puts the file back.

use std::sync::Arc;

use portcullis_wire::RequestId;
use serde_json::{json, Value};

use super::hold_tests::{ended, gate, held_call};
use crate::choose::Choice;
use portcullis_gate::gate::{Call, Caller, Gate, Verdict};
use portcullis_gate::policy_store::NewRule;

const POLICY: &str = "{\n  \"version\": \"1\",\n  \"tools\": {\n    \"ask\":   { \"action\": \"require_approval\", \"approval_timeout\": 60 }\n  }\n}\n";

fn call(path: &str, n: i64) -> Call {
    Call::made(
        "srv",
        "ask",
        json!({ "path": path }),
        RequestId::from_value(&json!(n)).unwrap(),
    )
}

/// Holds a call on `path` of session `session`; its approval id and a task that says how it ended.
async fn held(gate: &Arc<Gate>, path: &str, n: i64, session: &str) -> (String, tokio::task::JoinHandle<String>) {
    held_call(gate, call(path, n), session).await
}

fn under(dir: &str) -> Value {
    json!({"arguments.path": {"path_under": dir}})
}

#[tokio::test]
async fn an_allow_rule_settles_the_held_calls_it_covers_and_undo_restores_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir, 600);
    let file = dir.path().join("policies/srv.json");
    std::fs::write(&file, POLICY).unwrap();
    gate.reload_policy("srv");
    let _approver = gate.person.broker().attach_approver();
    let (a, a_task) = held(&gate, "/w/notes/a.md", 1, "s1").await;
    let (b, b_task) = held(&gate, "/w/notes/deep/b.md", 2, "s2").await;
    let (outside, _o) = held(&gate, "/w/other.md", 3, "s1").await;
    let (escape, _e) = held(&gate, "/w/notes/../secret.md", 4, "s1").await;

    let rule = NewRule {
        allow: true,
        when: under("/w/notes"),
        reason: None,
    };
    let planned = gate.person.dry_run(&a, &Choice::Rule(rule.clone())).unwrap();
    assert_eq!((planned.decision, planned.writes), ("approve", "policy"));
    let shown = planned.rule.unwrap();
    assert_eq!(shown["name"], "tools.ask.rules[0]");
    assert_eq!(shown["decides_this_call"], true);
    assert_eq!(shown["rule"], json!({"when": under("/w/notes"), "action": "allow"}));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        POLICY,
        "a dry run writes nothing"
    );

    let decided = gate.person.choose(&a, Choice::Rule(rule)).unwrap();
    assert_eq!(
        decided.also_settled,
        vec![b.clone()],
        "the other session's covered call is settled"
    );
    assert_eq!(ended(a_task).await, "forwarded");
    assert_eq!(ended(b_task).await, "forwarded");
    assert!(
        gate.person.broker().get(&outside).is_some(),
        "a call outside the directory still waits"
    );
    assert!(
        gate.person.broker().get(&escape).is_some(),
        "a `..` escape is not covered"
    );

    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.starts_with("{\n  \"version\": \"1\",\n  \"tools\": {\n    \"ask\":   {"),
        "{written}"
    );
    assert!(
        written.contains("path_under") && written.contains("\"approval_timeout\": 60"),
        "{written}"
    );
    let write = decided.policy_write.unwrap();
    assert!(write.rule_text.contains("/w/notes"), "{}", write.rule_text);

    // The next covered call passes by the rule, without a prompt.
    let next = gate.decide(call("/w/notes/c.md", 5), &Caller::default()).await;
    assert!(
        matches!(next, Verdict::Forward(_)),
        "a covered call is allowed by the rule"
    );

    gate.person.undo_policy_write(&write.write_id).unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        POLICY,
        "undo puts the exact bytes back"
    );
    let again = gate.decide(call("/w/notes/c.md", 6), &Caller::default()).await;
    assert!(matches!(again, Verdict::Hold(_)), "after undo the call is held again");
}

#[tokio::test]
async fn a_deny_rule_settles_covered_calls_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir, 600);
    std::fs::write(dir.path().join("policies/srv.json"), POLICY).unwrap();
    gate.reload_policy("srv");
    let _approver = gate.person.broker().attach_approver();
    let (a, a_task) = held(&gate, "/home/me/.ssh/id", 1, "s1").await;
    let (b, b_task) = held(&gate, "/home/me/.ssh/config", 2, "s1").await;
    let (other, _o) = held(&gate, "/tmp/x", 3, "s1").await;
    let rule = NewRule {
        allow: false,
        when: under("/home/me/.ssh"),
        reason: Some("keys stay home".into()),
    };
    let decided = gate.person.choose(&a, Choice::Rule(rule)).unwrap();
    assert_eq!(decided.also_settled, vec![b]);
    assert!(ended(a_task).await.contains("keys stay home"));
    assert!(ended(b_task).await.contains("denied"));
    assert!(gate.person.broker().get(&other).is_some());
}
