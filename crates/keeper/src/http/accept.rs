//! The accept loop: our own, because `axum::serve` has neither a header read timeout nor a
//! connection cap, and another local user holding a thousand half-open connections locked the
//! owner out.
//!
//! Each connection: TCP_NODELAY (small JSON-RPC messages must not wait for Nagle; it cost ~40 ms
//! a call), its owner looked up ([`super::conn_caps::OwnerLookup`]) and admitted or closed at once
//! ([`super::conn_caps::ConnCaps`]), then HTTP/1 with `limits.header_read_timeout_secs` to send each
//! request's headers. The [`Conn`] addresses go into every request as `ConnectInfo`, for the
//! control API's same-user check. On shutdown the listener closes and every connection is asked
//! to finish gracefully (the caller bounds how long that may take).

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use portcullis_config::config::Limits;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::conn_caps::{ConnCaps, OwnerLookup};
use super::Conn;

/// After a failed accept (out of descriptors, usually), wait this long before the next, rather
/// than spin on the error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` until `stopping` is cancelled and the open connections finish.
pub(crate) async fn serve(listener: TcpListener, router: Router, limits: Limits, stopping: CancellationToken) {
    let caps = ConnCaps::new(limits);
    let lookup = OwnerLookup::start();
    let header_timeout = Duration::from_secs(limits.header_read_timeout_secs);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stopping.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((io, peer)) => {
                    let conn = Connection { io, peer, router: router.clone(), header_timeout };
                    let (caps, lookup, stopping) = (caps.clone(), lookup.clone(), stopping.clone());
                    connections.spawn(async move { conn.run(&caps, &lookup, stopping).await });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

struct Connection {
    io: TcpStream,
    peer: SocketAddr,
    router: Router,
    header_timeout: Duration,
}

impl Connection {
    async fn run(self, caps: &std::sync::Arc<ConnCaps>, lookup: &OwnerLookup, stopping: CancellationToken) {
        let _ = self.io.set_nodelay(true);
        let local = self.io.local_addr().ok();
        let owner = match local {
            Some(local) => lookup.owner(local, self.peer).await,
            None => super::conn_caps::Owner::Foreign(None),
        };
        // Over the cap: dropping the stream closes it now.
        let Some(_admitted) = caps.admit(owner) else {
            return;
        };
        let conn = Conn { local, peer: self.peer };
        let router = self.router;
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(conn));
            let mut router = router.clone();
            async move { tower_service::Service::call(&mut router, request).await }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_timeout);
        let served = builder.serve_connection(TokioIo::new(self.io), service);
        tokio::pin!(served);
        let result = tokio::select! {
            result = served.as_mut() => result,
            () = stopping.cancelled() => {
                served.as_mut().graceful_shutdown();
                served.await
            }
        };
        if let Err(e) = result {
            tracing::debug!(peer = %conn.peer, error = %e, "connection ended with an error");
        }
    }
}
