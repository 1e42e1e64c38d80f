//! A data plane's side of the keeper link (`link.rs`): held calls asked of the keeper process.
//!
//! The link is made when the first held call needs it, and made again after it broke, so
//! allowed calls never wait for the keeper. Each call held by the keeper has a mirror here: its
//! ticket, its deadline and what the person is shown, so the gate's own side (timeouts, a client
//! withdrawing, tasks) works as with the in-process broker. When the link breaks, calls still
//! held are answered `Orphaned` (refused, never left hanging); questions not yet answered are
//! refused as unreachable.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

use super::link::{self, Down, Up, WireRule};
use super::{Asked, AtOnce, HeldCalls, Question};
use crate::approval::pending::PendingApproval;
use crate::approval::{DecideError, Extended, Resolution, Ticket};

/// A link just made: the keeper accepted the hello; `buf` holds what it sent after its answer.
pub struct LinkStreams {
    pub rd: Box<dyn AsyncRead + Unpin + Send>,
    pub wr: Box<dyn AsyncWrite + Unpin + Send>,
    pub buf: BytesMut,
}

/// Makes a link to the keeper (finding it, starting it if need be, saying hello), bounded in time.
pub type Connector = Box<dyn Fn() -> BoxFuture<'static, io::Result<LinkStreams>> + Send + Sync>;

pub struct RemoteHeldCalls {
    connect: Connector,
    state: Arc<Mutex<State>>,
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
    held: HashMap<String, Mirror>,
}

/// A question sent, not yet answered.
struct Waiting {
    link: u64,
    approval: PendingApproval,
    answer: oneshot::Sender<Asked>,
}

/// A call the keeper holds, as this side knows it.
struct Mirror {
    link: u64,
    approval: PendingApproval,
    resolve: oneshot::Sender<Resolution>,
    deadline: watch::Sender<Duration>,
}

impl RemoteHeldCalls {
    pub fn new(connect: Connector) -> Self {
        Self {
            connect,
            state: Arc::default(),
            connecting: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The live link, made now if there is none.
    async fn link(&self) -> io::Result<(u64, mpsc::UnboundedSender<Up>)> {
        if let Some(up) = self.live() {
            return Ok(up);
        }
        let _one = self.connecting.lock().await;
        if let Some(up) = self.live() {
            return Ok(up);
        }
        let streams = (self.connect)().await?;
        let (up_tx, up_rx) = mpsc::unbounded_channel::<Up>();
        let (down_tx, down_rx) = mpsc::unbounded_channel::<Down>();
        let number = {
            let mut state = self.lock();
            state.links += 1;
            state.up = Some((state.links, up_tx.clone()));
            state.links
        };
        tokio::spawn(link::write_lines(streams.wr, up_rx));
        let reader = link::read_lines(streams.rd, streams.buf, down_tx);
        tokio::spawn(dispatch(self.state.clone(), number, reader, down_rx));
        tracing::info!(link = number, "keeper link made");
        Ok((number, up_tx))
    }

    fn live(&self) -> Option<(u64, mpsc::UnboundedSender<Up>)> {
        self.lock().up.clone().filter(|(_, tx)| !tx.is_closed())
    }

    /// Sends on the live link, if there is one (what only matters to a live keeper).
    fn send(&self, message: Up) {
        if let Some((_, tx)) = self.live() {
            let _ = tx.send(message);
        }
    }

    async fn ask_keeper(&self, question: Question) -> Asked {
        let (number, up) = match self.link().await {
            Ok(link) => link,
            Err(e) => return Asked::AtOnce(AtOnce::Unreachable { why: e.to_string() }),
        };
        let (tx, rx) = oneshot::channel();
        let n = {
            let mut state = self.lock();
            state.next_n += 1;
            let n = state.next_n;
            state.asks.insert(
                n,
                Waiting {
                    link: number,
                    approval: question.approval.clone(),
                    answer: tx,
                },
            );
            n
        };
        let sent = up.send(Up::Ask {
            n,
            rule: WireRule::from(&question.approval.rule),
            approval: Box::new(question.approval),
            digest: question.digest,
            places: (*question.places).clone(),
        });
        if sent.is_err() {
            self.lock().asks.remove(&n);
        }
        rx.await.unwrap_or_else(|_| {
            Asked::AtOnce(AtOnce::Unreachable {
                why: "the connection to it closed before it answered".into(),
            })
        })
    }

    /// Ends the mirror of `id` here with `resolution`; its approval if it was still held.
    fn end_here(&self, id: &str, resolution: Resolution) -> Option<PendingApproval> {
        let mirror = self.lock().held.remove(id)?;
        let _ = mirror.resolve.send(resolution);
        Some(mirror.approval)
    }
}

impl HeldCalls for RemoteHeldCalls {
    fn ask(&self, question: Question) -> BoxFuture<'_, Asked> {
        Box::pin(self.ask_keeper(question))
    }

    fn end(&self, id: &str, resolution: Resolution) {
        if self.end_here(id, resolution.clone()).is_some() {
            self.send(Up::End {
                id: id.to_owned(),
                resolution,
            });
        }
    }

    fn extend(&self, id: &str, by: Duration, max_hold: Duration) -> Result<Extended, DecideError> {
        let mut state = self.lock();
        let Some(mirror) = state.held.get_mut(id) else {
            return Err(DecideError::Unknown(id.to_owned()));
        };
        // The keeper clamps the same way and confirms with a deadline move.
        let extended = crate::approval::move_deadline(&mut mirror.approval, &mirror.deadline, by, max_hold);
        drop(state);
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self.send(Up::Extend {
            id: id.to_owned(),
            by_ms: ms(by),
            max_hold_ms: ms(max_hold),
        });
        Ok(extended)
    }

    fn pending(&self, id: &str) -> Option<PendingApproval> {
        self.lock().held.get(id).map(|m| m.approval.clone())
    }

    fn withdraw_session(&self, session: &str) {
        let ids: Vec<String> = self
            .lock()
            .held
            .iter()
            .filter(|(_, m)| m.approval.session == session)
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
        self.send(Up::WithdrawSession {
            session: session.to_owned(),
        });
    }

    fn withdraw_request(&self, session: &str, request_id: &str) -> bool {
        let id = self
            .lock()
            .held
            .iter()
            .find(|(_, m)| m.approval.session == session && m.approval.request_id == request_id)
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
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Applies what the keeper sends on link `number` until the link ends; then refuses what is
/// still waiting on it.
async fn dispatch(
    state: Arc<Mutex<State>>,
    number: u64,
    reader: impl std::future::Future<Output = ()>,
    mut down: mpsc::UnboundedReceiver<Down>,
) {
    let apply = async {
        while let Some(message) = down.recv().await {
            apply(&state, number, message);
        }
    };
    // The reader ends with the stream; the receiver then drains what it read.
    tokio::join!(reader, apply);
    let mut state = lock(&state);
    if state.up.as_ref().is_some_and(|(n, _)| *n == number) {
        state.up = None;
    }
    state.asks.retain(|_, w| w.link != number);
    let broken: Vec<String> = state
        .held
        .iter()
        .filter(|(_, m)| m.link == number)
        .map(|(id, _)| id.clone())
        .collect();
    for id in broken {
        if let Some(mirror) = state.held.remove(&id) {
            let _ = mirror.resolve.send(Resolution::Orphaned);
        }
    }
    tracing::info!(link = number, "keeper link closed");
}

fn apply(state: &Mutex<State>, number: u64, message: Down) {
    let mut state = lock(state);
    match message {
        Down::AtOnce { n, at_once } => {
            if let Some(waiting) = state.asks.remove(&n) {
                let _ = waiting.answer.send(Asked::AtOnce(at_once));
            }
        }
        Down::Held { n, id } => {
            let Some(waiting) = state.asks.remove(&n) else { return };
            let mut approval = waiting.approval;
            approval.id.clone_from(&id);
            let timeout = u64::try_from(approval.expires_at_ms.saturating_sub(approval.requested_at_ms)).unwrap_or(0);
            let (deadline, deadline_rx) = watch::channel(Duration::from_millis(timeout));
            let (resolve, resolution) = oneshot::channel();
            let ticket = Ticket {
                id: id.clone(),
                resolution,
                deadline: deadline_rx,
            };
            if waiting.answer.send(Asked::Held(ticket)).is_ok() {
                let mirror = Mirror {
                    link: number,
                    approval,
                    resolve,
                    deadline,
                };
                state.held.insert(id, mirror);
            } else if let Some((_, up)) = &state.up {
                // The call's waiter left while it was being asked: nobody will wait for it.
                let why = "the client left while the call was being asked".to_owned();
                let _ = up.send(Up::End {
                    id,
                    resolution: Resolution::Cancelled { why },
                });
            }
        }
        Down::Deadline {
            id,
            after_ms,
            expires_at_ms,
        } => {
            if let Some(mirror) = state.held.get_mut(&id) {
                mirror.approval.expires_at_ms = expires_at_ms;
                mirror.approval.expires_at = crate::clock::rfc3339(expires_at_ms);
                let _ = mirror.deadline.send(Duration::from_millis(after_ms));
            }
        }
        Down::Resolved { id, resolution } => {
            if let Some(mirror) = state.held.remove(&id) {
                let _ = mirror.resolve.send(resolution);
            }
        }
    }
}
