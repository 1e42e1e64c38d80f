//! Rows that other processes commit to the audit (every `connect` is a data plane with its own
//! gate) announced on the keeper's event channel as `AuditAppended`, so the audit viewer and
//! `GET /control/events` follow calls decided outside the keeper. The keeper's own rows are
//! announced by its gate as they are committed; this only fills in the others'.
//!
//! It polls the newest rows every [`EVERY`] on a thread of its own (a read on the WAL database,
//! no lock on writers). A burst of more than [`NEWEST`] rows between two polls is announced in
//! part: the viewer refreshes on any announcement, so it still shows every row.

use std::sync::Arc;
use std::time::Duration;

use portcullis_audit::{AuditFilter, AuditStore};

use crate::events::GatewayEvent;
use crate::Gateway;

const EVERY: Duration = Duration::from_millis(250);
const NEWEST: usize = 512;

/// Follows the audit until the gateway stops.
pub(super) fn start(gateway: &Arc<Gateway>) {
    let Ok(store) = gateway.gate.audit_store() else {
        tracing::warn!("the audit could not be opened for reading: other processes' rows are not announced");
        return;
    };
    let (gate, events, stopping) = (gateway.gate.clone(), gateway.events.clone(), gateway.stopping.clone());
    let mut last = newest_id(&store).unwrap_or(0);
    let started = std::thread::Builder::new().name("audit-follow".into()).spawn(move || {
        while !stopping.is_cancelled() {
            std::thread::sleep(EVERY);
            let Ok(rows) = store.query(&AuditFilter::default(), NEWEST) else {
                continue;
            };
            let since = last;
            for row in rows.into_iter().rev().filter(|r| r.id > since) {
                last = row.id;
                if !gate.announced(row.id) {
                    let _ = events.send(GatewayEvent::AuditAppended {
                        id: row.id,
                        server: row.server,
                        tool: row.tool,
                        decision: row.decision,
                    });
                }
            }
        }
    });
    if let Err(e) = started {
        tracing::warn!(error = %e, "the audit follower could not start");
    }
}

fn newest_id(store: &AuditStore) -> Option<i64> {
    store.query(&AuditFilter::default(), 1).ok()?.first().map(|r| r.id)
}
