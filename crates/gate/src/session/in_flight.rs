//! The requests a session has in flight, per sender, so that answers and cancels cannot cross.
//!
//! JSON-RPC ids are chosen by the sender and scoped to it. The gateway tracks every request from
//! the moment it arrives (held calls included) until it is answered or given up, keyed by
//! (sender, id) with ids compared by value:
//! - a second request with an id its sender already has in flight is refused — the server could
//!   not tell the two answers apart, and neither could the client;
//! - a cancel counts only for a request of the same sender that is in flight now: a cancel sent
//!   before its request, or naming another sender's request, changes nothing;
//! - the entry knows the id the request has on the wire (remapped on shared upstreams), so a
//!   cancel reaches the server under that id and never names another client's request.
//!
//! A sender is the session itself for a legacy client (one client, one id space), the relay for
//! `portcullis connect`; a stateless HTTP client has no identity the gateway can trust (its
//! clientInfo is self-reported), so its requests are not tracked here: each has its own response
//! stream, and closing that stream is how it cancels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use portcullis_wire::{Message, RequestId};
use tokio_util::sync::CancellationToken;

/// Requests one session may have in flight at once. Far above what a client does (SDKs send a
/// few at a time); a bound so that a client that never reads its answers cannot grow the map.
const MAX_IN_FLIGHT: usize = 4096;

#[derive(Default)]
pub(super) struct InFlight {
    map: Mutex<HashMap<(Arc<str>, RequestId), Entry>>,
}

#[derive(Default)]
struct Entry {
    /// Cancelled when the sender cancels the request; whoever waits for its answer stops.
    cancelled: CancellationToken,
    /// The request's id on the wire, once it was sent upstream.
    wire_id: Option<RequestId>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Refused {
    #[error("request id {0} is already in flight on this session; a second request with the same id would get crossed answers")]
    Duplicate(RequestId),
    #[error("{MAX_IN_FLIGHT} requests are already in flight on this session")]
    Full,
}

/// One tracked request; dropping it ends the tracking (answered, refused or given up).
pub(super) struct Ticket {
    table: Arc<InFlight>,
    key: (Arc<str>, RequestId),
    cancelled: CancellationToken,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Arc<str>, RequestId), Entry>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts tracking `id` from `sender`.
    pub(super) fn begin(self: &Arc<Self>, sender: &Arc<str>, id: &RequestId) -> Result<Ticket, Refused> {
        let key = (sender.clone(), id.clone());
        let mut map = self.lock();
        if map.contains_key(&key) {
            return Err(Refused::Duplicate(id.clone()));
        }
        if map.len() >= MAX_IN_FLIGHT {
            return Err(Refused::Full);
        }
        let entry = Entry::default();
        let cancelled = entry.cancelled.clone();
        map.insert(key.clone(), entry);
        Ok(Ticket {
            table: self.clone(),
            key,
            cancelled,
        })
    }

    /// The sender cancelled `id`. `None`: no such request in flight, the cancel counts for
    /// nothing; else the id to name upstream, when the request was sent there.
    pub(super) fn cancel(&self, sender: &Arc<str>, id: &RequestId) -> Option<Option<RequestId>> {
        let map = self.lock();
        let entry = map.get(&(sender.clone(), id.clone()))?;
        entry.cancelled.cancel();
        Some(entry.wire_id.clone())
    }
}

impl Ticket {
    /// The request went upstream under `wire_id`.
    pub(super) fn sent_as(&self, wire_id: &RequestId) {
        if let Some(entry) = self.table.lock().get_mut(&self.key) {
            entry.wire_id = Some(wire_id.clone());
        }
    }

    /// Whether the sender cancelled the request.
    pub(super) fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// Fires when the sender cancels the request (a clone: it outlives the ticket).
    pub(super) fn cancellation(&self) -> CancellationToken {
        self.cancelled.clone()
    }
}

/// The one rule for answers: a request its sender cancelled gets none (MCP: "the receiver …
/// SHOULD NOT send a response for the cancelled request"), whoever produced the answer — the
/// server, a refusal, a timeout, an upstream that went away or a session that closed. Every
/// answer to a tracked request passes here, and its ticket ends here.
pub(super) fn answer(ticket: Option<Ticket>, msg: Message) -> Option<Message> {
    match ticket {
        Some(ticket) if ticket.is_cancelled() => None,
        _ => Some(msg),
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.table.lock().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> RequestId {
        RequestId::number(n)
    }

    #[test]
    fn a_second_request_with_the_same_id_from_the_same_sender_is_refused() {
        let table = Arc::new(InFlight::default());
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        let first = table.begin(&a, &id(1)).unwrap();
        assert_eq!(table.begin(&a, &id(1)).err(), Some(Refused::Duplicate(id(1))));
        let _other_sender = table.begin(&b, &id(1)).expect("ids are scoped per sender");
        drop(first);
        let _again = table.begin(&a, &id(1)).expect("free once answered");
    }

    #[test]
    fn a_cancel_counts_only_for_its_own_senders_request_in_flight() {
        let table = Arc::new(InFlight::default());
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        assert_eq!(table.cancel(&a, &id(7)), None, "a cancel before its request");
        let ticket = table.begin(&a, &id(7)).unwrap();
        assert!(!ticket.is_cancelled(), "the early cancel was not kept");
        assert_eq!(table.cancel(&b, &id(7)), None, "another sender's cancel");
        assert!(!ticket.is_cancelled());
        ticket.sent_as(&id(900));
        assert_eq!(table.cancel(&a, &id(7)), Some(Some(id(900))), "named by its wire id");
        assert!(ticket.is_cancelled());
    }
}
