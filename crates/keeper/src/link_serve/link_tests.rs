//! The keeper link end to end in one process: a data plane's [`RemoteHeldCalls`] asks a keeper's
//! broker over an in-memory stream, as `connect` asks the app over the local socket.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;

use portcullis_gate::held_calls::link::{WireRule, VERSION};
use portcullis_gate::held_calls::pending::{HeldBy, Scope};
use portcullis_gate::held_calls::remote::{LinkStreams, RemoteHeldCalls};
use portcullis_gate::held_calls::AtOnce;

use super::*;
use crate::broker::tests::approval;
use crate::broker::{ApprovalBroker, ApproverGuard};

/// A keeper (its broker) and a data plane linked to it; each new link is served by the keeper
/// until `cut` is notified (the keeper dies: its side of the stream drops).
fn linked_until(cut: Arc<tokio::sync::Notify>) -> (Arc<ApprovalBroker>, RemoteHeldCalls) {
    let broker = ApprovalBroker::shared(broadcast::channel(64).0);
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
                version: VERSION,
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
            Resolution::Approved(portcullis_gate::held_calls::pending::Scope::Session),
        )
        .unwrap();
    assert_eq!(
        ticket.resolution.await.unwrap(),
        Resolution::Approved(portcullis_gate::held_calls::pending::Scope::Session)
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

/// Keepers that die: each link is made to a new keeper (a broker of its own, listed in
/// `keepers`), served until `cut` is notified; after `reachable` links, none can be reached.
/// Each keeper with an approver attached (so calls are held, not refused).
type Started = Arc<Mutex<Vec<(Arc<ApprovalBroker>, ApproverGuard)>>>;

struct Keepers {
    keepers: Started,
    cut: Arc<tokio::sync::Notify>,
}

impl Keepers {
    fn new(reachable: usize) -> (Self, RemoteHeldCalls) {
        let keepers = Self {
            keepers: Arc::default(),
            cut: Arc::new(tokio::sync::Notify::new()),
        };
        let remote = RemoteHeldCalls::new(keepers.connector(reachable));
        (keepers, remote)
    }

    /// As [`Self::new`], the data plane also looking for a keeper that came back.
    fn finding(reachable: usize) -> (Self, RemoteHeldCalls) {
        let keepers = Self {
            keepers: Arc::default(),
            cut: Arc::new(tokio::sync::Notify::new()),
        };
        let find = Some(keepers.connector(reachable));
        let remote = RemoteHeldCalls::with_finder(keepers.connector(reachable), find);
        (keepers, remote)
    }

    /// Each link it makes is to a new keeper, up to `reachable` of them.
    fn connector(&self, reachable: usize) -> portcullis_gate::held_calls::remote::Connector {
        let (list, cut) = (self.keepers.clone(), self.cut.clone());
        Box::new(move || {
            let (list, cut) = (list.clone(), cut.clone());
            Box::pin(async move {
                let mut list = list.lock().unwrap();
                if list.len() == reachable {
                    return Err(std::io::Error::other("no keeper answers at /run/k.sock"));
                }
                let broker = ApprovalBroker::shared(broadcast::channel(64).0);
                list.push((broker.clone(), broker.attach_approver()));
                let keeper: Arc<dyn HeldCalls> = broker;
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
                    version: VERSION,
                })
            })
        })
    }

    fn keeper(&self, i: usize) -> Option<Arc<ApprovalBroker>> {
        self.keepers.lock().unwrap().get(i).map(|(keeper, _)| keeper.clone())
    }

    /// The keeper `i` once it runs.
    async fn wait_keeper(&self, i: usize) -> Arc<ApprovalBroker> {
        let mut found = None;
        eventually(&format!("keeper {i}"), || {
            found = self.keeper(i);
            found.is_some()
        })
        .await;
        found.unwrap()
    }

    /// Keeper `i`'s held calls once it holds `n`.
    async fn held_at(&self, i: usize, n: usize) -> Vec<PendingApproval> {
        let keeper = self.wait_keeper(i).await;
        eventually(&format!("{n} held at keeper {i}"), || keeper.pending().len() == n).await;
        keeper.pending()
    }
}

async fn held(remote: &RemoteHeldCalls, marker: &str) -> portcullis_gate::held_calls::Ticket {
    let mut q = question();
    q.approval.arguments = serde_json::json!({ "marker": marker });
    match remote.ask(q).await {
        Asked::Held(ticket) => ticket,
        _ => panic!("held"),
    }
}

#[tokio::test]
async fn a_call_held_when_its_keeper_dies_is_asked_again_of_the_next() {
    let (keepers, remote) = Keepers::new(2);
    let mut ticket = held(&remote, "a").await;
    let first = keepers.held_at(0, 1).await;
    assert!(!first[0].asked_before);
    keepers.cut.notify_waiters();

    let again = keepers.held_at(1, 1).await;
    assert!(again[0].asked_before, "the new keeper raises no second prompt");
    assert_eq!(again[0].arguments, first[0].arguments);
    assert_eq!(again[0].expires_at_ms, first[0].expires_at_ms, "the deadline is kept");
    assert!(ticket.resolution.try_recv().is_err(), "still waiting");
    let mirror = remote.pending(&ticket.id).expect("the gate's id still names it");
    assert_eq!(mirror.arguments, first[0].arguments);

    // What the gate does by its id reaches the new keeper under that keeper's id.
    remote
        .extend(&ticket.id, Duration::from_secs(60), Duration::from_secs(3600))
        .unwrap();
    let second = keepers.keeper(1).unwrap();
    eventually("the new keeper's deadline moved", || {
        second.pending().first().is_some_and(|p| p.expires_at_ms == 91_000)
    })
    .await;
    second.resolve(&again[0].id, Resolution::Approved(Scope::Once)).unwrap();
    let resolved = tokio::time::timeout(Duration::from_secs(10), ticket.resolution).await;
    assert_eq!(resolved.expect("answered").unwrap(), Resolution::Approved(Scope::Once));
}

#[tokio::test]
async fn a_call_whose_keeper_dies_with_none_to_replace_it_is_refused_saying_why() {
    let (keepers, remote) = Keepers::new(1);
    let ticket = held(&remote, "a").await;
    keepers.held_at(0, 1).await;
    keepers.cut.notify_waiters();
    let resolved = tokio::time::timeout(Duration::from_secs(10), ticket.resolution).await;
    match resolved.expect("answered, not left hanging").unwrap() {
        Resolution::Lost { why } => assert!(why.contains("/run/k.sock"), "{why}"),
        other => panic!("refused, not {other:?}"),
    }
    assert!(remote.pending("1").is_none());
}

#[tokio::test]
async fn the_ids_of_calls_asked_again_stay_apart_from_the_new_keepers_own() {
    let (keepers, remote) = Keepers::new(2);
    let a = held(&remote, "a").await;
    let b = held(&remote, "b").await;
    assert_eq!((a.id.as_str(), b.id.as_str()), ("1", "2"));
    remote.end(&a.id, Resolution::TimedOut);
    keepers.held_at(0, 1).await;
    keepers.cut.notify_waiters();
    // The new keeper holds b as its 1; its own next call is its 2, which the gate already uses.
    keepers.held_at(1, 1).await;
    let c = held(&remote, "c").await;
    assert_ne!(c.id, b.id);
    let second = keepers.keeper(1).unwrap();
    let by_marker = |m: &str| {
        let pending = second.pending();
        pending.into_iter().find(|p| p.arguments["marker"] == m).unwrap().id
    };
    second.resolve(&by_marker("b"), Resolution::TimedOut).unwrap();
    second
        .resolve(&by_marker("c"), Resolution::Approved(Scope::Session))
        .unwrap();
    let within = |t: portcullis_gate::held_calls::Ticket| tokio::time::timeout(Duration::from_secs(10), t.resolution);
    assert_eq!(within(b).await.unwrap().unwrap(), Resolution::TimedOut);
    assert_eq!(within(c).await.unwrap().unwrap(), Resolution::Approved(Scope::Session));
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
        HeldBy::Policy(RuleRef::SectionEntry {
            door: portcullis_policy::Door::Resources,
            key: "file:///home/*".into(),
        }),
        HeldBy::Policy(RuleRef::SectionRule {
            door: portcullis_policy::Door::Sampling,
            key: "sampling".into(),
            index: 2,
        }),
    ] {
        let text = serde_json::to_string(&WireRule::from(&held)).unwrap();
        let back: WireRule = serde_json::from_str(&text).unwrap();
        assert_eq!(HeldBy::from(back), held, "{text}");
    }
}

fn live(session: &str) -> portcullis_gate::held_calls::LiveSession {
    portcullis_gate::held_calls::LiveSession {
        session: session.into(),
        server: "fs".into(),
        client: portcullis_gate::held_calls::pending::ClientInfo {
            name: Some("claude-code".into()),
            version: None,
        },
        via: String::new(),
        pid: 0,
        since_ms: 5,
    }
}

/// The keeper lists the sessions data planes announce (named as `connect`'s, with its pid) until
/// they end, or their data plane goes; a new keeper gets them again with the next link.
#[tokio::test]
async fn sessions_announced_over_the_link_are_listed_until_they_end() {
    let (keepers, remote) = Keepers::new(2);
    remote.announce(live("s1"));
    remote.announce(live("s2"));
    let first = keepers.wait_keeper(0).await;
    eventually("both listed", || first.live_sessions.list().len() == 2).await;
    let listed = first.live_sessions.list();
    assert_eq!((listed[0].via.as_str(), listed[0].pid), ("connect", std::process::id()));
    assert_eq!(listed[0].client.name.as_deref(), Some("claude-code"));
    remote.withdraw_session("s1");
    eventually("s1 left", || first.live_sessions.list().len() == 1).await;

    // The keeper dies; the next link (here a held call's) takes the live sessions to the new one.
    keepers.cut.notify_waiters();
    // A question sent while the link is breaking is refused as unreachable; the next one links.
    let asked = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Asked::Held(ticket) = remote.ask(question()).await {
                return ticket;
            }
        }
    });
    let _ticket = asked.await.expect("a new link within 10 s");
    let second = keepers.wait_keeper(1).await;
    eventually("s2 announced again", || {
        second
            .live_sessions
            .list()
            .iter()
            .map(|s| s.session.clone())
            .collect::<Vec<_>>()
            == ["s2"]
    })
    .await;
    // The data plane goes: its sessions leave the list.
    drop(remote);
    eventually("the data plane's sessions left", || {
        second.live_sessions.list().is_empty()
    })
    .await;
}

/// A keeper that restarts while nothing needs it is found again (never started by the data
/// plane's search) and told the live sessions.
#[tokio::test]
async fn a_keeper_that_comes_back_is_found_and_told_the_live_sessions() {
    let (keepers, remote) = Keepers::finding(2);
    remote.announce(live("s1"));
    let first = keepers.wait_keeper(0).await;
    eventually("listed", || first.live_sessions.list().len() == 1).await;
    keepers.cut.notify_waiters();
    let second = keepers.wait_keeper(1).await;
    eventually("listed by the next keeper", || second.live_sessions.list().len() == 1).await;
}
