//! Rows that other processes commit to the audit (every `connect` is a data plane with its own
//! gate) announced on the keeper's event channel as `AuditAppended`, so the audit viewer and
//! `GET /control/events` follow calls decided outside the keeper. The keeper's own rows are
//! announced by its gate as they are committed; this only fills in the others'.
//!
//! It reads the heads of the rows after the last one seen every [`EVERY`] on a thread of its own
//! (id, server, tool and decision only, never the arguments; a read on the WAL database, no lock
//! on writers), at most [`BATCH`] at a time.

use std::sync::Arc;
use std::time::Duration;

use crate::Keeper;
use portcullis_gate::events::GatewayEvent;

const EVERY: Duration = Duration::from_millis(250);
const BATCH: usize = 1024;

/// Follows the audit until the gateway stops.
pub(super) fn start(gateway: &Arc<Keeper>) {
    let Ok(store) = gateway.plane.gate().audit_store() else {
        tracing::warn!("the audit could not be opened for reading: other processes' rows are not announced");
        return;
    };
    let (gate, events, stopping) = (
        gateway.plane.gate().clone(),
        gateway.plane.events().clone(),
        gateway.plane.stopping_token(),
    );
    let mut last = store.last_id().unwrap_or(0);
    let started = std::thread::Builder::new().name("audit-follow".into()).spawn(move || {
        while !stopping.is_cancelled() {
            std::thread::sleep(EVERY);
            let Ok(rows) = store.heads_after(last, BATCH) else {
                continue;
            };
            for row in rows {
                last = row.id;
                if !gate.announced(row.id) {
                    let _ = events.send(GatewayEvent::AuditAppended {
                        id: row.id,
                        server: row.server,
                        tool: row.tool,
                        decision: row.decision,
                        method: row.method,
                    });
                }
            }
        }
    });
    if let Err(e) = started {
        tracing::warn!(error = %e, "the audit follower could not start");
    }
}
