//! Held 2026-era calls that a re-issued request can join (DESIGN §5, MCP.md "Progress,
//! cancellation, tasks").
//!
//! 2026-07-28 removed stream resumability: a client whose response stream broke re-issues the
//! request under a new id. For a call held for a person that would raise a second prompt, so a
//! held call whose stream closed waits a short grace ([`GRACE`]) for its re-issue — same caller, server,
//! tool and argument digest — before it counts as cancelled. The re-issued request takes over:
//! the decision, and the forwarded call's answer, go to it under its own id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use portcullis_wire::{Message, RequestId};
use tokio::sync::Notify;

use super::in_flight::Ticket;
use crate::queue;

/// How long a held call whose stream closed waits to be re-issued before it is withdrawn. On the
/// wire a broken stream and a cancel look the same (closing the stream is how a 2026 client
/// cancels), so this is short: long enough for an SDK to reconnect and re-issue at once, short
/// enough that a cancelled call's prompt goes away while the person still remembers it.
pub(super) const GRACE: Duration = Duration::from_secs(3);

/// What identifies a held call for its re-issue: caller, tool and argument digest (the session
/// is the server's).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub caller: String,
    pub tool: String,
    pub digest: String,
}

/// The request a held call answers: the first, or the latest re-issue.
pub(super) struct Waiter {
    pub msg: Message,
    pub id: RequestId,
    pub tx: queue::Sender<Message>,
    pub ticket: Option<Ticket>,
}

/// One held call that can be re-attached.
pub(super) struct Slot {
    waiter: Mutex<Waiter>,
    rejoined: Notify,
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiter> {
        self.waiter.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Completes when nobody has waited for the call for [`GRACE`]: its stream closed and no
    /// re-issue came. Each re-issue starts the watch again on the new stream.
    pub(super) async fn abandoned(&self) {
        loop {
            let tx = self.lock().tx.clone();
            tx.closed().await;
            tokio::select! {
                () = self.rejoined.notified() => {}
                () = tokio::time::sleep(GRACE) => {
                    if self.lock().tx.is_closed() {
                        return;
                    }
                }
            }
        }
    }
}

#[derive(Default)]
pub(super) struct Reattach {
    map: Mutex<HashMap<Key, Arc<Slot>>>,
}

impl Reattach {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<Slot>>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a held call; `None` when an identical one is already held (then this one is
    /// held on its own and cannot be joined).
    pub(super) fn register(&self, key: Key, waiter: Waiter) -> Result<Arc<Slot>, Box<Waiter>> {
        let mut map = self.lock();
        if map.contains_key(&key) {
            return Err(Box::new(waiter));
        }
        let slot = Arc::new(Slot {
            waiter: Mutex::new(waiter),
            rejoined: Notify::new(),
        });
        map.insert(key, slot.clone());
        Ok(slot)
    }

    /// A re-issued call joins the held one with `key` whose stream closed. `Err` gives the
    /// request back: nothing to join (none held, or its stream is still open).
    pub(super) fn join(&self, key: &Key, waiter: Waiter) -> Result<(), Box<Waiter>> {
        let map = self.lock();
        let Some(slot) = map.get(key) else {
            return Err(Box::new(waiter));
        };
        let mut current = slot.lock();
        if !current.tx.is_closed() {
            return Err(Box::new(waiter));
        }
        // In the re-issued request's span, which names its id; the tool is known here first.
        tracing::Span::current().record("tool", key.tool.as_str());
        tracing::info!("re-issued held call joined its pending approval");
        *current = waiter;
        drop(current);
        slot.rejoined.notify_one();
        Ok(())
    }

    /// The held call ended: no more joins; the request to answer is the latest waiter.
    pub(super) fn finish(&self, key: &Key, slot: Arc<Slot>) -> Waiter {
        self.lock().remove(key);
        match Arc::try_unwrap(slot) {
            Ok(slot) => slot
                .waiter
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            // Unreachable (the map held the only other reference); keep the latest waiter anyway.
            Err(slot) => {
                let mut w = slot.lock();
                let (tx, rx) = queue::client_stream("finished held call");
                drop(rx);
                Waiter {
                    msg: w.msg.clone(),
                    id: w.id.clone(),
                    tx: std::mem::replace(&mut w.tx, tx),
                    ticket: w.ticket.take(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key {
            caller: "stateless:agent/1".into(),
            tool: "echo".into(),
            digest: "d".into(),
        }
    }

    fn waiter(id: u64) -> (Waiter, queue::Receiver<Message>) {
        let (tx, rx) = queue::client_stream("test");
        let msg = Message::parse(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#
        ))
        .unwrap();
        let waiter = Waiter {
            msg,
            id: RequestId::number(id),
            tx,
            ticket: None,
        };
        (waiter, rx)
    }

    #[test]
    fn a_reissue_joins_only_a_held_call_whose_stream_closed_and_answers_in_its_place() {
        let table = Reattach::default();
        let (first, first_rx) = waiter(1);
        let slot = table.register(key(), first).map_err(|_| ()).expect("registered");
        let (second, _second_rx) = waiter(2);
        let Err(second) = table.join(&key(), second) else {
            panic!("the first stream is still open: no join");
        };
        let (twin, _twin_rx) = waiter(9);
        assert!(
            table.register(key(), twin).is_err(),
            "an identical held call cannot be registered twice"
        );
        drop(first_rx); // the first stream breaks
        assert!(table.join(&key(), *second).is_ok(), "the re-issue joins");
        let (third, _rx3) = waiter(3);
        assert!(
            table.join(&key(), third).is_err(),
            "the re-issued stream is open: no second join"
        );
        let latest = table.finish(&key(), slot);
        assert_eq!(
            latest.id,
            RequestId::number(2),
            "the decision answers the re-issued request"
        );
        let (late, _rx4) = waiter(4);
        assert!(table.join(&key(), late).is_err(), "nothing to join once the hold ended");
    }
}
