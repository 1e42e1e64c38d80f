//! Where a session's server-initiated messages go.

use std::collections::VecDeque;
use std::sync::Mutex;

use portcullis_wire::Message;
use tokio::sync::mpsc;

/// The open streams of a session, and where server-initiated messages go: requests to the newest
/// open request stream (they usually belong to the call in progress), notifications to the GET
/// stream; either falls back to the other, else waits in a bounded backlog.
#[derive(Default)]
pub struct Outlets {
    inner: Mutex<OutletsInner>,
}

#[derive(Default)]
struct OutletsInner {
    next: u64,
    post: Vec<(u64, mpsc::UnboundedSender<Message>)>,
    get: Option<mpsc::UnboundedSender<Message>>,
    backlog: VecDeque<Message>,
}

const BACKLOG: usize = 256;

impl Outlets {
    fn lock(&self) -> std::sync::MutexGuard<'_, OutletsInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn open_post(&self, tx: mpsc::UnboundedSender<Message>) -> u64 {
        let mut inner = self.lock();
        inner.next += 1;
        let id = inner.next;
        inner.post.push((id, tx));
        id
    }

    pub(super) fn close(&self, id: u64) {
        self.lock().post.retain(|(i, _)| *i != id);
    }

    pub(super) fn any_open(&self) -> bool {
        let inner = self.lock();
        inner.post.iter().any(|(_, tx)| !tx.is_closed()) || inner.get.as_ref().is_some_and(|tx| !tx.is_closed())
    }

    pub(super) fn open_get(&self) -> mpsc::UnboundedReceiver<Message> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        for msg in inner.backlog.drain(..) {
            let _ = tx.send(msg);
        }
        inner.get = Some(tx);
        rx
    }

    pub(super) fn deliver(&self, msg: Message, session: &str) {
        let mut inner = self.lock();
        inner.post.retain(|(_, tx)| !tx.is_closed());
        if inner.get.as_ref().is_some_and(mpsc::UnboundedSender::is_closed) {
            inner.get = None;
        }
        let newest_post = inner.post.last().map(|(_, tx)| tx.clone());
        let targets = if msg.is_request() {
            [newest_post, inner.get.clone()]
        } else {
            [inner.get.clone(), newest_post]
        };
        for tx in targets.into_iter().flatten() {
            if tx.send(msg.clone()).is_ok() {
                return;
            }
        }
        if inner.backlog.len() == BACKLOG {
            tracing::warn!(session, "no open stream for server messages; dropping the oldest");
            inner.backlog.pop_front();
        }
        inner.backlog.push_back(msg);
    }
}
