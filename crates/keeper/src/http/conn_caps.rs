//! Who may hold how many connections open.
//!
//! Any local user can connect to a loopback port, token or not, and every open connection costs
//! a descriptor and a task. The gateway's own user and everyone else draw from separate pools, so
//! another user — who has no token and no business here — cannot use up the owner's connections
//! (`limits.max_connections`); each other user is further held to
//! `limits.max_connections_per_foreign_user`, all of them together to
//! `limits.max_foreign_connections`. A connection whose owner cannot be found counts as foreign.
//! Over a cap the connection is closed at once, and the refusals are logged once per burst.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portcullis_config::config::Limits;
use tokio::sync::{mpsc, oneshot};

use super::peer_user;

/// Whose end the client socket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    Own,
    /// Another user's uid, or `None`: not found.
    Foreign(Option<u32>),
}

impl Owner {
    fn of(uid: Option<u32>) -> Self {
        match uid {
            Some(uid) if uid == peer_user::own_uid() => Self::Own,
            other => Self::Foreign(other),
        }
    }
}

/// Refusals closer together than this are one burst, logged once.
const BURST_GAP: Duration = Duration::from_secs(10);

pub(crate) struct ConnCaps {
    limits: Limits,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    own: usize,
    foreign: usize,
    per_foreign: HashMap<Option<u32>, usize>,
    last_refusal: Option<Instant>,
    refused_in_burst: usize,
}

/// An admitted connection's place; given back on drop.
pub(crate) struct Admitted {
    caps: Arc<ConnCaps>,
    owner: Owner,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.caps.release(self.owner);
    }
}

impl ConnCaps {
    pub(crate) fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a connection of `owner`, or `None`: close it.
    pub(crate) fn admit(self: &Arc<Self>, owner: Owner) -> Option<Admitted> {
        let mut s = self.lock();
        let refused = match owner {
            Owner::Own => (s.own >= self.limits.max_connections).then_some("limits.max_connections"),
            Owner::Foreign(uid) => {
                let of_user = s.per_foreign.get(&uid).copied().unwrap_or(0);
                if of_user >= self.limits.max_connections_per_foreign_user {
                    Some("limits.max_connections_per_foreign_user")
                } else if s.foreign >= self.limits.max_foreign_connections {
                    Some("limits.max_foreign_connections")
                } else {
                    None
                }
            }
        };
        if let Some(limit) = refused {
            note_refusal(&mut s, owner, limit);
            return None;
        }
        match owner {
            Owner::Own => s.own += 1,
            Owner::Foreign(uid) => {
                s.foreign += 1;
                *s.per_foreign.entry(uid).or_default() += 1;
            }
        }
        Some(Admitted {
            caps: self.clone(),
            owner,
        })
    }

    fn release(&self, owner: Owner) {
        let mut s = self.lock();
        match owner {
            Owner::Own => s.own = s.own.saturating_sub(1),
            Owner::Foreign(uid) => {
                s.foreign = s.foreign.saturating_sub(1);
                if let Some(n) = s.per_foreign.get_mut(&uid) {
                    *n -= 1;
                    if *n == 0 {
                        s.per_foreign.remove(&uid);
                    }
                }
            }
        }
    }

    /// Open connections: (own, foreign).
    #[cfg(test)]
    fn open(&self) -> (usize, usize) {
        let s = self.lock();
        (s.own, s.foreign)
    }
}

fn note_refusal(s: &mut State, owner: Owner, limit: &str) {
    let now = Instant::now();
    let new_burst = s.last_refusal.is_none_or(|t| now.duration_since(t) > BURST_GAP);
    if new_burst {
        let who = match owner {
            Owner::Own => "the gateway's own user".to_owned(),
            Owner::Foreign(Some(uid)) => format!("uid {uid}"),
            Owner::Foreign(None) => "an unknown user".to_owned(),
        };
        tracing::warn!(
            limit,
            previous_burst = s.refused_in_burst,
            "connection from {who} closed: {limit} reached ({} own / {} foreign open); further \
             refusals in this burst are not logged",
            s.own,
            s.foreign
        );
        s.refused_in_burst = 0;
    }
    s.refused_in_burst += 1;
    s.last_refusal = Some(now);
}

/// Finds connection owners off the async threads, one table read for every connection waiting:
/// under a flood of connections the lookups would otherwise cost a table read each (tens of ms
/// with thousands of sockets) and starve the owner's own connections.
#[derive(Clone)]
pub(crate) struct OwnerLookup {
    tx: mpsc::UnboundedSender<Query>,
}

type Query = ((SocketAddr, SocketAddr), oneshot::Sender<Option<u32>>);

/// At most this many connections are classified per table read.
const BATCH: usize = 4096;

impl OwnerLookup {
    /// Starts the lookup task; it ends when the last handle is dropped.
    pub(crate) fn start() -> Self {
        // Unbounded, yet it cannot grow without bound: each query is sent by the task of one
        // accepted connection, which waits for its answer holding its socket, so the queue never
        // holds more than the descriptors the process may open. A bound here would have to
        // answer "unknown owner" (foreign) when full, and lock the owner out under a flood.
        let (tx, mut rx) = mpsc::unbounded_channel::<Query>();
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while rx.recv_many(&mut batch, BATCH).await > 0 {
                let (pairs, answers): (Vec<_>, Vec<_>) = std::mem::take(&mut batch).into_iter().unzip();
                let found = tokio::task::spawn_blocking(move || peer_user::peer_uids(&pairs))
                    .await
                    .unwrap_or_default();
                for (i, answer) in answers.into_iter().enumerate() {
                    let _ = answer.send(found.get(i).copied().flatten());
                }
            }
        });
        Self { tx }
    }

    /// Whose is the client end of the connection `peer` → `local`.
    pub(crate) async fn owner(&self, local: SocketAddr, peer: SocketAddr) -> Owner {
        let (answer, found) = oneshot::channel();
        if self.tx.send(((local, peer), answer)).is_err() {
            return Owner::Foreign(None);
        }
        Owner::of(found.await.ok().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Arc<ConnCaps> {
        ConnCaps::new(Limits {
            max_connections: 3,
            max_connections_per_foreign_user: 2,
            max_foreign_connections: 3,
            ..Limits::default()
        })
    }

    #[test]
    fn other_users_cannot_use_up_the_owners_connections() {
        let caps = caps();
        let nobody = Owner::Foreign(Some(65534));
        let a = caps.admit(nobody).unwrap();
        let _b = caps.admit(nobody).unwrap();
        assert!(caps.admit(nobody).is_none(), "per foreign user");
        let _c = caps
            .admit(Owner::Foreign(None))
            .expect("an unknown owner is another foreign user");
        assert!(
            caps.admit(Owner::Foreign(Some(1001))).is_none(),
            "all foreign users together"
        );
        let own: Vec<_> = (0..3)
            .map(|_| caps.admit(Owner::Own).expect("the owner's own pool"))
            .collect();
        assert!(caps.admit(Owner::Own).is_none(), "the owner's pool has its cap too");
        assert_eq!(caps.open(), (3, 3));
        drop(a);
        assert!(caps.admit(nobody).is_some(), "a closed connection gives its place back");
        drop(own);
        assert_eq!(caps.open().0, 0);
    }

    #[tokio::test]
    async fn this_process_owns_its_own_loopback_connections() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let _client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (io, peer) = listener.accept().await.unwrap();
        let lookup = OwnerLookup::start();
        let owner = lookup.owner(io.local_addr().unwrap(), peer).await;
        if cfg!(target_os = "linux") {
            assert_eq!(owner, Owner::Own);
            let gone: SocketAddr = "127.0.0.1:1".parse().unwrap();
            assert_eq!(lookup.owner(io.local_addr().unwrap(), gone).await, Owner::Foreign(None));
        }
    }
}
