//! The gate fails closed when the audit cannot be written, tells the agent why, and forwards again
//! once the database can be written, with the same gate (no restart).
//!
//! The fault here is real and needs no privileges: the database's directory does not exist when
//! the gateway starts, so the writer cannot open it; creating the directory is the fix. (The lock,
//! full-disk and read-only cases are in `portcullis-audit`'s `fault_tests.rs` and the e2e suite.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis_audit::AuditWriter;
use portcullis_wire::RequestId;
use serde_json::json;
use tokio::sync::broadcast;

use super::{Call, Caller, Gate, Verdict};
use crate::approval::ApprovalBroker;
use crate::audit_log::{health_json, AuditLog};
use crate::pins::PinStore;
use crate::policy_store::PolicyStore;
use crate::rate_limit::RateLimits;
use crate::tool_catalog::ToolCatalog;

fn gate(dir: &tempfile::TempDir, writer: AuditWriter) -> Arc<Gate> {
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(policies.join("srv.json"), r#"{"version": "1", "default": "allow"}"#).unwrap();
    let (events, _) = broadcast::channel(64);
    Arc::new(Gate {
        policies: Arc::new(PolicyStore::load(&policies, ["srv".to_owned()], events.clone())),
        rate_limits: RateLimits::default(),
        audit: AuditLog::new(writer),
        approvals: Arc::new(ApprovalBroker::new(events.clone())),
        catalog: ToolCatalog::default(),
        pins: PinStore::open(dir.path()).unwrap(),
        events,
        approval_timeout_secs: 30,
        max_hold_secs: 600,
        digester: portcullis_wire::canonical::ArgumentDigester::new([9; 32]),
    })
}

fn call() -> Call {
    Call {
        server: "srv".into(),
        tool: "echo".into(),
        arguments: json!({"message": "hi"}),
        arguments_text: None,
        original_arguments: None,
        request_id: RequestId::from_value(&json!(1)).unwrap(),
        modern: false,
        request_state: None,
    }
}

#[tokio::test]
async fn calls_are_refused_while_the_audit_cannot_be_written_and_forwarded_once_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let writer = AuditWriter::open_fail_closed(&data.join("audit.db")).unwrap();
    let gate = gate(&dir, writer.clone());

    let caller = Caller::default();
    match gate.decide(call(), &caller).await {
        Verdict::Refuse(result) => {
            assert_eq!(result["isError"], json!(true));
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                text.starts_with("[portcullis] call refused: the audit log cannot be written ("),
                "{text}"
            );
            assert!(text.contains("audit.db"), "the message names the file: {text}");
            assert!(text.ends_with("nothing is forwarded until it can"), "{text}");
        }
        _ => panic!("a call whose decision cannot be recorded must not be forwarded"),
    }
    let status = health_json(gate.audit.fault().as_ref());
    assert_eq!(status["ok"], json!(false), "{status}");
    assert!(
        status["error"].as_str().is_some_and(|e| e.contains("audit.db")),
        "{status}"
    );

    std::fs::create_dir(&data).unwrap();
    // The writer retries by itself about every second; bounded wait for it to notice.
    let deadline = Instant::now() + Duration::from_secs(15);
    while writer.fault().is_some() {
        assert!(
            Instant::now() < deadline,
            "the writer never recovered: {:?}",
            writer.fault()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(health_json(gate.audit.fault().as_ref()), json!({"ok": true}));
    match gate.decide(call(), &caller).await {
        Verdict::Forward(forwarded) => drop(forwarded),
        _ => panic!("once the audit can be written the call must be forwarded"),
    }
    let rows = writer.store().unwrap().count(&Default::default()).unwrap();
    assert_eq!(rows, 1, "only the forwarded call has a row");
}
