//! Fire-and-forget outcomes waiting for a transaction to ride in.
//!
//! Why not the writer's channel: a forwarded call's outcome is recorded on its answer's path,
//! and a channel send wakes the writer thread (a futex wake on the other CPU, ~20 µs inside the
//! syscall on a VM) only for it to set the outcome aside for the next transaction. Here the
//! caller pushes under a short lock and wakes nobody. The outcomes leave with the next decision's
//! transaction (wherever that commits), or with the writer thread's tick once they have waited
//! [`crate::writer::COALESCE_WAIT`]. Only when the writer thread sleeps with no deadline at all
//! (idle, nothing to tick for) does a post wake it, once.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

pub(crate) struct Mailbox<T> {
    slots: Mutex<Slots<T>>,
}

struct Slots<T> {
    items: Vec<T>,
    /// When the oldest waiting item was posted.
    since: Option<Instant>,
    /// The writer thread waits for its channel with no deadline: a post must wake it.
    asleep: bool,
    /// The writer thread has stopped: nothing posted now would be written.
    closed: bool,
}

/// What became of a post.
pub(crate) enum Posted<T> {
    /// Waiting; someone will commit it within the bound.
    Queued,
    /// Waiting, and the writer thread sleeps with no deadline: the poster must wake it.
    WakeWriter,
    /// The writer has stopped; the item is handed back.
    Closed(T),
}

impl<T> Mailbox<T> {
    pub(crate) fn new() -> Self {
        Mailbox {
            slots: Mutex::new(Slots {
                items: Vec::new(),
                since: None,
                asleep: false,
                closed: false,
            }),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Slots<T>> {
        // Nothing between lock and unlock can panic half-way through an update.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn post(&self, item: T) -> Posted<T> {
        let mut slots = self.slots();
        if slots.closed {
            return Posted::Closed(item);
        }
        if slots.items.is_empty() {
            slots.since = Some(Instant::now());
        }
        slots.items.push(item);
        if std::mem::take(&mut slots.asleep) {
            Posted::WakeWriter
        } else {
            Posted::Queued
        }
    }

    /// Everything waiting, oldest first.
    pub(crate) fn take(&self) -> Vec<T> {
        let mut slots = self.slots();
        slots.since = None;
        std::mem::take(&mut slots.items)
    }

    /// Everything waiting if the oldest has waited `at_least`; else nothing.
    pub(crate) fn take_if_waited(&self, at_least: Duration) -> Vec<T> {
        let mut slots = self.slots();
        if slots.since.is_some_and(|since| since.elapsed() >= at_least) {
            slots.since = None;
            std::mem::take(&mut slots.items)
        } else {
            Vec::new()
        }
    }

    /// Returns items taken by [`take`](Self::take) that could not be written after all, ahead of
    /// anything posted since.
    pub(crate) fn put_back(&self, mut items: Vec<T>, since: Instant) {
        if items.is_empty() {
            return;
        }
        let mut slots = self.slots();
        items.append(&mut slots.items);
        slots.items = items;
        slots.since = Some(slots.since.map_or(since, |s| s.min(since)));
    }

    /// The writer thread sleeps with no deadline; for tests.
    #[cfg(test)]
    pub(crate) fn is_asleep(&self) -> bool {
        self.slots().asleep
    }

    /// The writer thread is about to wait with no deadline: from now on a post wakes it. Refused
    /// (false) while something waits, which the thread must tick for instead.
    pub(crate) fn sleep(&self) -> bool {
        let mut slots = self.slots();
        slots.asleep = slots.items.is_empty();
        slots.asleep
    }

    /// The writer thread is awake again (a command came): posts need not wake it.
    pub(crate) fn awake(&self) {
        self.slots().asleep = false;
    }

    /// The writer thread stops: later posts are refused, and what waits is handed over.
    pub(crate) fn close(&self) -> Vec<T> {
        let mut slots = self.slots();
        slots.closed = true;
        slots.since = None;
        std::mem::take(&mut slots.items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_wakes_the_writer_only_when_it_sleeps_without_a_deadline() {
        let mailbox = Mailbox::new();
        assert!(matches!(mailbox.post(1), Posted::Queued));
        assert!(!mailbox.sleep(), "must not sleep while something waits");
        assert_eq!(mailbox.take(), vec![1]);
        assert!(mailbox.sleep());
        assert!(matches!(mailbox.post(2), Posted::WakeWriter));
        assert!(matches!(mailbox.post(3), Posted::Queued), "one wake is enough");
        mailbox.awake();
        assert_eq!(mailbox.close(), vec![2, 3]);
        assert!(matches!(mailbox.post(4), Posted::Closed(4)));
    }

    #[test]
    fn put_back_keeps_the_order_and_the_oldest_time() {
        let mailbox = Mailbox::new();
        let before = Instant::now();
        mailbox.post(1);
        let taken = mailbox.take();
        mailbox.post(2);
        mailbox.put_back(taken, before);
        assert!(mailbox.take_if_waited(Duration::from_secs(3600)).is_empty());
        assert_eq!(mailbox.take_if_waited(Duration::ZERO), vec![1, 2]);
        assert!(mailbox.take().is_empty());
    }
}
