//! The one queue type between the gateway's tasks: an mpsc channel bounded in bytes and in count.
//!
//! Tokio's bounded channel counts messages only, and waiting for room would stall the sender —
//! the upstream reader task, which serves every client of a shared connection. So sending here
//! never waits: a message over the budget is refused at once. What a refusal means is the
//! queue's [`Overflow`] choice: a stream to a client that does not read is ended (buffering for
//! it would only grow), a queue whose consumer is merely slow drops the one message.
//!
//! Accounting: the sender adds a message's length (and one to the count) to a shared atomic
//! budget before it enters the channel; the receiver gives both back when it takes the message
//! out. A message's weight is its own bytes: lines read from a pipe share read buffers (64 KiB
//! blocks), so a queue of consecutive messages pins about its weight, a sparse one a little more.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use portcullis_wire::Message;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a queue holds must say how many bytes it keeps alive.
pub trait Weighed {
    fn weight(&self) -> usize;
}

impl Weighed for Message {
    fn weight(&self) -> usize {
        self.bytes().len()
    }
}

impl Weighed for Bytes {
    fn weight(&self) -> usize {
        self.len()
    }
}

/// How much a queue may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub bytes: usize,
    pub messages: usize,
}

impl Budget {
    /// A budget that holds at least one message of the largest size the gateway reads
    /// ([`portcullis_wire::MAX_MESSAGE`]) and at least one message: a smaller one would refuse a
    /// legitimate message into an empty queue.
    pub fn new(bytes: usize, messages: usize) -> Self {
        Self {
            bytes: bytes.max(portcullis_wire::MAX_MESSAGE),
            messages: messages.max(1),
        }
    }
}

/// The default for every stream: two largest messages, or 4,096 small ones (a burst of progress
/// and log notifications), whichever comes first. A client or task that reads at all drains far
/// faster than a server can fill this; only one that stopped reading reaches it.
pub const STREAM_BUDGET: Budget = Budget {
    bytes: portcullis_config::config::DEFAULT_STREAM_BUFFER_BYTES,
    messages: 4096,
};

/// The bytes of [`STREAM_BUDGET`] in force: `limits.stream_buffer_bytes`, set once when the
/// gateway opens. Process-wide because every queue of the one gateway shares it, and threading
/// it through every transport's constructor would buy nothing.
static STREAM_BYTES: AtomicUsize = AtomicUsize::new(STREAM_BUDGET.bytes);

/// Sets the byte budget of every stream made from now on (`limits.stream_buffer_bytes`).
pub fn set_stream_bytes(bytes: usize) {
    STREAM_BYTES.store(bytes, Ordering::Relaxed);
}

/// [`STREAM_BUDGET`] with the configured bytes.
pub fn stream_budget() -> Budget {
    Budget::new(STREAM_BYTES.load(Ordering::Relaxed), STREAM_BUDGET.messages)
}

/// What a full queue does with the message that did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// The consumer is not reading: end the queue (the receiver sees its end at once, senders see
    /// it closed). For streams to clients.
    End,
    /// Refuse this message only; the queue goes on. For a consumer that is slow, not gone.
    Refuse,
}

#[derive(Debug, PartialEq, Eq)]
pub enum SendError<T> {
    /// Over the budget.
    Full(T),
    /// The receiver is gone or the queue was ended.
    Closed(T),
}

struct Shared {
    bytes: AtomicUsize,
    messages: AtomicUsize,
    budget: Budget,
    overflow: Overflow,
    /// Cancelled when the queue is ended for overflow.
    ended: CancellationToken,
    /// Names the queue in the log line.
    label: &'static str,
}

impl Shared {
    /// Takes room for one message of `weight` bytes, or refuses without taking any.
    fn reserve(&self, weight: usize) -> bool {
        let took_slot = self
            .messages
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.budget.messages).then_some(n + 1)
            })
            .is_ok();
        if !took_slot {
            return false;
        }
        let took_bytes = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                b.checked_add(weight).filter(|&total| total <= self.budget.bytes)
            })
            .is_ok();
        if !took_bytes {
            self.messages.fetch_sub(1, Ordering::AcqRel);
        }
        took_bytes
    }

    fn release(&self, weight: usize) {
        self.messages.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(weight, Ordering::AcqRel);
    }
}

pub struct Sender<T> {
    tx: mpsc::UnboundedSender<T>,
    shared: Arc<Shared>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            shared: self.shared.clone(),
        }
    }
}

pub struct Receiver<T> {
    rx: mpsc::UnboundedReceiver<T>,
    shared: Arc<Shared>,
}

/// A queue of at most `budget`, named `label` in its log lines.
pub fn bounded<T: Weighed>(label: &'static str, budget: Budget, overflow: Overflow) -> (Sender<T>, Receiver<T>) {
    // Unbounded underneath because `budget` bounds it: every send is checked against the shared
    // budget first (tokio's own bound would make the sender wait, see the module docs).
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        bytes: AtomicUsize::new(0),
        messages: AtomicUsize::new(0),
        budget: Budget::new(budget.bytes, budget.messages),
        overflow,
        ended: CancellationToken::new(),
        label,
    });
    (
        Sender {
            tx,
            shared: shared.clone(),
        },
        Receiver { rx, shared },
    )
}

/// A stream to a client, [`STREAM_BUDGET`], ended when the client stops reading.
pub fn client_stream<T: Weighed>(label: &'static str) -> (Sender<T>, Receiver<T>) {
    bounded(label, stream_budget(), Overflow::End)
}

/// The messages an upstream sends about one request. The consumer (the session) only moves them
/// on without waiting, so a full exchange means its client stream stalled: end it.
pub fn exchange<T: Weighed>() -> (Sender<T>, Receiver<T>) {
    bounded("upstream exchange", stream_budget(), Overflow::End)
}

/// Server-initiated messages from an upstream to whoever serves them (a session's pump, which
/// hands them on without waiting; the monitor). Shared by every request of the connection, so
/// one message is dropped when full, never the whole channel.
pub fn upstream_events<T: Weighed>() -> (Sender<T>, Receiver<T>) {
    bounded("upstream events", stream_budget(), Overflow::Refuse)
}

impl<T: Weighed> Sender<T> {
    /// Queues `msg` without waiting, or refuses it (see [`Overflow`]).
    pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
        if self.is_closed() {
            return Err(SendError::Closed(msg));
        }
        let weight = msg.weight();
        if !self.shared.reserve(weight) {
            self.refuse(weight);
            return Err(SendError::Full(msg));
        }
        self.tx.send(msg).map_err(|e| {
            self.shared.release(weight);
            SendError::Closed(e.0)
        })
    }

    fn refuse(&self, weight: usize) {
        let s = &self.shared;
        let (held, count) = (s.bytes.load(Ordering::Acquire), s.messages.load(Ordering::Acquire));
        match s.overflow {
            Overflow::End => {
                s.ended.cancel();
                tracing::warn!(
                    queue = s.label,
                    held_bytes = held,
                    held_messages = count,
                    "the reader of this stream is not reading ({held} bytes / {count} messages waiting, \
                     budget {} bytes / {} messages); ended it rather than buffer more",
                    s.budget.bytes,
                    s.budget.messages
                );
            }
            Overflow::Refuse => tracing::warn!(
                queue = s.label,
                weight,
                held_bytes = held,
                held_messages = count,
                "queue full; one message of {weight} bytes dropped"
            ),
        }
    }

    /// The receiver is gone, or the queue was ended for overflow.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.shared.ended.is_cancelled()
    }

    /// Completes when [`is_closed`](Self::is_closed) becomes true.
    pub async fn closed(&self) {
        tokio::select! {
            () = self.tx.closed() => {}
            () = self.shared.ended.cancelled() => {}
        }
    }

    /// The queue was ended because its reader stopped reading (not merely dropped).
    pub fn overflowed(&self) -> bool {
        self.shared.ended.is_cancelled()
    }

    /// Bytes waiting (for tests and status).
    pub fn held_bytes(&self) -> usize {
        self.shared.bytes.load(Ordering::Acquire)
    }
}

impl<T: Weighed> Receiver<T> {
    /// The next message, giving its room back; `None` when every sender is gone or the queue
    /// was ended for overflow (what was still queued is dropped with the receiver).
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if self.shared.ended.is_cancelled() {
            return Poll::Ready(None);
        }
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(msg)) = &polled {
            self.shared.release(msg.weight());
        }
        polled
    }
}

/// Streaming the queue as a response body.
impl<T: Weighed> futures::Stream for Receiver<T> {
    type Item = T;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    fn chunk(len: usize) -> Bytes {
        Bytes::from(vec![b'x'; len])
    }

    #[test]
    fn a_budget_always_fits_one_largest_message() {
        let b = Budget::new(10, 0);
        assert_eq!(b.bytes, portcullis_wire::MAX_MESSAGE);
        assert_eq!(b.messages, 1);
        let (tx, _rx) = bounded::<Bytes>("t", Budget::new(0, 1), Overflow::Refuse);
        assert!(tx.send(chunk(portcullis_wire::MAX_MESSAGE)).is_ok());
    }

    #[tokio::test]
    async fn bytes_are_bounded_and_given_back_on_recv() {
        let (tx, mut rx) = bounded::<Bytes>("t", Budget::new(16 * MIB, 100), Overflow::Refuse);
        tx.send(chunk(10 * MIB)).unwrap();
        assert!(
            matches!(tx.send(chunk(7 * MIB)), Err(SendError::Full(_))),
            "over the bytes"
        );
        tx.send(chunk(6 * MIB)).unwrap();
        assert_eq!(tx.held_bytes(), 16 * MIB);
        assert_eq!(rx.recv().await.unwrap().len(), 10 * MIB);
        assert_eq!(tx.held_bytes(), 6 * MIB, "recv gave the bytes back");
        tx.send(chunk(7 * MIB)).unwrap();
        assert!(!tx.is_closed(), "Refuse keeps the queue open");
    }

    #[tokio::test]
    async fn count_is_bounded_and_given_back_on_recv() {
        let (tx, mut rx) = bounded::<Bytes>("t", Budget::new(0, 3), Overflow::Refuse);
        for _ in 0..3 {
            tx.send(chunk(1)).unwrap();
        }
        assert!(matches!(tx.send(chunk(1)), Err(SendError::Full(_))), "over the count");
        assert_eq!(tx.held_bytes(), 3, "a refused message takes no room");
        rx.recv().await.unwrap();
        tx.send(chunk(1)).unwrap();
    }

    #[tokio::test]
    async fn an_end_queue_ends_for_its_receiver_and_closes_for_senders() {
        let (tx, mut rx) = bounded::<Bytes>("t", Budget::new(0, 2), Overflow::End);
        let other = tx.clone();
        tx.send(chunk(1)).unwrap();
        tx.send(chunk(1)).unwrap();
        assert!(matches!(tx.send(chunk(1)), Err(SendError::Full(_))));
        assert!(other.is_closed(), "every sender sees the end");
        tokio::time::timeout(std::time::Duration::from_secs(5), other.closed())
            .await
            .expect("closed() completes once ended");
        assert!(rx.recv().await.is_none(), "the receiver ends without draining");
        assert!(matches!(other.send(chunk(1)), Err(SendError::Closed(_))));
    }

    #[tokio::test]
    async fn a_dropped_receiver_closes_the_queue() {
        let (tx, rx) = client_stream::<Bytes>("t");
        drop(rx);
        assert!(tx.is_closed());
        assert!(matches!(tx.send(chunk(1)), Err(SendError::Closed(_))));
        assert_eq!(tx.held_bytes(), 0, "a message refused as closed gives its room back");
    }
}
