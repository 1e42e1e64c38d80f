//! The policy writes a decision made, remembered for a short while so a person can take one
//! back ("Undo" beside the "always" they just chose).
//!
//! Each write keeps the file's bytes before and the bytes written. An undo puts the old bytes
//! back only if the file still holds exactly what was written: a file edited since (by a person,
//! or another decision) is left alone, and the undo says so. Nothing here loosens or tightens a
//! decision already taken: calls the "always" settled stay settled; the undo changes what later
//! calls meet.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long a write can be undone. The app shows its undo for a few seconds; the CLI and the
/// control API get the same half minute.
pub const UNDO_WINDOW: Duration = Duration::from_secs(30);

/// At most this many writes are remembered: undo is for the last moments, not a history.
const REMEMBERED: usize = 32;

/// A policy write a decision made, as the decision's answer names it (control API, app, CLI).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PolicyWrite {
    /// Pass to `POST /control/policy/undo` (or `undo_policy_write`, `approvals undo`).
    pub write_id: String,
    pub server: String,
    /// The policy file written.
    pub path: String,
    /// The `tools` key written (the tool's exact name, escaped where it looks like a pattern).
    pub key: String,
    /// The entry as written: `"key": { … }`, what a person reads in the undo offer.
    pub rule_text: String,
    /// Until when (ms since the epoch) it can be undone.
    pub undo_until_ms: i64,
}

#[derive(Debug)]
pub(super) struct Recorded {
    pub write: PolicyWrite,
    pub path: PathBuf,
    /// `None`: there was no file.
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    pub expires: Instant,
}

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("no policy write {0} to undo (it was undone already, or never made)")]
    Unknown(String),
    #[error("policy write {0} can no longer be undone: undo lasts {secs} s", secs = UNDO_WINDOW.as_secs())]
    Expired(String),
    #[error("{path} changed since policy write {id}; not undone")]
    Changed { id: String, path: PathBuf },
    #[error("cannot undo policy write {id} in {path}: {source}")]
    Io {
        id: String,
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Default)]
pub(super) struct Ledger {
    writes: VecDeque<Recorded>,
}

impl Ledger {
    pub(super) fn remember(&mut self, recorded: Recorded) {
        if self.writes.len() == REMEMBERED {
            self.writes.pop_front();
        }
        self.writes.push_back(recorded);
    }

    /// Takes the write `id` out (an undo is tried once), refusing one past its window.
    pub(super) fn take(&mut self, id: &str, now: Instant) -> Result<Recorded, UndoError> {
        let index = self
            .writes
            .iter()
            .position(|r| r.write.write_id == id)
            .ok_or_else(|| UndoError::Unknown(id.to_owned()))?;
        let recorded = self
            .writes
            .remove(index)
            .ok_or_else(|| UndoError::Unknown(id.to_owned()))?;
        if now > recorded.expires {
            return Err(UndoError::Expired(id.to_owned()));
        }
        Ok(recorded)
    }
}

pub(super) fn new_write_id() -> String {
    format!("w-{:016x}", rand::random::<u64>())
}
