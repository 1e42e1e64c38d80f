//! A held answer, from the gate's inspection to the person's choice, with the keeper's own
//! broker: passed once or refused, never covered by a grant, refused at once with nobody to ask;
//! the row keeps the findings as the person decided them.

use std::sync::Arc;
use std::time::Duration;

use portcullis_gate::gate::{AnswerVerdict, Call, Caller, Forwarded, Gate, Inspected, Verdict};
use portcullis_gate::held_calls::pending::{HeldBy, PendingApproval, Scope};
use portcullis_wire::{Message, RequestId};
use serde_json::{json, Value};

use super::hold_tests::{gate_with_policy, Kept};
use crate::choose::{Choice, ChoiceError};

const HOLD_SECRETS: &str = r#"{"version": "1", "default": "allow", "results": {"secrets": "hold"}}"#;
const KEY: &str = "AKIAIOSFODNN7EXAMPLE";

fn caller() -> Caller {
    Caller {
        session: "s1".into(),
        client_name: Some("cursor".into()),
        ..Caller::default()
    }
}

async fn forwarded(gate: &Arc<Gate>, n: i64) -> Forwarded {
    let call = Call::made("srv", "fetch", json!({"url": "https://example.com"}), id(n));
    match gate.decide(call, &caller()).await {
        Verdict::Forward(f) => f,
        _ => panic!("the policy allows the call"),
    }
}

fn id(n: i64) -> RequestId {
    RequestId::from_value(&json!(n)).unwrap()
}

/// An answer that holds an AWS key and a zero-width space (stripped by default).
fn answer(n: i64) -> Message {
    let result = json!({"content": [{"type": "text", "text": format!("deploy with {KEY} to\u{200B} prod")}]});
    Message::response(&id(n), &result)
}

/// Runs a held answer to its end in a task: the verdict, and what the agent gets.
fn ask_in_task(
    kept: &Kept,
    mut token: Forwarded,
    n: i64,
) -> tokio::task::JoinHandle<(AnswerVerdict, Value, Forwarded)> {
    let Inspected::Held(held) = token.inspect(answer(n)) else {
        panic!("an answer with a secret holds under `secrets: hold`");
    };
    let gate = kept.gate.clone();
    tokio::spawn(async move {
        let verdict = gate.ask_about_answer(&held, std::future::pending::<()>()).await;
        let message = token.settle_held(held, &verdict);
        (verdict, serde_json::from_slice(message.bytes()).unwrap(), token)
    })
}

/// The held answer, once the broker lists it (asked in-process: at the task's first run).
async fn pending_answer(kept: &Kept) -> PendingApproval {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(p) = kept.person.broker().pending().into_iter().next() {
                return p;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the answer is held")
}

fn text_of(got: &Value) -> &str {
    got["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_held_answer_is_shown_with_its_findings_and_passed_once() {
    let dir = tempfile::tempdir().unwrap();
    let kept = gate_with_policy(&dir, HOLD_SECRETS, 600);
    let _approver = kept.person.broker().attach_approver();
    let token = forwarded(&kept, 1).await;
    let task = ask_in_task(&kept, token, 1);
    let p = pending_answer(&kept).await;

    assert_eq!(p.rule, HeldBy::Answer);
    assert_eq!(p.tool, "fetch");
    assert_eq!(
        p.asked_by,
        "the results of srv.json: an answer with these findings waits for a person"
    );
    assert_eq!(
        p.asks.text,
        "The answer of fetch from srv holds AWS access key: pass it to cursor?"
    );
    let record = p.answer.as_ref().expect("the prompt shows what came back");
    let actions: Vec<(&str, &str)> = record
        .findings
        .iter()
        .map(|f| (f.kind.as_str(), f.action.as_str()))
        .collect();
    assert_eq!(actions, [("secret", "hold"), ("invisible", "strip")]);
    assert!(
        !record.excerpt.contains(KEY),
        "the prompt's excerpt is redacted like the audit's"
    );

    // Nothing but once: the next answer is another text.
    for refused in [
        Choice::Approve(Scope::Session),
        Choice::Approve(Scope::Always),
        Choice::Deny {
            reason: None,
            always: true,
        },
        Choice::Edit { arguments: json!({}) },
    ] {
        let err = kept.person.choose(&p.id, refused.clone()).unwrap_err();
        assert!(
            matches!(&err, ChoiceError::Invalid(why) if why.contains("passed once or refused")),
            "{refused:?}: {err}"
        );
    }
    kept.person.choose(&p.id, Choice::Approve(Scope::Once)).unwrap();

    let (verdict, got, token) = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(verdict, AnswerVerdict::Passed);
    assert_eq!(text_of(&got), format!("deploy with {KEY} to prod"), "passed as treated");
    let row_id = token.row_id();
    token.finish_answer(Message::response(&id(1), &json!({})));
    let findings = row_findings(&kept, row_id).await;
    assert_eq!(findings, "secret passed, invisible strip");
}

#[tokio::test]
async fn a_refused_answer_tells_the_agent_why_and_a_grant_of_the_tool_does_not_pass_it() {
    let dir = tempfile::tempdir().unwrap();
    let kept = gate_with_policy(&dir, HOLD_SECRETS, 600);
    let _approver = kept.person.broker().attach_approver();
    // "For this session" on the tool covers its calls, not what they answer.
    let broker = kept.person.broker();
    broker
        .grants
        .grant_session(portcullis_audit::Method::ToolsCall, "srv", "fetch", "s1");
    let token = forwarded(&kept, 2).await;
    let task = ask_in_task(&kept, token, 2);
    let p = pending_answer(&kept).await;
    let deny = Choice::Deny {
        reason: Some("not for the model".into()),
        always: false,
    };
    kept.person.choose(&p.id, deny).unwrap();

    let (verdict, got, token) = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        verdict,
        AnswerVerdict::Refused("the user refused it: not for the model".into())
    );
    assert_eq!(got["result"]["isError"], true);
    let text = text_of(&got);
    assert!(
        text.starts_with("[portcullis] the answer was withheld: it holds secret"),
        "{text}"
    );
    assert!(text.ends_with("the user refused it: not for the model"), "{text}");
    assert!(
        !got.to_string().contains(KEY),
        "nothing of the answer reaches the agent"
    );
    let row_id = token.row_id();
    let withheld = Message::parse(serde_json::to_vec(&got).unwrap()).unwrap();
    token.finish_answer(withheld);
    assert_eq!(row_findings(&kept, row_id).await, "secret refused, invisible strip");
}

#[tokio::test]
async fn with_nobody_to_ask_a_held_answer_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let kept = gate_with_policy(&dir, HOLD_SECRETS, 600);
    let token = forwarded(&kept, 3).await;
    let (verdict, got, _) = tokio::time::timeout(Duration::from_secs(10), ask_in_task(&kept, token, 3))
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&verdict, AnswerVerdict::Refused(why) if why.starts_with("no approver is running")),
        "{verdict:?}"
    );
    assert_eq!(got["result"]["isError"], true);
    assert!(kept.person.broker().pending().is_empty());
}

/// The row's findings as "kind action, …", read after the completion is applied.
async fn row_findings(kept: &Kept, id: i64) -> String {
    // The writer applies what it is sent in order: a later row committed means this one is done.
    let _later = forwarded(kept, 1000 + id).await;
    let row = kept
        .gate
        .audit_store()
        .unwrap()
        .get(id)
        .unwrap()
        .expect("the row exists");
    row.findings
        .expect("the answer is kept")
        .into_iter()
        .map(|f| format!("{} {}", f.kind, f.action))
        .collect::<Vec<_>>()
        .join(", ")
}
