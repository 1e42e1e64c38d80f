//! Where a session's server-initiated messages go.

use std::collections::VecDeque;
use std::sync::Mutex;

use portcullis_wire::Message;

use crate::queue::{self, Weighed};

/// The open streams of a session, and where server-initiated messages go: requests to the newest
/// open request stream (they usually belong to the call in progress), notifications to the GET
/// stream; either falls back to the other, else waits in a bounded backlog.
#[derive(Default)]
pub(super) struct Outlets {
    inner: Mutex<OutletsInner>,
}

#[derive(Default)]
struct OutletsInner {
    next: u64,
    post: Vec<(u64, queue::Sender<Message>)>,
    get: Option<queue::Sender<Message>>,
    backlog: Backlog,
}

/// Messages waiting for a stream to open. Bounded in count (a client that never opens its GET
/// stream must not pile up notifications) and in bytes (256 large ones would be 4 GiB); the byte
/// bound still fits the largest message. Full: the oldest go, since the newest matter more to a
/// client that comes back (the latest progress, the pending request).
const BACKLOG_MESSAGES: usize = 256;
const BACKLOG_BYTES: usize = 2 * portcullis_wire::MAX_MESSAGE;

#[derive(Default)]
struct Backlog {
    queue: VecDeque<Message>,
    bytes: usize,
    /// Dropped since the backlog last drained: warned about once, reported in total then.
    dropped: usize,
}

impl Backlog {
    fn push(&mut self, msg: Message, session: &str) {
        let weight = msg.weight();
        while !self.queue.is_empty() && (self.queue.len() >= BACKLOG_MESSAGES || self.bytes + weight > BACKLOG_BYTES) {
            if let Some(old) = self.queue.pop_front() {
                self.bytes -= old.weight();
            }
            if self.dropped == 0 {
                tracing::warn!(
                    session,
                    "no open stream for server messages and the backlog is full \
                     ({BACKLOG_MESSAGES} messages / {BACKLOG_BYTES} bytes); dropping the oldest"
                );
            }
            self.dropped += 1;
        }
        self.bytes += weight;
        self.queue.push_back(msg);
    }

    fn drain_into(&mut self, tx: &queue::Sender<Message>, session: &str) {
        if self.dropped > 0 {
            tracing::warn!(
                session,
                dropped = self.dropped,
                "server messages dropped while no stream was open"
            );
        }
        self.dropped = 0;
        self.bytes = 0;
        for msg in self.queue.drain(..) {
            // The backlog fits a fresh stream's budget; a refusal here means it already ended.
            if tx.send(msg).is_err() {
                break;
            }
        }
        self.queue.clear();
    }
}

impl Outlets {
    fn lock(&self) -> std::sync::MutexGuard<'_, OutletsInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn open_post(&self, tx: queue::Sender<Message>) -> u64 {
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

    pub(super) fn open_get(&self, session: &str) -> queue::Receiver<Message> {
        let (tx, rx) = queue::client_stream("session GET stream");
        let mut inner = self.lock();
        inner.backlog.drain_into(&tx, session);
        inner.get = Some(tx);
        rx
    }

    /// Hands `msg` to a stream without waiting. A stream whose client stopped reading ends
    /// itself (see [`queue::Overflow::End`]) and the message tries the next one.
    pub(super) fn deliver(&self, msg: Message, session: &str) {
        let mut inner = self.lock();
        inner.post.retain(|(_, tx)| !tx.is_closed());
        if inner.get.as_ref().is_some_and(queue::Sender::is_closed) {
            inner.get = None;
        }
        let newest_post = inner.post.last().map(|(_, tx)| tx.clone());
        let targets = if msg.is_request() {
            [newest_post, inner.get.clone()]
        } else {
            [inner.get.clone(), newest_post]
        };
        let mut msg = msg;
        for tx in targets.into_iter().flatten() {
            match tx.send(msg) {
                Ok(()) => return,
                Err(queue::SendError::Full(m) | queue::SendError::Closed(m)) => msg = m,
            }
        }
        inner.backlog.push(msg, session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(len: usize) -> Message {
        let text = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
            "x".repeat(len)
        );
        Message::parse(text).unwrap()
    }

    #[test]
    fn the_backlog_is_bounded_in_count_and_bytes_dropping_the_oldest() {
        let outlets = Outlets::default();
        for _ in 0..BACKLOG_MESSAGES + 10 {
            outlets.deliver(note(10), "s");
        }
        assert_eq!(outlets.lock().backlog.queue.len(), BACKLOG_MESSAGES);
        assert_eq!(outlets.lock().backlog.dropped, 10);
        let big = portcullis_wire::MAX_MESSAGE - 100;
        outlets.deliver(note(big), "s");
        outlets.deliver(note(big), "s");
        outlets.deliver(note(big), "s");
        let inner = outlets.lock();
        assert!(inner.backlog.bytes <= BACKLOG_BYTES, "{}", inner.backlog.bytes);
        assert_eq!(inner.backlog.queue.len(), 2, "the two newest large messages fit");
        assert_eq!(
            inner.backlog.bytes,
            inner.backlog.queue.iter().map(Weighed::weight).sum::<usize>()
        );
    }
}
