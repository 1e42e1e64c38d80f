//! A child's stdin, written from the sender's own task whenever the pipe has room.
//!
//! A request to a stdio server used to cross a queue to a writer task of its own: a task wake
//! per message, and on the multi-thread runtime often a second worker woken to run it. Here the
//! sender writes the line itself (one non-blocking `write` of the message and its newline) when
//! nothing sent before it is still waiting. What the pipe does not take joins a backlog that one
//! writer task drains as the server reads, so messages still leave in the order they were sent.
//!
//! A message is framed as [`encode_line`] frames it: one holding a raw `\n` or `\r` (pretty-printed
//! JSON from an HTTP client) is written with those turned into spaces, so it cannot end the line
//! early and smuggle a second message past the gate; any other is written as it is, its bytes
//! shared with the backlog rather than copied (a 15 MiB call costs no copy here).
//!
//! The backlog is bounded like every queue ([`crate::queue::Budget`]): a message that would pass
//! the budget is refused alone (the server is slow to read, not gone; later ones may fit), as the
//! child's queue did before ([`crate::queue::Overflow::Refuse`]).
//!
//! Off Unix a child's stdin is not a pipe tokio can write to without waiting, so every line goes
//! through the writer task's queue, as before (`stdin_pipe/queued.rs`).

use bytes::Bytes;
use portcullis_wire::codec::encode_line;

#[cfg(not(unix))]
mod queued;
#[cfg(unix)]
mod unix;

#[cfg(not(unix))]
pub(super) use queued::StdinPipe;
#[cfg(unix)]
pub(super) use unix::StdinPipe;

/// Why a line was not sent.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// The backlog is over its budget.
    Full,
    /// The pipe is closed (the server went away, or stdin was closed).
    Closed,
}

/// A message as the parts of its line: its own bytes and a newline, or, when it holds a raw
/// `\n` or `\r`, [`encode_line`]'s copy with those made spaces (newline included) and nothing.
fn frame(message: &Bytes) -> [Bytes; 2] {
    if message.iter().any(|&b| b == b'\n' || b == b'\r') {
        [encode_line(message), Bytes::new()]
    } else {
        [message.clone(), Bytes::from_static(b"\n")]
    }
}
