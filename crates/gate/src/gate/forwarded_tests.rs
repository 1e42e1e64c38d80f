//! The forwarded-call token completes its decision row exactly once: with the upstream's outcome
//! when answered, as `cancelled` when dropped unanswered, and a drop never overwrites an outcome.

use std::sync::Arc;

use portcullis_audit::Outcome;
use portcullis_wire::{Message, RequestId};
use serde_json::json;

use super::test_gate::gate_with_policy;
use super::{Call, Caller, Forwarded, Gate, Verdict};

fn call(n: i64) -> Call {
    Call {
        server: "srv".into(),
        method: portcullis_audit::Method::ToolsCall,
        tool: "echo".into(),
        arguments: json!({"n": n}),
        arguments_text: None,
        original_arguments: None,
        request_id: RequestId::from_value(&json!(n)).unwrap(),
        modern: false,
        request_state: None,
        digest: None,
    }
}

async fn forwarded(gate: &Arc<Gate>, n: i64) -> Forwarded {
    match gate.decide(call(n), &Caller::default()).await {
        Verdict::Forward(f) => f,
        _ => panic!("the policy allows every call"),
    }
}

/// The outcome of row `id`, read after a later row is committed: the audit writer applies what it
/// is sent in order, so every completion queued before is in the database by then.
async fn outcome_of(gate: &Arc<Gate>, id: i64) -> Option<Outcome> {
    let _later = forwarded(gate, 1000 + id).await;
    let store = gate.audit.store().unwrap();
    store.get(id).unwrap().expect("the row exists").outcome
}

#[tokio::test]
async fn a_dropped_token_records_cancelled_and_a_finished_one_keeps_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, r#"{"version": "1", "default": "allow"}"#);

    let dropped = forwarded(&gate, 1).await;
    let dropped_id = dropped.row_id;
    drop(dropped);
    assert_eq!(outcome_of(&gate, dropped_id).await, Some(Outcome::Cancelled));

    let answered = forwarded(&gate, 2).await;
    let answered_id = answered.row_id;
    let error = json!({"content": [{"type": "text", "text": "no"}], "isError": true});
    answered.finish(&Message::response(&RequestId::from_value(&json!(2)).unwrap(), &error));
    assert_eq!(outcome_of(&gate, answered_id).await, Some(Outcome::ToolError));
}

/// The client hangs up while its call's decision is being committed: the future is dropped
/// before any token exists, and the row still ends `cancelled` (whether the writer had answered
/// by the drop or not: both paths end the same).
#[tokio::test]
async fn a_call_dropped_while_its_decision_is_committed_records_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, r#"{"version": "1", "default": "allow"}"#);
    let caller = Caller::default();
    {
        let deciding = gate.decide(call(1), &caller);
        tokio::pin!(deciding);
        // One poll sends the row to the writer; then the caller goes away.
        let _ = futures::poll!(deciding.as_mut());
    }
    let id = 1; // the first row of a fresh database
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match outcome_of(&gate, id).await {
                Some(outcome) => return outcome,
                // The completion is queued by a task the drop spawned: let it run.
                None => tokio::task::yield_now().await,
            }
        }
    })
    .await
    .expect("the row is completed");
    assert_eq!(outcome, Outcome::Cancelled);
}

/// An answer ends through `finish_answer`: the agent gets it as the policy treats it (the zero-width
/// space stripped by default), and its row gets the outcome and what came back together.
#[tokio::test]
async fn an_inspected_answer_is_treated_and_kept_with_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, r#"{"version": "1", "default": "allow"}"#);
    let token = forwarded(&gate, 3).await;
    let id = token.row_id;
    let result = json!({"content": [{"type": "text", "text": "a\u{200B}b"}]});
    let sent = token.finish_answer(Message::response(&RequestId::from_value(&json!(3)).unwrap(), &result));
    let got: serde_json::Value = serde_json::from_slice(sent.bytes()).unwrap();
    assert_eq!(got["result"]["content"][0]["text"], "ab");
    assert_eq!(outcome_of(&gate, id).await, Some(Outcome::Ok));
    let row = gate.audit.store().unwrap().get(id).unwrap().unwrap();
    let findings = row.findings.expect("the answer is kept");
    assert_eq!(
        (findings[0].kind.as_str(), findings[0].action.as_str()),
        ("invisible", "strip")
    );
    assert_eq!(row.answer.as_deref(), Some("a\\u{200B}b"));
}
