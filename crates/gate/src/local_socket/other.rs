//! Not Unix: no local socket yet (a named pipe belongs here). Binding reports it, and `connect`
//! uses the HTTP relay instead.

use std::path::{Path, PathBuf};

use super::BindError;

/// Never constructed off Unix.
pub enum Stream {}

impl tokio::io::AsyncRead for Stream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match *self {}
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match *self {}
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match *self {}
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match *self {}
    }
}

pub struct Listener {
    pub path: PathBuf,
}

impl Listener {
    pub fn bind(_path: &Path) -> Result<Self, BindError> {
        Err(BindError::Unsupported)
    }

    pub async fn accept(&self) -> std::io::Result<Stream> {
        std::future::pending().await
    }

    pub fn remove_if_ours(&self) {}
}

pub fn hang_up(stream: &Stream) -> impl std::future::Future<Output = ()> + Send + 'static {
    match *stream {}
}

pub async fn connect(_path: &Path) -> std::io::Result<Stream> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no local socket on this platform",
    ))
}
