//! The gateway's sessions: legacy sessions with their own upstream, the shared stateless
//! connection per server, and the reaping of sessions whose clients vanished.

use std::sync::Arc;

use super::Plane;
use crate::queue;
use crate::session::Session;
use crate::upstream::{IdMode, Upstream, UpstreamError};

/// A session with no request and no open stream for this long is ended.
const SESSION_IDLE_MS: i64 = 30 * 60 * 1000;

impl Plane {
    pub fn session(&self, server: &str, id: &str) -> Option<Arc<Session>> {
        let sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let session = sessions.get(id).filter(|s| &*s.server == server).cloned();
        if let Some(s) = &session {
            s.touch();
        }
        session
    }

    /// Ends sessions whose clients vanished without a `DELETE` (a killed client), so their
    /// upstream children do not pile up.
    pub async fn reap_idle_sessions(&self) {
        let now = crate::clock::now_ms();
        let idle: Vec<Arc<str>> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .filter(|s| s.is_abandoned(now, SESSION_IDLE_MS))
            .map(|s| s.id.clone())
            .collect();
        for id in idle {
            tracing::info!(session = %id, "ending idle session");
            self.end_session(&id).await;
        }
    }

    /// A new legacy session with its own upstream connection, if the session limits allow one.
    pub async fn open_session(&self, server: &str) -> Result<Arc<Session>, UpstreamError> {
        let limits = self.config().limits;
        if let Err(why) = self.session_caps.take(server, &limits) {
            tracing::warn!(server, "session refused: {why}");
            return Err(UpstreamError::Full(why));
        }
        let id: Arc<str> = Arc::from(super::new_token());
        let session = match self.connect(server, id.clone(), false, IdMode::Passthrough).await {
            Ok(session) => session,
            Err(e) => {
                self.session_caps.release(server);
                return Err(e);
            }
        };
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, session.clone());
        tracing::info!(server, session = %session.id, "session opened");
        Ok(session)
    }

    /// The shared connection for stateless requests; restarted if it died.
    pub async fn stateless_session(&self, server: &str) -> Result<Arc<Session>, UpstreamError> {
        let mut shared = self.stateless.lock().await;
        if let Some(session) = shared.get(server).filter(|s| s.is_alive()) {
            return Ok(session.clone());
        }
        let id: Arc<str> = Arc::from(format!("stateless:{server}"));
        let session = self.connect(server, id, true, IdMode::Remap).await?;
        shared.insert(server.to_owned(), session.clone());
        Ok(session)
    }

    async fn connect(
        &self,
        server: &str,
        id: Arc<str>,
        stateless: bool,
        ids: IdMode,
    ) -> Result<Arc<Session>, UpstreamError> {
        let config = self
            .config()
            .servers
            .get(server)
            .cloned()
            .ok_or_else(|| UpstreamError::Gone(server.to_owned()))?;
        let (events_tx, events_rx) = queue::upstream_events();
        let upstream = Upstream::connect(server, &config, ids, events_tx).await?;
        Ok(Session::new(
            id,
            Arc::from(server),
            stateless,
            upstream,
            self.gate.clone(),
            events_rx,
            self.config().call_timeout(server),
        ))
    }

    pub async fn end_session(&self, id: &str) {
        let session = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        if let Some(session) = session {
            self.session_caps.release(&session.server);
            tracing::info!(server = %session.server, session = id, "session ended");
            session.close().await;
            let idle = self
                .sessions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .is_empty();
            if idle {
                // The burst is over: what its sessions held at once goes back (allocator.rs).
                crate::allocator::release_free_memory();
            }
        }
    }

    pub async fn stop_all(&self) {
        let sessions: Vec<_> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain()
            .map(|(_, s)| s)
            .collect();
        let shared: Vec<_> = self.stateless.lock().await.drain().map(|(_, s)| s).collect();
        let stops = sessions.iter().chain(shared.iter()).map(|s| s.close());
        futures::future::join_all(stops).await;
        self.monitor.close_all().await;
    }
}
