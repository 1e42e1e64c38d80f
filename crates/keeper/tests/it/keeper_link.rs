//! A data plane's keeper link to a running gateway (the keeper) over its real local socket: the
//! held call is listed by the keeper, decided there, and the decision crosses back.

#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use portcullis_config::config::Config;
use portcullis_gate::held_calls::pending::{ClientInfo, HeldBy, PendingApproval, RiskBasis};
use portcullis_gate::held_calls::remote::RemoteHeldCalls;
use portcullis_gate::held_calls::Resolution;
use portcullis_gate::held_calls::{Asked, AtOnce, HeldCalls, Question};
use portcullis_gate::local_conn::open_keeper_link;
use portcullis_keeper::Keeper;
use serde_json::json;

const WITHIN: Duration = Duration::from_secs(10);

async fn keeper(dir: &std::path::Path) -> (Arc<Keeper>, std::path::PathBuf, String) {
    let config = json!({ "listen": "127.0.0.1:0", "mcpServers": { "known": { "command": "true" } } });
    let config = Config::from_str(&config.to_string(), &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    (gateway, file.socket.expect("a local socket"), file.token)
}

fn question() -> Question {
    let approval = PendingApproval {
        id: String::new(),
        server: "known".into(),
        method: portcullis_audit::Method::ToolsCall,
        tool: "write_file".into(),
        asks: Default::default(),
        title: None,
        description: Some("Writes a file".into()),
        annotations: None,
        risk: portcullis_policy::ToolClass::Write,
        risk_level: portcullis_policy::Risk::Medium,
        risk_basis: RiskBasis::Guessed,
        reason: None,
        asked_by: "the default".into(),
        input_schema: None,
        arguments: json!({"path": "/tmp/x"}),
        arguments_json: r#"{"path":"/tmp/x"}"#.into(),
        session: "data-plane-1".into(),
        client: ClientInfo::default(),
        rule: HeldBy::Policy(portcullis_policy::RuleRef::Default),
        requested_at: String::new(),
        requested_at_ms: 0,
        expires_at: String::new(),
        expires_at_ms: 30_000,
        request_id: "7".into(),
        pin_change: None,
        asked_before: false,
        answer: None,
    };
    Question {
        approval,
        digest: "d".into(),
        places: Arc::default(),
    }
}

fn remote(socket: std::path::PathBuf, token: String) -> RemoteHeldCalls {
    RemoteHeldCalls::new(Box::new(move || {
        let (socket, token) = (socket.clone(), token.clone());
        Box::pin(async move { open_keeper_link(&socket, &token, WITHIN).await })
    }))
}

#[tokio::test]
async fn a_held_call_asked_over_the_socket_is_decided_by_the_keeper() {
    let dir = tempfile::tempdir().unwrap();
    let (gateway, socket, token) = keeper(dir.path()).await;
    let remote = remote(socket, token);
    assert!(
        matches!(remote.ask(question()).await, Asked::AtOnce(AtOnce::NoApprover)),
        "nobody to ask at the keeper"
    );
    let _approver = gateway.attach_approver();
    let Asked::Held(ticket) = remote.ask(question()).await else {
        panic!("held")
    };
    let listed = gateway.pending_approvals();
    assert_eq!(listed.len(), 1, "the keeper lists it for the prompt");
    assert_eq!(
        (listed[0].tool.as_str(), listed[0].session.as_str()),
        ("write_file", "data-plane-1")
    );
    gateway
        .choose(
            &ticket.id,
            portcullis_keeper::choose::Choice::Deny {
                reason: Some("no".into()),
                always: false,
            },
        )
        .unwrap();
    let resolution = tokio::time::timeout(WITHIN, ticket.resolution).await.unwrap().unwrap();
    assert_eq!(
        resolution,
        Resolution::Rejected {
            reason: Some("no".into()),
            always: false
        }
    );
}

#[tokio::test]
async fn a_wrong_token_is_an_unreachable_keeper_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let (_gateway, socket, _) = keeper(dir.path()).await;
    let remote = remote(socket, "not-the-token".into());
    match remote.ask(question()).await {
        Asked::AtOnce(AtOnce::Unreachable { why }) => assert!(why.contains("token"), "{why}"),
        _ => panic!("refused"),
    }
}

/// Sends `hello` on a fresh connection to the keeper's socket; its one-line answer, then (if it
/// accepted) the answer to one question asked on the link.
async fn hello_then_ask(socket: &std::path::Path, hello: serde_json::Value) -> (String, Option<String>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let stream = portcullis_gate::local_socket::connect(socket).await.unwrap();
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = BufReader::new(rd).lines();
    wr.write_all(format!("{hello}\n").as_bytes()).await.unwrap();
    let answer = tokio::time::timeout(WITHIN, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap_or_default();
    if !answer.contains("\"ok\":true") {
        return (answer, None);
    }
    let q = question();
    let ask = json!({ "ask": {
        "n": 1, "approval": q.approval, "rule": { "kind": "default" }, "digest": "d",
        "places": *q.places,
    }});
    wr.write_all(format!("{ask}\n").as_bytes()).await.unwrap();
    let asked = tokio::time::timeout(WITHIN, lines.next_line()).await.unwrap().unwrap();
    (answer, asked)
}

/// The local protocol is versioned: a data plane from an older release (no `link` in its hello:
/// version 1) keeps working against this keeper; one it cannot serve, older or newer, is refused
/// with what to do, and its held calls fail closed with those words (`AtOnce::Unreachable`).
#[tokio::test]
async fn data_planes_of_other_versions_keep_working_or_are_told_to_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (_gateway, socket, token) = keeper(dir.path()).await;
    let hello = |link: Option<u32>| {
        let mut hello = json!({ "portcullis": 1, "token": token, "role": "held_calls" });
        if let Some(link) = link {
            hello["link"] = json!(link);
        }
        hello
    };
    for link in [None, Some(1), Some(portcullis_gate::held_calls::link::VERSION)] {
        let (answer, asked) = hello_then_ask(&socket, hello(link)).await;
        let ack = match link {
            Some(version) if version >= 2 => format!(r#"{{"portcullis":1,"ok":true,"link":{version}}}"#),
            // What a version-1 data plane compares the answer with, byte for byte.
            _ => r#"{"portcullis":1,"ok":true}"#.to_owned(),
        };
        assert_eq!(answer, ack, "link {link:?} served");
        let asked: serde_json::Value = serde_json::from_str(&asked.expect("an answer")).unwrap();
        assert_eq!(
            asked,
            json!({ "at_once": { "n": 1, "at_once": "no_approver" } }),
            "link {link:?}: the question is answered as ever"
        );
    }
    for (link, what_to_do) in [(0, "restart the MCP client"), (99, "restart Portcullis")] {
        let (answer, asked) = hello_then_ask(&socket, hello(Some(link))).await;
        assert!(asked.is_none(), "link {link}: refused");
        assert!(
            answer.contains("[portcullis]") && answer.contains(what_to_do),
            "link {link}: {answer}"
        );
    }
}
