//! The keeper's side of a data plane's keeper link (`portcullis_gate::held_calls::link` is the
//! protocol; `portcullis_gate::held_calls::remote` the data plane's side): each question a
//! `connect` asks about a call it holds is asked of the keeper's broker, and the answer, the
//! deadline moves and the resolution go back down the link.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use portcullis_gate::held_calls::link::{read_lines, write_lines, Down, Up};
use portcullis_gate::held_calls::pending::PendingApproval;
use portcullis_gate::held_calls::{Asked, HeldCalls, Question, Resolution, Ticket};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What one data plane asked about, so it can end only that and its calls end with the link.
#[derive(Default)]
struct Mine {
    held: HashSet<String>,
    sessions: HashSet<String>,
}

/// The keeper's side of one link, after the hello: answers the data plane's questions through
/// `held` until the link closes, then withdraws what it still holds.
/// Records a held call whose data plane went away before it could (the keeper's audit).
pub(crate) type RecordWithdrawn =
    Arc<dyn Fn(PendingApproval, String) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

pub(crate) async fn serve<R, W>(held: Arc<dyn HeldCalls>, record: RecordWithdrawn, rd: R, buf: BytesMut, wr: W)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let _open = OpenLink::new();
    let (up_tx, mut up_rx) = mpsc::unbounded_channel::<Up>();
    let (down_tx, down_rx) = mpsc::unbounded_channel::<Down>();
    // Dropped with this future (the keeper stopping): nothing of the link outlives it.
    let _reader = AbortOnDrop(tokio::spawn(read_lines(rd, buf, up_tx)));
    let mut writer = AbortOnDrop(tokio::spawn(write_lines(wr, down_rx)));
    let mut follows = JoinSet::new();
    let mine = Arc::new(Mutex::new(Mine::default()));
    loop {
        tokio::select! {
            message = up_rx.recv() => match message {
                Some(message) => handle(&held, &mine, &down_tx, &mut follows, message).await,
                None => break,
            },
            Some(_) = follows.join_next(), if !follows.is_empty() => {}
        }
    }
    follows.abort_all();
    let sessions: Vec<String> = lock(&mine).sessions.drain().collect();
    let left: Vec<String> = lock(&mine).held.drain().collect();
    for id in left {
        let why = "the client's connection to Portcullis closed".to_owned();
        let approval = held.pending(&id);
        held.end(&id, Resolution::Cancelled { why: why.clone() });
        // Its gate (the data plane) is gone and cannot record the end: the keeper does.
        if let Some(approval) = approval {
            record(approval, why).await;
        }
    }
    // Its sessions leave the keeper's list, and their grants end.
    for session in sessions {
        held.withdraw_session(&session);
    }
    drop(down_tx);
    drop(follows);
    let _ = (&mut writer.0).await;
}

/// The keeper's open links, counted: when the last of a burst closes (200 `connect`s that came
/// and went), the memory their buffers took is given back, as when the last session ends.
struct OpenLink;

static OPEN_LINKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl OpenLink {
    fn new() -> Self {
        OPEN_LINKS.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self
    }
}

impl Drop for OpenLink {
    fn drop(&mut self) {
        if OPEN_LINKS.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
            portcullis_gate::allocator::release_free_memory();
        }
    }
}

/// A task that ends when its handle drops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn lock(mine: &Mutex<Mine>) -> std::sync::MutexGuard<'_, Mine> {
    mine.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn handle(
    held: &Arc<dyn HeldCalls>,
    mine: &Arc<Mutex<Mine>>,
    down: &mpsc::UnboundedSender<Down>,
    follows: &mut JoinSet<()>,
    message: Up,
) {
    match message {
        Up::Ask {
            n,
            mut approval,
            rule,
            digest,
            places,
        } => {
            approval.rule = rule.into();
            lock(mine).sessions.insert(approval.session.clone());
            let question = Question {
                approval: *approval,
                digest,
                places: Arc::new(places),
            };
            match held.ask(question).await {
                Asked::AtOnce(at_once) => {
                    let _ = down.send(Down::AtOnce { n, at_once });
                }
                Asked::Held(ticket) => {
                    lock(mine).held.insert(ticket.id.clone());
                    let _ = down.send(Down::Held {
                        n,
                        id: ticket.id.clone(),
                    });
                    follows.spawn(follow(held.clone(), mine.clone(), down.clone(), ticket));
                }
            }
        }
        Up::End { id, resolution } => {
            if lock(mine).held.contains(&id) {
                held.end(&id, resolution);
            }
        }
        Up::Extend { id, by_ms, max_hold_ms } => {
            if lock(mine).held.contains(&id) {
                let by = Duration::from_millis(by_ms);
                if let Err(e) = held.extend(&id, by, Duration::from_millis(max_hold_ms)) {
                    tracing::debug!(id, error = %e, "keeper link: extension refused");
                }
            }
        }
        Up::WithdrawSession { session } => {
            if lock(mine).sessions.remove(&session) {
                held.withdraw_session(&session);
            }
        }
        Up::Announce { session } => {
            lock(mine).sessions.insert(session.session.clone());
            held.announce(session);
        }
    }
}

/// Passes a held call's deadline moves and its resolution to the data plane.
async fn follow(held: Arc<dyn HeldCalls>, mine: Arc<Mutex<Mine>>, down: mpsc::UnboundedSender<Down>, ticket: Ticket) {
    let Ticket {
        id,
        mut resolution,
        mut deadline,
    } = ticket;
    let resolution = loop {
        tokio::select! {
            biased;
            r = &mut resolution => break r.unwrap_or(Resolution::Orphaned),
            Ok(()) = deadline.changed() => {
                let after = *deadline.borrow_and_update();
                let expires_at_ms = held.pending(&id).map_or(0, |p| p.expires_at_ms);
                let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
                let _ = down.send(Down::Deadline { id: id.clone(), after_ms, expires_at_ms });
            }
        }
    };
    lock(&mine).held.remove(&id);
    let _ = down.send(Down::Resolved { id, resolution });
}

#[cfg(test)]
mod link_tests;
