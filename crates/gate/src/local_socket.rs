//! The platform part of the local socket `portcullis connect` uses: bind, accept with the peer's
//! user checked, connect. One implementation per platform behind the same few names:
//! - Unix: a Unix domain socket in the data dir, mode 0600, peer checked by `SO_PEERCRED`
//!   (or the platform's equivalent, through tokio) to be this process's user;
//! - Windows: a named pipe ([`windows.rs`](imp)) with a DACL for this user alone and the peer's
//!   user checked on both ends; run in CI under Wine, never on Windows, so binding refuses unless
//!   `PORTCULLIS_EXPERIMENTAL_PIPE=1` (its name and descriptor text are in `pipe_text.rs`,
//!   tested everywhere);
//! - elsewhere, and on Windows until then: binding says so, and `connect` falls back to the
//!   HTTP relay, which gateway.json still names.
//!
//! The protocol on top lives in [`crate::local_conn`].

#[cfg(unix)]
#[path = "local_socket/unix.rs"]
mod imp;

#[cfg(windows)]
#[path = "local_socket/windows.rs"]
mod imp;

#[cfg(not(any(unix, windows)))]
#[path = "local_socket/other.rs"]
mod imp;

#[cfg(any(windows, test))]
#[path = "local_socket/pipe_text.rs"]
mod pipe_text;

pub use imp::{connect, hang_up, Listener, Stream};

/// The socket's file name in the data dir.
pub const SOCKET_FILE: &str = "connect.sock";

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("{path} exists and is not a socket of this user's gateway; remove it or choose another data dir")]
    NotOurs { path: std::path::PathBuf },
    #[error("another gateway answers on {path}")]
    InUse { path: std::path::PathBuf },
    #[error("cannot create the local socket {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("local sockets are not available on this platform")]
    Unsupported,
}
