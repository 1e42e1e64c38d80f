//! A data plane's side of the keeper link (`link.rs`): held calls asked of the keeper process.
//!
//! The link is made when the first held call needs it, and made again after it broke, so
//! allowed calls never wait for the keeper. Each call held by the keeper has a mirror here: its
//! ticket, its deadline and what the person is shown, so the gate's own side (timeouts, a client
//! withdrawing, tasks) works as with the in-process broker.
//!
//! When the link breaks (the keeper stopped, was killed, is being upgraded), the calls still held
//! are asked again of the next keeper — the one running, else one started — marked
//! `asked_before`: that keeper holds them without raising a second prompt, and they keep the id
//! the gate knows them by and their deadline. If no keeper can be reached they are refused
//! (`Resolution::Lost`, saying why), never left hanging. Questions not yet answered when the link
//! broke are refused as unreachable (the person may never have seen them).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::BytesMut;
use futures::future::BoxFuture;
use portcullis_policy::Places;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

use super::link::{self, Down, Up, WireRule};
use super::{Asked, AtOnce, HeldCalls, Question};
use crate::held_calls::pending::{HeldBy, PendingApproval};
use crate::held_calls::LiveSession;
use crate::held_calls::{DecideError, Extended, Resolution, Ticket};

/// A link just made: the keeper accepted the hello; `buf` holds what it sent after its answer.
pub struct LinkStreams {
    pub rd: Box<dyn AsyncRead + Unpin + Send>,
    pub wr: Box<dyn AsyncWrite + Unpin + Send>,
    pub buf: BytesMut,
    /// The link version the keeper speaks ([`link::VERSION`]; 1 for a keeper that predates them).
    pub version: u32,
}

/// Makes a link to the keeper (finding it, starting it if need be, saying hello), bounded in time.
pub type Connector = Box<dyn Fn() -> BoxFuture<'static, io::Result<LinkStreams>> + Send + Sync>;

pub struct RemoteHeldCalls {
    inner: Arc<Inner>,
}

struct Inner {
    connect: Connector,
    /// Links to a keeper that runs, never starting one: how this data plane finds a keeper that
    /// came back while nothing needed it, to announce its sessions to it.
    find: Option<Connector>,
    state: Mutex<State>,
    /// One link is made at a time; questions asked meanwhile wait for it.
    connecting: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// The live link's sender and its number.
    up: Option<(u64, mpsc::UnboundedSender<Up>)>,
    links: u64,
    next_n: u64,
    asks: HashMap<u64, Waiting>,
    /// By the id the gate knows the call by: the keeper's id when it was first held.
    held: HashMap<String, Mirror>,
    /// (link, the keeper's id) → the gate's id; they differ once a call was asked again.
    gate_ids: HashMap<(u64, String), String>,
    /// This data plane's live sessions, announced on every link that takes them.
    sessions: HashMap<String, LiveSession>,
    /// Whether the live link's keeper takes announcements (link version 2 and later).
    announces: bool,
    /// The live link's version ([`link::VERSION`]).
    version: u32,
}

/// A question sent, not yet answered.
struct Waiting {
    link: u64,
    asked: Asking,
    answer: AnswerTo,
}

enum AnswerTo {
    /// A new question: the gate waits for the answer.
    Gate(oneshot::Sender<Asked>),
    /// A held call asked again after its keeper stopped: its mirror (by the gate's id) waits.
    Mirror(String),
}

/// What a question carries, kept to ask it again.
#[derive(Clone)]
struct Asking {
    approval: PendingApproval,
    digest: String,
    places: Arc<Places>,
}

/// A call the keeper holds, as this side knows it.
struct Mirror {
    /// The link and the keeper's id it is held under; `None` between a broken link and the
    /// keeper that holds it again.
    at: Option<(u64, String)>,
    asked: Asking,
    resolve: oneshot::Sender<Resolution>,
    deadline: watch::Sender<Duration>,
}

impl RemoteHeldCalls {
    pub fn new(connect: Connector) -> Self {
        Self::with_finder(connect, None)
    }

    /// With `find`, a data plane whose link broke looks again (from 0.5 s, doubling, up to every
    /// 30 s) for a keeper that runs, while it has live sessions, so that a restarted keeper lists
    /// them without waiting for a held call.
    pub fn with_finder(connect: Connector, find: Option<Connector>) -> Self {
        let inner = Inner {
            connect,
            find,
            state: Mutex::default(),
            connecting: tokio::sync::Mutex::new(()),
        };
        Self { inner: Arc::new(inner) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock()
    }

    async fn ask_keeper(&self, question: Question) -> Asked {
        let (number, up) = match self.inner.link().await {
            Ok(link) => link,
            Err(e) => return Asked::AtOnce(AtOnce::Unreachable { why: e.to_string() }),
        };
        if question.approval.rule == HeldBy::Answer && self.lock().version < 3 {
            // An older keeper would not read the question, and the link would close over it.
            let why = "the Portcullis running is older than this `portcullis connect` and cannot ask about                        an answer (restart the app or `portcullis serve`)";
            return Asked::AtOnce(AtOnce::Unreachable { why: why.into() });
        }
        let (tx, rx) = oneshot::channel();
        let asked = Asking {
            approval: question.approval,
            digest: question.digest,
            places: question.places,
        };
        send_ask(&mut self.lock(), number, &up, asked, AnswerTo::Gate(tx));
        rx.await.unwrap_or_else(|_| {
            Asked::AtOnce(AtOnce::Unreachable {
                why: "the connection to it closed before it answered".into(),
            })
        })
    }

    /// Ends the mirror of `id` here with `resolution`; where the keeper holds it, if it does.
    fn end_here(&self, id: &str, resolution: Resolution) -> Option<Option<(u64, String)>> {
        let mut state = self.lock();
        let mirror = state.held.remove(id)?;
        if let Some(at) = &mirror.at {
            state.gate_ids.remove(at);
        }
        drop(state);
        let _ = mirror.resolve.send(resolution);
        Some(mirror.at)
    }

    /// Sends `message` on link `number` if it is the live one (a keeper that stopped forgot it all).
    fn send_on(&self, number: u64, message: Up) {
        if let Some((live, tx)) = self.inner.live() {
            if live == number {
                let _ = tx.send(message);
            }
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live link, made now if there is none.
    async fn link(self: &Arc<Self>) -> io::Result<(u64, mpsc::UnboundedSender<Up>)> {
        self.link_by(&self.connect).await
    }

    /// The live link, made now by `connector` if there is none.
    async fn link_by(self: &Arc<Self>, connector: &Connector) -> io::Result<(u64, mpsc::UnboundedSender<Up>)> {
        if let Some(up) = self.live() {
            return Ok(up);
        }
        let _one = self.connecting.lock().await;
        if let Some(up) = self.live() {
            return Ok(up);
        }
        let streams = connector().await?;
        let (up_tx, up_rx) = mpsc::unbounded_channel::<Up>();
        let (down_tx, down_rx) = mpsc::unbounded_channel::<Down>();
        let number = {
            let mut state = self.lock();
            state.links += 1;
            state.up = Some((state.links, up_tx.clone()));
            state.announces = streams.version >= 2;
            state.version = streams.version;
            if state.announces {
                for session in state.sessions.values() {
                    let _ = up_tx.send(Up::Announce {
                        session: session.clone(),
                    });
                }
            }
            state.links
        };
        tokio::spawn(link::write_lines(streams.wr, up_rx));
        let reader = link::read_lines(streams.rd, streams.buf, down_tx);
        tokio::spawn(dispatch(Arc::downgrade(self), number, reader, down_rx));
        tracing::info!(link = number, "keeper link made");
        Ok((number, up_tx))
    }

    fn live(&self) -> Option<(u64, mpsc::UnboundedSender<Up>)> {
        self.lock().up.clone().filter(|(_, tx)| !tx.is_closed())
    }

    /// Looks for a keeper that runs (never starting one) while this data plane has sessions and
    /// no link. Boxed for the same reason as [`Self::ask_again`].
    fn find_again(me: Weak<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut wait = Duration::from_millis(500);
            loop {
                let Some(inner) = me.upgrade() else { return };
                let Some(find) = &inner.find else { return };
                if inner.live().is_some() || inner.lock().sessions.is_empty() {
                    return;
                }
                if inner.link_by(find).await.is_ok() {
                    return;
                }
                drop(inner);
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(30));
            }
        })
    }

    /// Asks the calls whose keeper stopped again, of the next keeper; refuses them if none can
    /// be reached.
    ///
    /// Boxed: it makes a link, whose reader ends by calling this again.
    fn ask_again(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.ask_again_now())
    }

    async fn ask_again_now(self: Arc<Self>) {
        let detached = |state: &State| -> Vec<String> {
            let ids = state.held.iter().filter(|(_, m)| m.at.is_none());
            ids.map(|(id, _)| id.clone()).collect()
        };
        if detached(&self.lock()).is_empty() {
            return;
        }
        match self.link().await {
            Ok((number, up)) => {
                let mut state = self.lock();
                for id in detached(&state) {
                    let mut asked = state.held[&id].asked.clone();
                    asked.approval.asked_before = true;
                    tracing::info!(id, link = number, "held call asked again of the new keeper");
                    send_ask(&mut state, number, &up, asked, AnswerTo::Mirror(id));
                }
            }
            Err(e) => {
                let why = format!("the keeper holding it stopped and no other could be reached ({e})");
                let mut state = self.lock();
                for id in detached(&state) {
                    if let Some(mirror) = state.held.remove(&id) {
                        let _ = mirror.resolve.send(Resolution::Lost { why: why.clone() });
                    }
                }
            }
        }
    }
}

/// Numbers a question, keeps it, and sends it on link `number`.
fn send_ask(state: &mut State, number: u64, up: &mpsc::UnboundedSender<Up>, asked: Asking, answer: AnswerTo) {
    state.next_n += 1;
    let n = state.next_n;
    let message = Up::Ask {
        n,
        rule: WireRule::from(&asked.approval.rule),
        approval: Box::new(asked.approval.clone()),
        digest: asked.digest.clone(),
        places: (*asked.places).clone(),
    };
    state.asks.insert(
        n,
        Waiting {
            link: number,
            asked,
            answer,
        },
    );
    if up.send(message).is_err() {
        // The link closed meanwhile: its end refuses or re-asks what waited on it.
        if let Some(waiting) = state.asks.remove(&n) {
            match waiting.answer {
                AnswerTo::Gate(_) => {}
                AnswerTo::Mirror(id) => {
                    if let Some(mirror) = state.held.get_mut(&id) {
                        mirror.at = None;
                    }
                }
            }
        }
    }
}

impl HeldCalls for RemoteHeldCalls {
    fn ask(&self, question: Question) -> BoxFuture<'_, Asked> {
        Box::pin(self.ask_keeper(question))
    }

    fn end(&self, id: &str, resolution: Resolution) {
        if let Some(Some((number, keeper_id))) = self.end_here(id, resolution.clone()) {
            let message = Up::End {
                id: keeper_id,
                resolution,
            };
            self.send_on(number, message);
        }
    }

    fn extend(&self, id: &str, by: Duration, max_hold: Duration) -> Result<Extended, DecideError> {
        let mut state = self.lock();
        let Some(mirror) = state.held.get_mut(id) else {
            return Err(DecideError::Unknown(id.to_owned()));
        };
        // The keeper clamps the same way and confirms with a deadline move.
        let approval = &mut mirror.asked.approval;
        let extended = crate::held_calls::move_deadline(approval, &mirror.deadline, by, max_hold);
        let at = mirror.at.clone();
        drop(state);
        if let Some((number, keeper_id)) = at {
            let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            let message = Up::Extend {
                id: keeper_id,
                by_ms: ms(by),
                max_hold_ms: ms(max_hold),
            };
            self.send_on(number, message);
        }
        Ok(extended)
    }

    fn pending(&self, id: &str) -> Option<PendingApproval> {
        self.lock().held.get(id).map(|m| m.asked.approval.clone())
    }

    fn withdraw_session(&self, session: &str) {
        let ids: Vec<String> = self
            .lock()
            .held
            .iter()
            .filter(|(_, m)| m.asked.approval.session == session)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            self.end_here(
                &id,
                Resolution::Cancelled {
                    why: "the client session ended".into(),
                },
            );
        }
        self.lock().sessions.remove(session);
        if let Some((_, tx)) = self.inner.live() {
            let _ = tx.send(Up::WithdrawSession {
                session: session.to_owned(),
            });
        }
    }

    fn withdraw_request(&self, session: &str, request_id: &str) -> bool {
        let id = self
            .lock()
            .held
            .iter()
            .find(|(_, m)| m.asked.approval.session == session && m.asked.approval.request_id == request_id)
            .map(|(id, _)| id.clone());
        let Some(id) = id else { return false };
        self.end(
            &id,
            Resolution::Cancelled {
                why: "the client cancelled the request".into(),
            },
        );
        true
    }

    fn announce(&self, session: LiveSession) {
        self.announce_session(session);
    }
}

impl RemoteHeldCalls {
    /// Announces `session` on the live link, or on the one made now in the background: an
    /// allowed call never waits for the keeper.
    fn announce_session(&self, mut session: LiveSession) {
        session.via = "connect".into();
        session.pid = std::process::id();
        let mut state = self.lock();
        state.sessions.insert(session.session.clone(), session.clone());
        match state.up.clone().filter(|(_, tx)| !tx.is_closed()) {
            Some((_, tx)) => {
                if state.announces {
                    let _ = tx.send(Up::Announce { session });
                }
            }
            None => {
                drop(state);
                let inner = self.inner.clone();
                // Made, the link announces every live session (`Inner::link`).
                tokio::spawn(async move {
                    if let Err(e) = inner.link().await {
                        tracing::debug!(error = %e, "the keeper link could not be made to announce a session");
                    }
                });
            }
        }
    }
}

/// Applies what the keeper sends on link `number` until the link ends; then refuses the
/// questions still waiting on it and asks its held calls again of the next keeper.
async fn dispatch(
    inner: Weak<Inner>,
    number: u64,
    reader: impl std::future::Future<Output = ()>,
    mut down: mpsc::UnboundedReceiver<Down>,
) {
    let apply = async {
        while let Some(message) = down.recv().await {
            let Some(inner) = inner.upgrade() else { return };
            apply(&mut inner.lock(), number, message);
        }
    };
    // The reader ends with the stream; the receiver then drains what it read.
    tokio::join!(reader, apply);
    tracing::info!(link = number, "keeper link closed");
    let Some(inner) = inner.upgrade() else { return };
    {
        let mut state = inner.lock();
        if state.up.as_ref().is_some_and(|(n, _)| *n == number) {
            state.up = None;
        }
        let waited: Vec<u64> = state
            .asks
            .iter()
            .filter(|(_, w)| w.link == number)
            .map(|(n, _)| *n)
            .collect();
        for n in waited {
            // A new question's waiter is refused as unreachable (its sender drops here); a call
            // being asked again stays detached and is asked once more below.
            state.asks.remove(&n);
        }
        state.gate_ids.retain(|(link, _), _| *link != number);
        for mirror in state.held.values_mut() {
            if mirror.at.as_ref().is_some_and(|(link, _)| *link == number) {
                mirror.at = None;
            }
        }
    }
    inner.clone().ask_again().await;
    tokio::spawn(Inner::find_again(Arc::downgrade(&inner)));
}

fn apply(state: &mut State, number: u64, message: Down) {
    match message {
        Down::AtOnce { n, at_once } => match state.asks.remove(&n).map(|w| w.answer) {
            Some(AnswerTo::Gate(answer)) => {
                let _ = answer.send(Asked::AtOnce(at_once));
            }
            // A keeper that decides a call asked again at once (an older one): the call was
            // held for a person, and is not decided by what this keeper says without one.
            Some(AnswerTo::Mirror(id)) => {
                if let Some(mirror) = state.held.remove(&id) {
                    let why = format!("the keeper holding it stopped and the new one would not hold it ({at_once:?})");
                    let _ = mirror.resolve.send(Resolution::Lost { why });
                }
            }
            None => {}
        },
        Down::Held { n, id } => {
            let Some(waiting) = state.asks.remove(&n) else { return };
            match waiting.answer {
                AnswerTo::Gate(answer) => held_anew(state, number, id, waiting.asked, answer),
                AnswerTo::Mirror(gate_id) => match state.held.get_mut(&gate_id) {
                    Some(mirror) => {
                        mirror.at = Some((number, id.clone()));
                        state.gate_ids.insert((number, id), gate_id);
                    }
                    // Ended here (its deadline, its client) while it was being asked again.
                    None => end_at_keeper(state, id, "the call ended while it was being asked again"),
                },
            }
        }
        Down::Deadline {
            id,
            after_ms,
            expires_at_ms,
        } => {
            let Some(gate_id) = state.gate_ids.get(&(number, id)) else {
                return;
            };
            if let Some(mirror) = state.held.get_mut(gate_id) {
                mirror.asked.approval.expires_at_ms = expires_at_ms;
                mirror.asked.approval.expires_at = crate::clock::rfc3339(expires_at_ms);
                let _ = mirror.deadline.send(Duration::from_millis(after_ms));
            }
        }
        Down::Resolved { id, resolution } => {
            let Some(gate_id) = state.gate_ids.remove(&(number, id)) else {
                return;
            };
            if let Some(mirror) = state.held.remove(&gate_id) {
                let _ = mirror.resolve.send(resolution);
            }
        }
    }
}

/// A new question held by the keeper under `id`: its mirror, and the ticket the gate waits on.
fn held_anew(state: &mut State, number: u64, id: String, mut asked: Asking, answer: oneshot::Sender<Asked>) {
    // The keeper's ids are unique only per keeper: one asked again may already use this one.
    let gate_id = if state.held.contains_key(&id) {
        format!("{id}.{number}")
    } else {
        id.clone()
    };
    asked.approval.id.clone_from(&gate_id);
    let approval = &asked.approval;
    let timeout = u64::try_from(approval.expires_at_ms.saturating_sub(approval.requested_at_ms)).unwrap_or(0);
    let (deadline, deadline_rx) = watch::channel(Duration::from_millis(timeout));
    let (resolve, resolution) = oneshot::channel();
    let ticket = Ticket {
        id: gate_id.clone(),
        resolution,
        deadline: deadline_rx,
    };
    if answer.send(Asked::Held(ticket)).is_ok() {
        let mirror = Mirror {
            at: Some((number, id.clone())),
            asked,
            resolve,
            deadline,
        };
        state.held.insert(gate_id.clone(), mirror);
        state.gate_ids.insert((number, id), gate_id);
    } else {
        // The call's waiter left while it was being asked: nobody will wait for it.
        end_at_keeper(state, id, "the client left while the call was being asked");
    }
}

fn end_at_keeper(state: &State, keeper_id: String, why: &str) {
    if let Some((_, up)) = &state.up {
        let resolution = Resolution::Cancelled { why: why.to_owned() };
        let _ = up.send(Up::End {
            id: keeper_id,
            resolution,
        });
    }
}
