//! A `tools/call` is read once (issue 31): from the session's entry to its audit row, its
//! arguments are parsed into a value once and digested once, in either era, allowed or refused —
//! counted on the test's one thread by the gate's own counters (`gate/read.rs`), against the
//! standard-library stdio server of the integration tests.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use portcullis_config::config::Config;
use portcullis_wire::Message;
use serde_json::json;

use portcullis_gate::gate::read_counts;
use portcullis_gate::queue;
use portcullis_gate::session::{caller_for, Reply, RequestContext, Session};

use crate::Keeper;

/// Every wait here is bounded by this.
const WAIT: Duration = Duration::from_secs(10);

const POLICY: &str = r#"{"version":"1","default":"deny","tools":{"echo":{},"chatty":{"action":"require_approval"}}}"#;

fn gateway(dir: &Path) -> Arc<Keeper> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/scripted_server.py");
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(dir.join("policies/scripted.json"), POLICY).unwrap();
    let config = json!({"listen": "127.0.0.1:0", "mcpServers": {"scripted": {"command": "python3", "args": [script]}}});
    let config = Config::from_str(&config.to_string(), &dir.join("portcullis.json")).unwrap();
    Keeper::open(config, &dir.join("data")).unwrap()
}

fn call(id: u64, tool: &str, modern: bool) -> Message {
    let meta = if modern {
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}})
    } else {
        json!({})
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": tool, "arguments": {"marker": format!("m{id}"), "n": 1.5}, "_meta": meta}});
    Message::parse(body.to_string()).unwrap()
}

/// Sends `msg` as the local-socket entry does (answers into the connection's queue); `decide`
/// runs meanwhile (a person's choice on a held call). Returns the (digests, argument parses) made
/// from the session's entry to the answer, and the answer.
async fn counted(
    session: &Arc<Session>,
    msg: Message,
    decide: impl std::future::Future<Output = ()>,
) -> ((usize, usize), Message) {
    let (tx, mut rx) = queue::client_stream("test connection");
    // Counted from here: the entry reads who the caller is first.
    let _ = read_counts::take();
    let ctx = RequestContext {
        caller: caller_for(session, Some("read-once"), &msg),
        stream_now: true,
        accepts_sse: true,
        sink: Some(tx.clone()),
    };
    let answer = match session.request(msg, ctx).await {
        Reply::Json(answer) => answer,
        Reply::Sent => {
            decide.await;
            loop {
                let next = tokio::time::timeout(WAIT, rx.recv()).await.unwrap().unwrap();
                if next.is_response() {
                    break next;
                }
            }
        }
        _ => panic!("a local-socket request is answered as JSON or into its queue"),
    };
    (read_counts::take(), answer)
}

fn text(answer: &Message) -> String {
    String::from_utf8_lossy(answer.bytes()).into_owned()
}

#[tokio::test]
async fn a_call_is_parsed_and_digested_once_from_the_session_to_its_audit_row() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = gateway(dir.path());
    let stateless = gateway.plane().stateless_session("scripted").await.unwrap();
    let legacy = gateway.plane().open_session("scripted").await.unwrap();
    let cases = [
        ("2026, allowed", &stateless, call(1, "echo", true), "echo m1"),
        ("legacy, allowed", &legacy, call(2, "echo", false), "echo m2"),
        ("2026, denied", &stateless, call(3, "wipe", true), "denied"),
    ];
    for (case, session, msg, answered) in cases {
        let (counts, answer) = counted(session, msg, async {}).await;
        assert!(text(&answer).contains(answered), "{case}: {}", text(&answer));
        assert_eq!(
            counts,
            (1, 1),
            "{case}: one digest and one parse of the arguments per call (digests, parses)"
        );
    }
    gateway.stop().await;
}

/// A call that asks a person is read and digested once too: the held-call question
/// (`Question::digest`), the continuation, the re-attach key and the audit row all use the read's
/// digest. Refused at once when nobody could decide, or held and approved.
#[tokio::test]
async fn a_held_call_is_digested_once() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = gateway(dir.path());
    let stateless = gateway.plane().stateless_session("scripted").await.unwrap();
    let (counts, answer) = counted(&stateless, call(4, "chatty", true), async {}).await;
    assert!(text(&answer).contains("no approver"), "{}", text(&answer));
    assert_eq!(
        counts,
        (1, 1),
        "nobody to ask: the read's digest only (digests, parses)"
    );
    let _approver = gateway.attach_approver();
    let approve = async {
        let deadline = tokio::time::Instant::now() + WAIT;
        let id = loop {
            if let Some(p) = gateway.pending_approvals().pop() {
                break p.id;
            }
            assert!(tokio::time::Instant::now() < deadline, "the call was never held");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let choice = crate::choose::Choice::Approve(portcullis_gate::held_calls::pending::Scope::Once);
        gateway.choose(&id, choice).unwrap();
    };
    let (counts, answer) = counted(&stateless, call(5, "chatty", true), approve).await;
    assert!(text(&answer).contains("chatty done"), "{}", text(&answer));
    assert_eq!(counts, (1, 1), "a held call: the read's digest only (digests, parses)");
    gateway.stop().await;
}
