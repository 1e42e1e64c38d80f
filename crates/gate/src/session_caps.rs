//! How many legacy sessions may be open: per server and in all. Each legacy session owns an
//! upstream connection — for a stdio server a child process — so without a cap a client that
//! loops on `initialize` starts processes until the machine gives out.
//!
//! A slot is taken before the upstream is started (so concurrent `initialize`s cannot all pass
//! the check) and given back when the session ends or fails to start.

use std::collections::HashMap;
use std::sync::Mutex;

use portcullis_config::config::Limits;

#[derive(Default)]
pub(crate) struct SessionCaps {
    open: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    per_server: HashMap<String, usize>,
    total: usize,
}

impl SessionCaps {
    /// Takes a slot for a new session of `server`, or says why not: the text the client gets.
    pub(crate) fn take(&self, server: &str, limits: &Limits) -> Result<(), String> {
        let mut open = self.lock();
        let of_server = open.per_server.get(server).copied().unwrap_or(0);
        if of_server >= limits.max_sessions_per_server {
            return Err(format!(
                "[portcullis] server {server:?} already has {of_server} sessions \
                 (limits.max_sessions_per_server); close a client or raise the limit"
            ));
        }
        if open.total >= limits.max_sessions {
            return Err(format!(
                "[portcullis] the gateway already has {} sessions open (limits.max_sessions); \
                 close a client or raise the limit",
                open.total
            ));
        }
        *open.per_server.entry(server.to_owned()).or_default() += 1;
        open.total += 1;
        Ok(())
    }

    /// Gives back a slot taken for `server`.
    pub(crate) fn release(&self, server: &str) {
        let mut open = self.lock();
        if let Some(n) = open.per_server.get_mut(server) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.per_server.remove(server);
            }
            open.total = open.total.saturating_sub(1);
        }
    }

    #[cfg(test)]
    fn open(&self, server: &str) -> usize {
        self.lock().per_server.get(server).copied().unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_server: usize, total: usize) -> Limits {
        Limits {
            max_sessions_per_server: per_server,
            max_sessions: total,
            ..Limits::default()
        }
    }

    #[test]
    fn a_full_server_is_refused_with_the_limit_named_and_freed_slots_reused() {
        let caps = SessionCaps::default();
        let l = limits(2, 10);
        caps.take("everything", &l).unwrap();
        caps.take("everything", &l).unwrap();
        let err = caps.take("everything", &l).unwrap_err();
        assert_eq!(
            err,
            "[portcullis] server \"everything\" already has 2 sessions (limits.max_sessions_per_server); \
             close a client or raise the limit"
        );
        caps.take("other", &l).expect("another server has its own count");
        caps.release("everything");
        caps.take("everything", &l).expect("a released slot is free again");
        assert_eq!(caps.open("everything"), 2);
    }

    #[test]
    fn the_total_caps_all_servers_together() {
        let caps = SessionCaps::default();
        let l = limits(5, 3);
        for server in ["a", "b", "c"] {
            caps.take(server, &l).unwrap();
        }
        let err = caps.take("d", &l).unwrap_err();
        assert!(err.contains("3 sessions open (limits.max_sessions)"), "{err}");
        caps.release("zzz");
        assert!(caps.take("d", &l).is_err(), "releasing an unknown server frees nothing");
        caps.release("a");
        caps.take("d", &l).unwrap();
    }
}
