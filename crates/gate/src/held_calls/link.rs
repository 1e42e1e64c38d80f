//! The keeper link: how a data plane asks the keeper about held calls over the local socket.
//!
//! After the hello (`{"portcullis":1,"role":"held_calls","token":"…"}`, answered like a relay's),
//! both sides write one JSON object per line. The data plane sends [`Up`]: questions (numbered
//! by it, `n`), the ends it decides itself (a deadline passed, a client withdrew), extensions,
//! ended sessions. The keeper sends [`Down`]: the answer to each question (at once, or held
//! under the keeper's id), then for each held call its deadline moves and its resolution.
//!
//! The keeper side (`crates/keeper/src/link_serve.rs`) asks its in-process [`super::HeldCalls`] (the broker), so a call asked
//! over the link is decided exactly as one of the keeper's own HTTP sessions: the same grants,
//! pause, approvers, prompt and events. A data plane may end only the calls it asked about and
//! withdraw only its own sessions; when the link closes, its calls still held are withdrawn.

use bytes::BytesMut;
use portcullis_policy::{Door, Places, RuleRef};
use portcullis_wire::LineDecoder;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::AtOnce;
use crate::held_calls::pending::{HeldBy, PendingApproval};
use crate::held_calls::LiveSession;
use crate::held_calls::Resolution;

/// The hello's `role` for a keeper link.
pub const ROLE: &str = "held_calls";
/// The link's version, in the hello's `link` (see [`speaks`]). Changes stay additive where they
/// can: a message an older side does not know must be one it can do without.
/// - 1: questions, ends, extensions, withdrawn sessions (issue 31);
/// - 2: a call held by a keeper that stopped is asked again, `approval.asked_before` set; the
///   data plane announces its sessions (`Up::Announce`); the keeper's answer to the hello names
///   the version (a version-1 keeper answers the plain ACK, and is sent nothing new);
/// - 3: held answers (`WireRule::Answer`, `approval.answer`); a keeper of version 2 or older is
///   never asked about one (the data plane withholds the answer and says why).
pub const VERSION: u32 = 3;
/// The oldest version this keeper still serves: a version-1 data plane asks as before and never
/// asks a call again (it refuses calls whose keeper stopped).
pub const OLDEST: u32 = 1;

/// Whether this keeper serves a data plane speaking link `version`; if not, what to tell the
/// person (the data plane was started by another version of Portcullis than the one running).
pub fn speaks(version: u32) -> Result<(), String> {
    if (OLDEST..=VERSION).contains(&version) {
        return Ok(());
    }
    let (whose, what_to_do) = if version > VERSION {
        (
            "newer",
            "restart Portcullis (the app, or `portcullis serve`) so that the installed version runs",
        )
    } else {
        (
            "older",
            "restart the MCP client so that it starts the installed `portcullis connect`",
        )
    };
    Err(format!(
        "this `portcullis connect` is {whose} than the Portcullis running (keeper link version {version}, \
         it serves {OLDEST} to {VERSION}): {what_to_do}"
    ))
}
/// The longest line either side reads: a held call carries its arguments.
const LINE_MAX: usize = portcullis_wire::MAX_MESSAGE + 64 * 1024;

/// Data plane → keeper.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Up {
    Ask {
        n: u64,
        approval: Box<PendingApproval>,
        rule: WireRule,
        digest: String,
        places: Places,
    },
    End {
        id: String,
        resolution: Resolution,
    },
    /// Answered by a [`Down::Deadline`] when the deadline moved.
    Extend {
        id: String,
        by_ms: u64,
        max_hold_ms: u64,
    },
    WithdrawSession {
        session: String,
    },
    /// A session began on the data plane (link version 2); it ends with `WithdrawSession` or
    /// with the link.
    Announce {
        session: LiveSession,
    },
}

/// Keeper → data plane.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Down {
    AtOnce {
        n: u64,
        at_once: AtOnce,
    },
    Held {
        n: u64,
        id: String,
    },
    /// The held call's deadline, counted from when it was held, moved (a person extended it).
    Deadline {
        id: String,
        after_ms: u64,
        expires_at_ms: i64,
    },
    Resolved {
        id: String,
        resolution: Resolution,
    },
}

/// What held a call, in parts: the text form the audit and the prompt show cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireRule {
    Hide {
        pattern: String,
    },
    Entry {
        key: String,
    },
    Rule {
        key: String,
        index: usize,
    },
    Default,
    NoPolicyFile,
    PinChanged,
    /// An entry of another section than `tools` (link version 3: an older keeper never sees one,
    /// as it never asks about those doors).
    SectionEntry {
        door: Door,
        key: String,
    },
    SectionRule {
        door: Door,
        key: String,
        index: usize,
    },
    /// A held answer (link version 3: a data plane asks about one only of a keeper that speaks it).
    Answer,
}

impl From<&HeldBy> for WireRule {
    fn from(held: &HeldBy) -> Self {
        match held {
            HeldBy::PinChanged => Self::PinChanged,
            HeldBy::Answer => Self::Answer,
            HeldBy::Policy(RuleRef::Hide { pattern }) => Self::Hide {
                pattern: pattern.clone(),
            },
            HeldBy::Policy(RuleRef::Entry { key }) => Self::Entry { key: key.clone() },
            HeldBy::Policy(RuleRef::Rule { key, index }) => Self::Rule {
                key: key.clone(),
                index: *index,
            },
            HeldBy::Policy(RuleRef::Default) => Self::Default,
            HeldBy::Policy(RuleRef::NoPolicyFile) => Self::NoPolicyFile,
            HeldBy::Policy(RuleRef::SectionEntry { door, key }) => Self::SectionEntry {
                door: *door,
                key: key.clone(),
            },
            HeldBy::Policy(RuleRef::SectionRule { door, key, index }) => Self::SectionRule {
                door: *door,
                key: key.clone(),
                index: *index,
            },
        }
    }
}

impl From<WireRule> for HeldBy {
    fn from(wire: WireRule) -> Self {
        match wire {
            WireRule::PinChanged => Self::PinChanged,
            WireRule::Answer => Self::Answer,
            WireRule::Hide { pattern } => Self::Policy(RuleRef::Hide { pattern }),
            WireRule::Entry { key } => Self::Policy(RuleRef::Entry { key }),
            WireRule::Rule { key, index } => Self::Policy(RuleRef::Rule { key, index }),
            WireRule::Default => Self::Policy(RuleRef::Default),
            WireRule::NoPolicyFile => Self::Policy(RuleRef::NoPolicyFile),
            WireRule::SectionEntry { door, key } => Self::Policy(RuleRef::SectionEntry { door, key }),
            WireRule::SectionRule { door, key, index } => Self::Policy(RuleRef::SectionRule { door, key, index }),
        }
    }
}

/// One message as a line.
pub fn line<T: Serialize>(message: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Reads lines of `T` from `rd` into `tx` until the stream ends, a line is not a `T`, or `tx`
/// closes. A line that cannot be read ends the link: the two sides no longer agree.
pub async fn read_lines<R, T>(mut rd: R, mut buf: BytesMut, tx: mpsc::UnboundedSender<T>)
where
    R: AsyncRead + Unpin,
    T: for<'de> Deserialize<'de>,
{
    let mut decoder = LineDecoder::new(LINE_MAX);
    loop {
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(line)) => match serde_json::from_slice(&line) {
                    Ok(message) => {
                        if tx.send(message).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "keeper link: a line that is not a message; closing");
                        return;
                    }
                },
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "keeper link: unreadable input; closing");
                    return;
                }
            }
        }
        match rd.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Writes every message from `rx` as a line until `rx` ends or the stream fails.
pub async fn write_lines<W, T>(mut wr: W, mut rx: mpsc::UnboundedReceiver<T>)
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    while let Some(message) = rx.recv().await {
        if wr.write_all(&line(&message)).await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}
