//! A held call's timer follows its deadline: "Extend" really moves the time-out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis_audit::AuditWriter;
use portcullis_wire::RequestId;
use serde_json::json;
use tokio::sync::broadcast;

use portcullis_gate::audit_log::AuditLog;
use portcullis_gate::gate::{Call, Caller, Gate, Holding, Verdict};
use portcullis_gate::pins::PinStore;
use portcullis_gate::policy_store::PolicyStore;

use crate::broker::ApprovalBroker;

/// A gate and the keeper's side that answers its held calls, as in the keeper's own process.
pub(crate) struct Kept {
    pub gate: Arc<Gate>,
    pub person: crate::choose::PersonSide,
}

impl std::ops::Deref for Kept {
    type Target = Arc<Gate>;
    fn deref(&self) -> &Arc<Gate> {
        &self.gate
    }
}

pub(crate) fn gate(dir: &tempfile::TempDir, max_hold_secs: u64) -> Kept {
    let policy = r#"{"version": "1", "tools": {"ask": {"action": "require_approval", "approval_timeout": 1}}}"#;
    gate_with_policy(dir, policy, max_hold_secs)
}

/// A gate over one server, `srv`, whose policy file holds `policy`; everything else in memory
/// or under `dir`.
pub(crate) fn gate_with_policy(dir: &tempfile::TempDir, policy: &str, max_hold_secs: u64) -> Kept {
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(policies.join("srv.json"), policy).unwrap();
    let (events, _) = broadcast::channel(64);
    let broker = ApprovalBroker::shared(events.clone());
    let gate = Arc::new(Gate::new(
        Arc::new(PolicyStore::load(&policies, ["srv".to_owned()], events.clone())),
        AuditLog::new(AuditWriter::open_in_memory().unwrap()),
        PinStore::open(dir.path()).unwrap(),
        portcullis_wire::canonical::ArgumentDigester::new([9; 32]),
        events,
        Holding {
            held: broker.clone(),
            approval_timeout_secs: 30,
            max_hold_secs,
        },
    ));
    let person = crate::choose::PersonSide::new(gate.clone(), broker);
    Kept { gate, person }
}

fn call() -> Call {
    Call::made("srv", "ask", json!({}), RequestId::from_value(&json!(1)).unwrap())
}

/// Holds one call and waits for it in a task; the approval id, when it was held, the task.
async fn held(gate: &Arc<Gate>) -> (String, Instant, tokio::task::JoinHandle<String>) {
    let (id, task) = held_call(gate, call(), "a").await;
    (id, Instant::now(), task)
}

/// Holds `call` for session `session`; its approval id and a task that says how the call
/// ended: "forwarded", or the text of the refusal the agent got.
pub(crate) async fn held_call(
    gate: &Arc<Gate>,
    call: Call,
    session: &str,
) -> (String, tokio::task::JoinHandle<String>) {
    let caller = Caller {
        session: session.into(),
        ..Caller::default()
    };
    let Verdict::Hold(hold) = gate.decide(call, &caller).await else {
        panic!("the call must be held");
    };
    let id = hold.id().to_owned();
    let task = tokio::spawn(async move {
        match hold.wait(None, std::future::pending::<()>()).await.settled {
            Err(result) => result["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
            Ok(_) => "forwarded".to_owned(),
        }
    });
    (id, task)
}

/// How a held call's task (from [`held_call`]) ended, waited for at most 10 s.
pub(crate) async fn ended(task: tokio::task::JoinHandle<String>) -> String {
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn an_extended_hold_times_out_at_its_new_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir, 600);
    let _approver = gate.person.broker().attach_approver();
    let (id, start, mut task) = held(&gate).await;
    let extended = gate.person.extend(&id, Duration::from_secs(1)).unwrap();
    assert!(!extended.clamped);
    let listed = gate.person.broker().get(&id).unwrap();
    assert_eq!(
        listed.expires_at_ms - listed.requested_at_ms,
        2_000,
        "the list shows the new deadline"
    );
    // Past the original 1 s deadline, the call still waits…
    let early = tokio::time::timeout(Duration::from_millis(1_500).saturating_sub(start.elapsed()), &mut task).await;
    assert!(early.is_err(), "timed out at the old deadline: {early:?}");
    assert!(gate.person.broker().get(&id).is_some(), "still pending");
    // …and times out at the new one.
    let text = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    let waited = start.elapsed();
    assert!(text.contains("no decision within 2 s"), "{text}");
    assert!(
        waited >= Duration::from_millis(1_900) && waited < Duration::from_secs(4),
        "{waited:?}"
    );
}

#[tokio::test]
async fn an_extension_past_the_maximum_hold_is_cut_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir, 2);
    let _approver = gate.person.broker().attach_approver();
    let (id, start, task) = held(&gate).await;
    let extended = gate.person.extend(&id, Duration::from_secs(60)).unwrap();
    assert!(extended.clamped);
    assert_eq!(
        extended.approval.expires_at_ms - extended.approval.requested_at_ms,
        2_000
    );
    let text = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert!(text.contains("no decision within 2 s"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(4), "{:?}", start.elapsed());
}

#[test]
fn a_sessions_grants_end_when_the_session_does() {
    use crate::broker::standing::{Effect, NewGrant, Which};
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_with_policy(&dir, r#"{"version": "1", "default": "require_approval"}"#, 600);
    let grant = |session: &str| NewGrant {
        server: "srv".into(),
        tool: "t".into(),
        effect: Effect::Allow,
        reason: None,
        session: Some(session.into()),
        which: Which::Any,
        expires_at_ms: None,
    };
    gate.person.broker().grants.standing.add(grant("s1"), 0);
    gate.person.broker().grants.standing.add(grant("s2"), 0);
    gate.withdraw_session("s1");
    let left: Vec<_> = gate
        .person
        .broker()
        .grants
        .standing
        .list(0)
        .into_iter()
        .map(|g| g.session)
        .collect();
    assert_eq!(left, vec![Some("s2".to_owned())], "only the ended session's grants go");
}
