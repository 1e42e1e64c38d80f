//! The keeper link end to end in one process: a data plane's [`RemoteHeldCalls`] asks a keeper's
//! broker over an in-memory stream, as `connect` asks the app over the local socket.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use super::*;
use crate::approval::tests::approval;
use crate::approval::ApprovalBroker;
use crate::held_calls::remote::{LinkStreams, RemoteHeldCalls};

/// A keeper (its broker) and a data plane linked to it; each new link is served by the keeper
/// until `cut` is notified (the keeper dies: its side of the stream drops).
fn linked_until(cut: Arc<tokio::sync::Notify>) -> (Arc<ApprovalBroker>, RemoteHeldCalls) {
    let broker = Arc::new(ApprovalBroker::new(broadcast::channel(64).0));
    let keeper: Arc<dyn HeldCalls> = broker.clone();
    let remote = RemoteHeldCalls::new(Box::new(move || {
        let (keeper, cut) = (keeper.clone(), cut.clone());
        Box::pin(async move {
            let (here, there) = tokio::io::duplex(1 << 16);
            let (rd, wr) = tokio::io::split(there);
            tokio::spawn(async move {
                tokio::select! {
                    () = serve(keeper, no_record(), rd, BytesMut::new(), wr) => {}
                    () = cut.notified() => {}
                }
            });
            let (rd, wr) = tokio::io::split(here);
            Ok(LinkStreams {
                rd: Box::new(rd),
                wr: Box::new(wr),
                buf: BytesMut::new(),
            })
        })
    }));
    (broker, remote)
}

fn linked() -> (Arc<ApprovalBroker>, RemoteHeldCalls) {
    linked_until(Arc::new(tokio::sync::Notify::new()))
}

fn no_record() -> RecordWithdrawn {
    Arc::new(|_, _| Box::pin(async {}))
}

fn question() -> Question {
    Question {
        approval: PendingApproval {
            requested_at_ms: 1_000,
            expires_at_ms: 31_000,
            ..approval()
        },
        digest: "d".into(),
        places: Arc::default(),
    }
}

async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} within 10 s"));
}

#[tokio::test]
async fn the_keeper_decides_a_call_asked_over_the_link() {
    let (broker, remote) = linked();
    let _approver = broker.attach_approver();
    let Asked::Held(ticket) = remote.ask(question()).await else {
        panic!("held by the keeper")
    };
    let held = broker.get(&ticket.id).expect("the keeper lists it");
    assert_eq!(held.rule, approval().rule, "the rule crossed in its parts");
    assert_eq!(held.arguments, approval().arguments);
    assert!(remote.pending(&ticket.id).is_some(), "mirrored here");
    broker
        .resolve(
            &ticket.id,
            Resolution::Approved(crate::approval::pending::Scope::Session),
        )
        .unwrap();
    assert_eq!(
        ticket.resolution.await.unwrap(),
        Resolution::Approved(crate::approval::pending::Scope::Session)
    );
    assert!(remote.pending(&held.id).is_none());
}

#[tokio::test]
async fn at_once_answers_cross_and_nothing_is_held() {
    let (broker, remote) = linked();
    assert!(matches!(
        remote.ask(question()).await,
        Asked::AtOnce(AtOnce::NoApprover)
    ));
    let _approver = broker.attach_approver();
    broker.set_paused(true);
    assert!(matches!(remote.ask(question()).await, Asked::AtOnce(AtOnce::Paused)));
    assert!(broker.pending().is_empty());
}

#[tokio::test]
async fn the_data_plane_ends_its_calls_and_moves_their_deadlines() {
    let (broker, remote) = linked();
    let _approver = broker.attach_approver();
    let Asked::Held(ticket) = remote.ask(question()).await else {
        panic!("held")
    };
    let id = ticket.id.clone();
    let extended = remote
        .extend(&id, Duration::from_secs(60), Duration::from_secs(3600))
        .unwrap();
    assert_eq!(extended.approval.expires_at_ms, 91_000);
    eventually("the keeper's deadline moved", || {
        broker.get(&id).is_some_and(|p| p.expires_at_ms == 91_000)
    })
    .await;
    remote.end(&id, Resolution::TimedOut);
    assert_eq!(ticket.resolution.await.unwrap(), Resolution::TimedOut);
    eventually("the keeper let it go", || broker.get(&id).is_none()).await;
}

#[tokio::test]
async fn a_person_extending_at_the_keeper_moves_the_data_planes_deadline() {
    let (broker, remote) = linked();
    let _approver = broker.attach_approver();
    let Asked::Held(mut ticket) = remote.ask(question()).await else {
        panic!("held")
    };
    broker
        .extend(&ticket.id, Duration::from_secs(30), Duration::from_secs(3600))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), ticket.deadline.changed())
        .await
        .expect("the move arrives")
        .unwrap();
    assert_eq!(*ticket.deadline.borrow(), Duration::from_secs(60));
    assert_eq!(remote.pending(&ticket.id).unwrap().expires_at_ms, 61_000);
}

#[tokio::test]
async fn a_withdrawn_request_and_an_ended_session_withdraw_at_the_keeper() {
    let (broker, remote) = linked();
    let _approver = broker.attach_approver();
    let Asked::Held(first) = remote.ask(question()).await else {
        panic!("held")
    };
    assert!(remote.withdraw_request(&approval().session, &approval().request_id));
    assert!(matches!(first.resolution.await.unwrap(), Resolution::Cancelled { .. }));
    let Asked::Held(second) = remote.ask(question()).await else {
        panic!("held")
    };
    remote.withdraw_session(&approval().session);
    assert!(matches!(second.resolution.await.unwrap(), Resolution::Cancelled { .. }));
    eventually("the keeper holds nothing", || broker.pending().is_empty()).await;
}

#[tokio::test]
async fn a_broken_link_refuses_what_waits_and_the_next_call_links_again() {
    let cut = Arc::new(tokio::sync::Notify::new());
    let (broker, remote) = linked_until(cut.clone());
    let _approver = broker.attach_approver();
    let Asked::Held(ticket) = remote.ask(question()).await else {
        panic!("held")
    };
    cut.notify_waiters();
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), ticket.resolution)
            .await
            .expect("answered, not left hanging")
            .unwrap(),
        Resolution::Orphaned
    );
    assert!(
        matches!(remote.ask(question()).await, Asked::Held(_)),
        "a new link is made"
    );
}

#[tokio::test]
async fn a_keeper_that_cannot_be_reached_is_a_refusal_that_says_why() {
    let remote = RemoteHeldCalls::new(Box::new(|| {
        Box::pin(async { Err(std::io::Error::other("no keeper at /run/x.sock")) })
    }));
    match remote.ask(question()).await {
        Asked::AtOnce(AtOnce::Unreachable { why }) => assert!(why.contains("/run/x.sock"), "{why}"),
        _ => panic!("refused"),
    }
}

#[test]
fn every_rule_crosses_in_its_parts() {
    use portcullis_policy::RuleRef;
    for held in [
        HeldBy::PinChanged,
        HeldBy::Policy(RuleRef::Hide { pattern: "x*".into() }),
        HeldBy::Policy(RuleRef::Entry {
            key: "a.rules[1]".into(),
        }),
        HeldBy::Policy(RuleRef::Rule {
            key: "a".into(),
            index: 1,
        }),
        HeldBy::Policy(RuleRef::Default),
        HeldBy::Policy(RuleRef::NoPolicyFile),
    ] {
        let text = serde_json::to_string(&WireRule::from(&held)).unwrap();
        let back: WireRule = serde_json::from_str(&text).unwrap();
        assert_eq!(HeldBy::from(back), held, "{text}");
    }
}
