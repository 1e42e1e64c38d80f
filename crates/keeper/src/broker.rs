//! The approval broker: calls held for a person's decision.
//!
//! Event-driven, no polling: a held call owns a oneshot receiver; whoever resolves it first — a
//! person (control API, desktop), its deadline, or the client withdrawing — removes it from the
//! pending map and sends the [`Resolution`]. Removal is the one atomic step, so every held call
//! ends exactly once. Every change is announced on the gateway's event channel.
//!
//! Grants that spare a person a second prompt live here too: "for this session" (server + tool +
//! agent session) and MRTR continuations (a 2026-era retry of a call already approved).

mod grants;
mod in_process;
pub(crate) mod live_sessions;
pub mod standing;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, oneshot, watch};

use portcullis_gate::events::GatewayEvent;
use portcullis_gate::held_calls::pending::{PendingApproval, Scope};
use portcullis_gate::held_calls::{move_deadline, DecideError, Extended, Resolution, Ticket};

pub(crate) use grants::Grants;

struct Held {
    approval: PendingApproval,
    /// The agent session's key, for withdrawing everything of a session that ends.
    session_key: String,
    resolve: oneshot::Sender<Resolution>,
    /// How long after it was held the call times out; the waiting [`portcullis_gate::gate::Hold`]
    /// follows every change ([`ApprovalBroker::extend`]).
    deadline: watch::Sender<Duration>,
}

/// How many resolved ids are remembered to tell "already decided" from "unknown": a second
/// decision comes seconds after the first (two windows, the CLI and the app), and 1024 calls
/// decided in between would be far more than people decide; about 100 KiB.
const RECENT: usize = 1024;

pub struct ApprovalBroker {
    state: Mutex<State>,
    approvers: AtomicUsize,
    events: broadcast::Sender<GatewayEvent>,
    pub grants: Grants,
    /// Who is connected where: announced by every gate that asks this broker.
    pub live_sessions: live_sessions::LiveSessions,
    /// While set, the gate denies every call that would be held ([`portcullis_gate::gate::Gate::set_paused`]).
    paused: std::sync::atomic::AtomicBool,
    /// Itself, for the timers it starts ([`Self::hold_again`]); empty unless made by [`Self::shared`].
    me: std::sync::Weak<Self>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    pending: BTreeMap<u64, Held>,
    recent: VecDeque<(String, String)>,
}

impl ApprovalBroker {
    pub fn new(events: broadcast::Sender<GatewayEvent>) -> Self {
        Self {
            state: Mutex::new(State::default()),
            approvers: AtomicUsize::new(0),
            events,
            grants: Grants::default(),
            live_sessions: live_sessions::LiveSessions::default(),
            paused: std::sync::atomic::AtomicBool::new(false),
            me: std::sync::Weak::new(),
        }
    }

    /// A broker shared by the gate, the keeper link and the control API.
    pub fn shared(events: broadcast::Sender<GatewayEvent>) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            ..Self::new(events)
        })
    }

    /// Switches the pause; announces [`GatewayEvent::PauseChanged`] when it changes.
    pub fn set_paused(&self, paused: bool) {
        use std::sync::atomic::Ordering;
        if self.paused.swap(paused, Ordering::AcqRel) != paused {
            tracing::info!(paused, "approvals paused or resumed");
            let _ = self.events.send(GatewayEvent::PauseChanged { paused });
        }
    }

    pub fn paused(&self) -> bool {
        self.paused.load(std::sync::atomic::Ordering::Acquire)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// True while someone can decide (a control-API subscriber, the desktop app).
    pub fn has_approver(&self) -> bool {
        self.approvers.load(Ordering::Acquire) > 0
    }

    /// Registers an approver until the guard drops.
    pub fn attach_approver(self: &Arc<Self>) -> ApproverGuard {
        self.approvers.fetch_add(1, Ordering::AcqRel);
        ApproverGuard { broker: self.clone() }
    }

    /// Holds a call; `approval.id` is filled in here. Its deadline is `expires_at_ms`, counted
    /// from `requested_at_ms`.
    pub fn hold(&self, mut approval: PendingApproval, session_key: &str) -> Ticket {
        let (tx, rx) = oneshot::channel();
        let timeout = u64::try_from(approval.expires_at_ms.saturating_sub(approval.requested_at_ms)).unwrap_or(0);
        let (deadline_tx, deadline_rx) = watch::channel(Duration::from_millis(timeout));
        let mut state = self.lock();
        state.next_id += 1;
        let id = state.next_id;
        approval.id = id.to_string();
        state.pending.insert(
            id,
            Held {
                approval: approval.clone(),
                session_key: session_key.to_owned(),
                resolve: tx,
                deadline: deadline_tx,
            },
        );
        drop(state);
        // In the held request's span, which names the server and the tool.
        tracing::info!(id, "call held for approval");
        let _ = self.events.send(GatewayEvent::ApprovalRequested {
            approval: Box::new(approval),
        });
        Ticket {
            id: id.to_string(),
            resolution: rx,
            deadline: deadline_rx,
        }
    }

    /// Moves a held call's deadline `by` later, but never past `max_hold` from when it was held
    /// (a deadline already beyond that, from a longer policy timeout, is kept, never shortened).
    /// The waiting call's timer follows; the stored copy — what `GET /control/approvals` lists —
    /// shows the new `expires_at`.
    pub fn extend(&self, id: &str, by: Duration, max_hold: Duration) -> Result<Extended, DecideError> {
        let mut state = self.lock();
        let held = id.parse::<u64>().ok().and_then(|key| state.pending.get_mut(&key));
        let Some(held) = held else {
            return Err(missing(&state, id));
        };
        let Extended { approval, clamped } = move_deadline(&mut held.approval, &held.deadline, by, max_hold);
        drop(state);
        let _ = self.events.send(GatewayEvent::ApprovalExtended {
            approval: Box::new(approval.clone()),
        });
        tracing::info!(
            id,
            expires_at = approval.expires_at,
            clamped,
            "approval deadline extended"
        );
        Ok(Extended { approval, clamped })
    }

    pub fn pending(&self) -> Vec<PendingApproval> {
        self.lock().pending.values().map(|h| h.approval.clone()).collect()
    }

    /// The held call `id`, or why there is none (unknown, or already decided and how).
    pub fn lookup(&self, id: &str) -> Result<PendingApproval, DecideError> {
        let state = self.lock();
        match id.parse::<u64>().ok().and_then(|key| state.pending.get(&key)) {
            Some(held) => Ok(held.approval.clone()),
            None => Err(missing(&state, id)),
        }
    }

    pub fn get(&self, id: &str) -> Option<PendingApproval> {
        let key = id.parse::<u64>().ok()?;
        self.lock().pending.get(&key).map(|h| h.approval.clone())
    }

    /// Ends a held call. The first resolution wins; later ones get [`DecideError::AlreadyDecided`].
    pub fn resolve(&self, id: &str, resolution: Resolution) -> Result<PendingApproval, DecideError> {
        let mut state = self.lock();
        let held = id.parse::<u64>().ok().and_then(|key| state.pending.remove(&key));
        let Some(held) = held else {
            let how = state.recent.iter().find(|(i, _)| i == id).map(|(_, how)| how.clone());
            return Err(match how {
                Some(how) => DecideError::AlreadyDecided { id: id.to_owned(), how },
                None => DecideError::Unknown(id.to_owned()),
            });
        };
        let (decision, decided_by) = resolution.audit();
        if state.recent.len() == RECENT {
            state.recent.pop_front();
        }
        state
            .recent
            .push_back((id.to_owned(), format!("{decision} by {decided_by}")));
        drop(state);
        let scope = match &resolution {
            Resolution::Approved(scope) => Some(*scope),
            Resolution::Edited(_) => Some(Scope::Once),
            _ => None,
        };
        tracing::info!(id, %decision, %decided_by, "approval resolved");
        let _ = self.events.send(GatewayEvent::ApprovalResolved {
            id: id.to_owned(),
            decision,
            decided_by,
            scope,
        });
        let _ = held.resolve.send(resolution);
        Ok(held.approval)
    }

    /// Withdraws every held call of an agent session (the session ended or the client left).
    pub fn withdraw_session(&self, session_key: &str) {
        let ids: Vec<String> = self
            .lock()
            .pending
            .values()
            .filter(|h| h.session_key == session_key)
            .map(|h| h.approval.id.clone())
            .collect();
        for id in ids {
            let _ = self.resolve(
                &id,
                Resolution::Cancelled {
                    why: "the client session ended".into(),
                },
            );
        }
        self.grants.end_session(session_key);
        self.live_sessions.end(session_key);
    }

    /// Withdraws the held call with JSON-RPC id `request_id` in `session_key` (a client cancel).
    /// Returns whether there was one.
    pub fn withdraw_request(&self, session_key: &str, request_id: &str) -> bool {
        let id = self
            .lock()
            .pending
            .values()
            .find(|h| h.session_key == session_key && h.approval.request_id == request_id)
            .map(|h| h.approval.id.clone());
        match id {
            Some(id) => self
                .resolve(
                    &id,
                    Resolution::Cancelled {
                        why: "the client cancelled the request".into(),
                    },
                )
                .is_ok(),
            None => false,
        }
    }
}

/// Why `id` is not pending: decided recently (and how), or never known.
fn missing(state: &State, id: &str) -> DecideError {
    match state.recent.iter().find(|(i, _)| i == id) {
        Some((_, how)) => DecideError::AlreadyDecided {
            id: id.to_owned(),
            how: how.clone(),
        },
        None => DecideError::Unknown(id.to_owned()),
    }
}

pub struct ApproverGuard {
    broker: Arc<ApprovalBroker>,
}

impl Drop for ApproverGuard {
    fn drop(&mut self) {
        if self.broker.approvers.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // The last approver left. A subscriber that reconnects (e.g. after falling behind) gets
        // a moment; after that, calls still held have nobody to decide them and are refused.
        let broker = self.broker.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(APPROVER_GRACE).await;
                    broker.orphan_all();
                });
            }
            Err(_) => broker.orphan_all(),
        }
    }
}

/// How long held calls wait for an approver to come back.
const APPROVER_GRACE: Duration = Duration::from_secs(2);
/// How long a call asked again after its keeper stopped waits for this keeper's first approver
/// (the app's window, `approvals watch`, reconnecting to the keeper that replaced the old one).
#[cfg(not(test))]
const REATTACH_GRACE: Duration = Duration::from_secs(10);
#[cfg(test)]
const REATTACH_GRACE: Duration = Duration::from_millis(200);

impl ApprovalBroker {
    /// Holds a call asked again after the keeper that held it stopped (`asked_before`). With no
    /// approver yet, it waits [`REATTACH_GRACE`] for one, then is refused like any call whose
    /// approvers left.
    pub fn hold_again(&self, approval: PendingApproval) -> Ticket {
        let session = approval.session.clone();
        let ticket = self.hold(approval, &session);
        let runtime = tokio::runtime::Handle::try_current();
        if let (false, Some(broker), Ok(runtime)) = (self.has_approver(), self.me.upgrade(), runtime) {
            runtime.spawn(async move {
                tokio::time::sleep(REATTACH_GRACE).await;
                broker.orphan_all();
            });
        }
        ticket
    }

    /// Refuses every held call if no approver is attached.
    fn orphan_all(&self) {
        if self.has_approver() {
            return;
        }
        let ids: Vec<String> = self.lock().pending.values().map(|h| h.approval.id.clone()).collect();
        for id in ids {
            let _ = self.resolve(&id, Resolution::Orphaned);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use portcullis_policy::{Risk, RuleRef, ToolClass};

    use super::*;
    use portcullis_gate::held_calls::pending::{ClientInfo, HeldBy, RiskBasis};

    pub(crate) fn approval() -> PendingApproval {
        PendingApproval {
            id: String::new(),
            server: "fs".into(),
            method: portcullis_audit::Method::ToolsCall,
            tool: "write_file".into(),
            asks: Default::default(),
            title: None,
            description: None,
            annotations: None,
            risk: ToolClass::Write,
            risk_level: Risk::Medium,
            risk_basis: RiskBasis::Guessed,
            reason: None,
            asked_by: "the policy entry for write_file in fs.json".into(),
            input_schema: None,
            arguments: serde_json::json!({"path": "/tmp/x"}),
            arguments_json: r#"{"path":"/tmp/x"}"#.into(),
            session: "s1".into(),
            client: ClientInfo::default(),
            rule: HeldBy::Policy(RuleRef::Entry {
                key: "write_file".into(),
            }),
            requested_at: String::new(),
            requested_at_ms: 0,
            expires_at: String::new(),
            expires_at_ms: 0,
            request_id: "7".into(),
            pin_change: None,
            asked_before: false,
            answer: None,
        }
    }

    /// The app, `approvals list --json` and the audit read these spellings: the class and risk
    /// from the policy crate's enums, the rule as the audit's text.
    #[test]
    fn a_held_call_serializes_its_class_risk_and_rule_as_text() {
        let shown = serde_json::to_value(approval()).unwrap();
        assert_eq!(
            (&shown["risk"], &shown["risk_level"], &shown["rule"]),
            (
                &serde_json::json!("write"),
                &serde_json::json!("medium"),
                &serde_json::json!("tools.write_file")
            )
        );
        let changed = PendingApproval {
            rule: HeldBy::PinChanged,
            ..approval()
        };
        assert_eq!(serde_json::to_value(changed).unwrap()["rule"], "pin:changed");
    }

    /// `extend` announces the new deadline as `ApprovalExtended`, so every observer (each desktop
    /// window, `GET /control/events`) shows the same deadline; a refused extension announces nothing.
    #[tokio::test]
    async fn extending_a_held_call_announces_its_new_deadline() {
        let (events, mut rx) = broadcast::channel(16);
        let broker = ApprovalBroker::new(events);
        let ticket = broker.hold(
            PendingApproval {
                requested_at_ms: 1_000_000,
                expires_at_ms: 1_030_000,
                ..approval()
            },
            "s1",
        );
        assert!(matches!(
            rx.recv().await.unwrap(),
            GatewayEvent::ApprovalRequested { .. }
        ));
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
        assert!(broker
            .extend("77", Duration::from_secs(1), Duration::from_secs(600))
            .is_err());
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_held_call_ends_exactly_once() {
        let (events, mut rx) = broadcast::channel(16);
        let broker = ApprovalBroker::new(events);
        let ticket = broker.hold(approval(), "s1");
        assert!(matches!(
            rx.recv().await.unwrap(),
            GatewayEvent::ApprovalRequested { .. }
        ));
        broker.resolve(&ticket.id, Resolution::Approved(Scope::Once)).unwrap();
        assert_eq!(ticket.resolution.await.unwrap(), Resolution::Approved(Scope::Once));
        let again = broker.resolve(&ticket.id, Resolution::TimedOut).unwrap_err();
        assert!(matches!(again, DecideError::AlreadyDecided { .. }), "{again}");
        assert_eq!(again.to_string(), "approval 1 was already decided (approved by user)");
        assert!(matches!(
            broker.resolve("99", Resolution::TimedOut),
            Err(DecideError::Unknown(_))
        ));
        assert!(broker.pending().is_empty());
    }

    #[tokio::test]
    async fn a_client_cancel_withdraws_only_its_request() {
        let (events, _rx) = broadcast::channel(16);
        let broker = ApprovalBroker::new(events);
        let a = broker.hold(approval(), "s1");
        let b = broker.hold(approval(), "s2");
        assert!(!broker.withdraw_request("s1", "8"), "another request id");
        assert!(broker.withdraw_request("s1", "7"));
        assert!(matches!(a.resolution.await.unwrap(), Resolution::Cancelled { .. }));
        assert_eq!(broker.pending().len(), 1);
        assert_eq!(broker.pending()[0].id, b.id);
    }

    #[tokio::test]
    async fn extending_moves_the_deadline_up_to_the_maximum_hold() {
        let (events, _rx) = broadcast::channel(16);
        let broker = ApprovalBroker::new(events);
        let mut held = approval();
        held.requested_at_ms = 1_000_000;
        held.expires_at_ms = 1_002_000;
        let ticket = broker.hold(held, "s1");
        let mut deadline = ticket.deadline.clone();
        assert_eq!(*deadline.borrow(), Duration::from_secs(2));
        let max = Duration::from_secs(10);
        let e = broker.extend(&ticket.id, Duration::from_secs(3), max).unwrap();
        assert!(!e.clamped);
        assert_eq!(e.approval.expires_at_ms, 1_005_000);
        assert!(deadline.has_changed().unwrap(), "the waiting call hears of it");
        assert_eq!(*deadline.borrow_and_update(), Duration::from_secs(5));
        assert_eq!(broker.get(&ticket.id).unwrap().expires_at_ms, 1_005_000, "listed");
        assert_eq!(broker.get(&ticket.id).unwrap().expires_at, "1970-01-01T00:16:45Z");
        let e = broker.extend(&ticket.id, Duration::from_secs(60), max).unwrap();
        assert!(e.clamped);
        assert_eq!(
            e.approval.expires_at_ms, 1_010_000,
            "never past max_hold from when it was held"
        );
        assert_eq!(*deadline.borrow(), max);
        // A deadline already beyond the maximum (a long policy timeout) is not shortened.
        let e = broker
            .extend(&ticket.id, Duration::from_secs(1), Duration::from_secs(4))
            .unwrap();
        assert!(e.clamped);
        assert_eq!(e.approval.expires_at_ms, 1_010_000);
        broker.resolve(&ticket.id, Resolution::TimedOut).unwrap();
        assert!(matches!(
            broker.extend(&ticket.id, Duration::from_secs(1), max),
            Err(DecideError::AlreadyDecided { .. })
        ));
        assert!(matches!(
            broker.extend("77", Duration::from_secs(1), max),
            Err(DecideError::Unknown(_))
        ));
    }

    #[test]
    fn approvers_are_counted_while_attached() {
        let (events, _rx) = broadcast::channel(16);
        let broker = ApprovalBroker::shared(events);
        assert!(!broker.has_approver());
        let guard = broker.attach_approver();
        assert!(broker.has_approver());
        drop(guard);
        assert!(!broker.has_approver());
    }
}
