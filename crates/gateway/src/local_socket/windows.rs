//! Windows: a named pipe per data dir, `\\.\pipe\portcullis-<hash of the socket path>` (the
//! path gateway.json names stays the key both sides map to the same pipe).
//!
//! **Not finished — written to the shape of the Unix side, not built or run here** (no Windows
//! target on the build machine). What is missing before it may replace the HTTP fallback:
//! - the pipe is created with the default security descriptor (full control for the creator
//!   owner, LocalSystem and administrators — but read access for Everyone); it needs an explicit
//!   DACL granting only the current user, and
//! - the peer is not checked (`GetNamedPipeClientProcessId` + the process token's user SID,
//!   compared with ours, is the equivalent of `SO_PEERCRED`);
//! - [`hang_up`] never resolves: after a client's end of input the connection waits for its
//!   answers (bounded) even if the client has gone.
//!
//! Until those are done [`Listener::bind`] refuses with [`BindError::Unsupported`] unless
//! `PORTCULLIS_EXPERIMENTAL_PIPE=1`, so `connect` keeps using the HTTP relay.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions};

use super::BindError;

/// `ERROR_PIPE_BUSY`: every instance is taken; the server makes the next one at once.
const PIPE_BUSY: i32 = 231;

/// One end of a connection: the gateway holds server ends, `connect` a client end.
pub enum Stream {
    Server(NamedPipeServer),
    Client(NamedPipeClient),
}

pub struct Listener {
    pub path: PathBuf,
    name: String,
    /// The instance the next client connects to.
    next: Mutex<Option<NamedPipeServer>>,
}

fn pipe_name(path: &Path) -> String {
    let digest = Sha256::digest(path.to_string_lossy().as_bytes());
    format!(r"\\.\pipe\portcullis-{}", hex::encode(&digest[..12]))
}

impl Listener {
    pub fn bind(path: &Path) -> Result<Self, BindError> {
        if std::env::var_os("PORTCULLIS_EXPERIMENTAL_PIPE").is_none_or(|v| v != "1") {
            return Err(BindError::Unsupported);
        }
        let name = pipe_name(path);
        let first = ServerOptions::new()
            .first_pipe_instance(true)
            .reject_remote_clients(true)
            .create(&name)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::PermissionDenied => BindError::InUse { path: path.to_owned() },
                _ => BindError::Io {
                    path: path.to_owned(),
                    source,
                },
            })?;
        Ok(Self {
            path: path.to_owned(),
            name,
            next: Mutex::new(Some(first)),
        })
    }

    /// The next client: the waiting instance connects, and a new one is made for the one after.
    pub async fn accept(&self) -> std::io::Result<Stream> {
        let taken = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let server = match taken {
            Some(server) => server,
            None => self.instance()?,
        };
        server.connect().await?;
        let following = self.instance()?;
        *self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(following);
        Ok(Stream::Server(server))
    }

    fn instance(&self) -> std::io::Result<NamedPipeServer> {
        ServerOptions::new().reject_remote_clients(true).create(&self.name)
    }

    /// A named pipe disappears with its last handle: nothing to remove.
    pub fn remove_if_ours(&self) {}
}

pub fn hang_up(_stream: &Stream) -> impl std::future::Future<Output = ()> + Send + 'static {
    std::future::pending()
}

pub async fn connect(path: &Path) -> std::io::Result<Stream> {
    let name = pipe_name(path);
    let mut pause = std::time::Duration::from_millis(5);
    for _ in 0..20 {
        match ClientOptions::new().open(&name) {
            Ok(client) => return Ok(Stream::Client(client)),
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) => {}
            Err(e) => return Err(e),
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    }
    Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "every instance of the pipe stayed busy"))
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Client(c) => Pin::new(c).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_write(cx, data),
            Stream::Client(c) => Pin::new(c).poll_write(cx, data),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_flush(cx),
            Stream::Client(c) => Pin::new(c).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Client(c) => Pin::new(c).poll_shutdown(cx),
        }
    }
}
