//! A person's answer to a held request at another door than `tools`: "always" writes into that
//! request's section, and a session's "yes" covers only that kind of request.

use portcullis_audit::Method;
use portcullis_wire::RequestId;
use serde_json::{json, Value};

use super::hold_tests::{ended, gate_with_policy, held_call};
use crate::choose::Choice;
use portcullis_gate::gate::{Call, Caller, Verdict};
use portcullis_gate::held_calls::pending::Scope;

const POLICY: &str = r#"{"version": "1",
  "tools": {"file:///w/x": {"action": "require_approval", "approval_timeout": 60},
            "notes": {"action": "require_approval", "approval_timeout": 60}},
  "resources": {"file:///w/*": {"action": "require_approval", "approval_timeout": 60}},
  "prompts": {"notes": {"action": "require_approval", "approval_timeout": 60}}}"#;

fn request(method: Method, name: &str, arguments: Value, n: i64) -> Call {
    let mut call = Call::made("srv", name, arguments, RequestId::from_value(&json!(n)).unwrap());
    call.method = method;
    call
}

fn read(uri: &str, n: i64) -> Call {
    request(Method::ResourcesRead, uri, json!({ "uri": uri }), n)
}

#[tokio::test]
async fn always_allow_of_a_resource_read_writes_resources_and_settles_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, POLICY, 600);
    let _approver = gate.person.broker().attach_approver();
    let (a, a_task) = held_call(&gate, read("file:///w/x", 1), "s1").await;
    let (b, b_task) = held_call(&gate, read("file:///w/x", 2), "s2").await;
    let (tool, _tool_task) = held_call(
        &gate,
        Call::made(
            "srv",
            "file:///w/x",
            json!({}),
            RequestId::from_value(&json!(3)).unwrap(),
        ),
        "s1",
    )
    .await;

    let planned = gate.person.dry_run(&a, &Choice::Approve(Scope::Always)).unwrap();
    assert_eq!(planned.rule.unwrap()["key"], "file:///w/x");

    let decided = gate.person.choose(&a, Choice::Approve(Scope::Always)).unwrap();
    assert_eq!(decided.also_settled, vec![b], "the other read of the URI is settled");
    assert_eq!(ended(a_task).await, "forwarded");
    assert_eq!(ended(b_task).await, "forwarded");
    assert!(
        gate.person.broker().get(&tool).is_some(),
        "a tool of the same name still waits"
    );
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("policies/srv.json")).unwrap()).unwrap();
    assert_eq!(
        file["resources"]["file:///w/x"],
        json!({}),
        "the glob entry that asked, allowing"
    );
    assert_eq!(
        file["tools"]["file:///w/x"]["action"], "require_approval",
        "the tools section is untouched"
    );
    let next = gate.decide(read("file:///w/x", 4), &Caller::default()).await;
    assert!(matches!(next, Verdict::Forward(_)), "the next read passes by the entry");
}

#[tokio::test]
async fn deny_always_of_sampling_writes_server_requests() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, POLICY, 600);
    let _approver = gate.person.broker().attach_approver();
    let sampling = request(Method::SamplingCreateMessage, "sampling", json!({"maxTokens": 10}), 1);
    let (id, _task) = held_call(&gate, sampling, "s1").await;
    let choice = Choice::Deny {
        reason: Some("no model spending".into()),
        always: true,
    };
    let decided = gate.person.choose(&id, choice).unwrap();
    assert_eq!(decided.policy_write.unwrap().key, "sampling");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("policies/srv.json")).unwrap()).unwrap();
    assert_eq!(
        file["server_requests"]["sampling"],
        json!({"action": "deny", "reason": "no model spending"})
    );
}

#[tokio::test]
async fn a_session_approval_of_a_prompt_is_no_approval_of_the_tool_of_that_name() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, POLICY, 600);
    let _approver = gate.person.broker().attach_approver();
    let prompt = || request(Method::PromptsGet, "notes", json!({}), 1);
    let (id, task) = held_call(&gate, prompt(), "s1").await;
    let (tool, _tool_task) = held_call(
        &gate,
        Call::made("srv", "notes", json!({}), RequestId::from_value(&json!(2)).unwrap()),
        "s1",
    )
    .await;
    let decided = gate.person.choose(&id, Choice::Approve(Scope::Session)).unwrap();
    assert!(decided.also_settled.is_empty(), "{:?}", decided.also_settled);
    assert_eq!(ended(task).await, "forwarded");
    assert!(gate.person.broker().get(&tool).is_some(), "the tool still waits");
    let caller = Caller {
        session: "s1".into(),
        ..Caller::default()
    };
    let again = gate.decide(prompt(), &caller).await;
    assert!(
        matches!(again, Verdict::Forward(_)),
        "the prompt is granted for the session"
    );
    let tool_call = Call::made("srv", "notes", json!({}), RequestId::from_value(&json!(3)).unwrap());
    let asked = gate.decide(tool_call, &caller).await;
    assert!(matches!(asked, Verdict::Hold(_)), "the tool `notes` still asks");
}
