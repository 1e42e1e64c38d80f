//! `ApprovalBroker::extend` announces the new deadline as `GatewayEvent::ApprovalExtended`, so
//! every observer (each desktop window, `GET /control/events`) shows the same deadline.

use std::time::Duration;

use portcullis_gateway::approval::{ApprovalBroker, ClientInfo, PendingApproval, RiskBasis, RiskLevel};
use portcullis_gateway::events::GatewayEvent;
use portcullis_gateway::risk::Risk;
use tokio::sync::broadcast;

fn held(requested_at_ms: i64, expires_at_ms: i64) -> PendingApproval {
    PendingApproval {
        id: String::new(),
        server: "fs".into(),
        tool: "write_file".into(),
        title: None,
        description: None,
        annotations: None,
        risk: Risk::Write,
        risk_level: RiskLevel::Medium,
        risk_basis: RiskBasis::Guessed,
        reason: None,
        asked_by: "the policy entry for write_file in fs.json".into(),
        input_schema: None,
        arguments: serde_json::json!({}),
        arguments_json: "{}".into(),
        session: "s1".into(),
        client: ClientInfo::default(),
        rule: "tools.write_file".into(),
        requested_at: String::new(),
        requested_at_ms,
        expires_at: String::new(),
        expires_at_ms,
        request_id: "1".into(),
        pin_change: None,
    }
}

#[tokio::test]
async fn extending_a_held_call_announces_its_new_deadline() {
    let (events, mut rx) = broadcast::channel(16);
    let broker = ApprovalBroker::new(events);
    let ticket = broker.hold(held(1_000_000, 1_030_000), "s1");
    assert!(matches!(rx.recv().await.unwrap(), GatewayEvent::ApprovalRequested { .. }));
    let extended = broker
        .extend(&ticket.id, Duration::from_secs(60), Duration::from_secs(600))
        .unwrap();
    match rx.try_recv() {
        Ok(GatewayEvent::ApprovalExtended { approval }) => {
            assert_eq!(approval.id, ticket.id);
            assert_eq!(approval.expires_at_ms, 1_090_000, "the event carries the new deadline");
            assert_eq!(approval.expires_at_ms, extended.approval.expires_at_ms);
        }
        other => panic!("extend must announce ApprovalExtended, got {other:?}"),
    }
    let json = serde_json::to_value(GatewayEvent::ApprovalExtended {
        approval: Box::new(extended.approval),
    })
    .unwrap();
    assert_eq!(json["type"], "ApprovalExtended", "named by type on /control/events");
    assert_eq!(json["approval"]["expires_at_ms"], 1_090_000);
    // A refused extension (unknown call) announces nothing.
    assert!(broker.extend("77", Duration::from_secs(1), Duration::from_secs(600)).is_err());
    assert!(rx.try_recv().is_err());
}
