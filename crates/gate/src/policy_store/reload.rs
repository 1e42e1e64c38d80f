//! Hot reload: how a changed policy file reaches the gate.
//!
//! Two paths, one guarantee. A poll re-reads every server's file each [`POLL_INTERVAL`] and
//! reloads the ones whose bytes changed: it holds whatever the directory went through (missing at
//! start and created later, removed and created again, a symbolic link, a file replaced by rename,
//! a file deleted), because it asks the filesystem by path each time instead of following one
//! inode. A filesystem watch, when it can be set up, only makes the common case immediate. So the
//! policy in force is never more than one interval behind the file.

use std::collections::BTreeSet;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc as wake_channel;

use super::PolicyStore;

/// How often every policy file is compared with what is in force.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How file changes reach the store, for status views.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ReloadMode {
    /// Before [`PolicyStore::watch`]: files are read only when asked.
    NotStarted,
    /// Changes are seen at once, and the poll backs the watch up.
    Watching { poll_ms: u64 },
    /// The directory could not be watched (`reason`); changes are seen by the poll alone.
    Polling { poll_ms: u64, reason: String },
}

/// Keeps hot reload running; dropping it stops the watch and the poll.
pub struct Watch {
    _watcher: Option<notify::RecommendedWatcher>,
    /// Dropped with the guard: the poll thread sees the channel close and ends.
    _stop: mpsc::Sender<()>,
}

impl PolicyStore {
    /// Starts hot reload (the watch if the directory can be watched, and always the poll) until
    /// the returned guard drops. Needs a tokio runtime (the watch's reload task runs on it).
    pub fn watch(self: &Arc<Self>) -> Watch {
        let poll_ms = u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(u64::MAX);
        let watcher = match self.start_watcher() {
            Ok(watcher) => {
                self.set_mode(ReloadMode::Watching { poll_ms });
                Some(watcher)
            }
            Err(reason) => {
                tracing::warn!(
                    dir = %self.dir.display(),
                    "cannot watch the policies directory ({reason}); reading it every {poll_ms} ms instead"
                );
                self.set_mode(ReloadMode::Polling { poll_ms, reason });
                None
            }
        };
        Watch {
            _watcher: watcher,
            _stop: self.start_poll(),
        }
    }

    fn set_mode(&self, mode: ReloadMode) {
        *self.mode.write().unwrap_or_else(std::sync::PoisonError::into_inner) = mode;
    }

    /// Compares every server's file with what was last read, reloading those that changed.
    pub(crate) fn poll(&self) {
        for server in self.known() {
            self.reload_if_changed(&server);
        }
    }

    /// A thread (file reads block) that polls until the guard's sender drops or the store goes.
    fn start_poll(self: &Arc<Self>) -> mpsc::Sender<()> {
        let (stop, stopped) = mpsc::channel::<()>();
        let store: Weak<Self> = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("policy-poll".into())
            .spawn(move || loop {
                match stopped.recv_timeout(POLL_INTERVAL) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
                match store.upgrade() {
                    Some(store) => store.poll(),
                    None => return,
                }
            });
        if let Err(e) = spawned {
            // Without the thread only the watch (if any) reloads; say so where it is read.
            tracing::error!(error = %e, "cannot start the policy poll; changed files may not be reloaded");
            self.set_mode(ReloadMode::Polling {
                poll_ms: 0,
                reason: format!("the poll could not start: {e}"),
            });
        }
        stop
    }

    /// Watches the directory; each burst of events for `*.json` files becomes one reload of
    /// each file named (read again only if its bytes changed).
    fn start_watcher(self: &Arc<Self>) -> Result<notify::RecommendedWatcher, String> {
        // The changed files not reloaded yet, by name: a set, so it holds at most one entry per
        // file in the directory however fast they change, and the burst of events one save
        // makes is one reload. `wake` holds one wake-up at most: a full channel means the reload
        // task has yet to look, and it will find this name when it does.
        let changed = Arc::new(Mutex::new(BTreeSet::new()));
        let (wake, mut woken) = wake_channel::channel::<()>(1);
        let noted = changed.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if event.kind.is_access() {
                return;
            }
            let stems = event
                .paths
                .iter()
                .filter(|path| path.extension().is_some_and(|e| e == "json"));
            let stems: Vec<String> = stems
                .filter_map(|path| path.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
                .collect();
            if stems.is_empty() {
                return;
            }
            noted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(stems);
            let _ = wake.try_send(());
        })
        .map_err(|e| e.to_string())?;
        watcher
            .watch(&self.dir, RecursiveMode::NonRecursive)
            .map_err(|e| e.to_string())?;
        let store = Arc::clone(self);
        // Ends when the watcher (and with it `wake`) is dropped.
        tokio::spawn(async move {
            while woken.recv().await.is_some() {
                let batch = std::mem::take(&mut *changed.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
                let store = store.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    for server in batch {
                        store.reload_if_changed(&server);
                    }
                })
                .await;
            }
        });
        Ok(watcher)
    }
}
