//! The client's stdin and stdout, read and written on the runtime's own thread when they are
//! pipes or sockets (what MCP clients give a command they launch): tokio's `stdin()`/`stdout()`
//! hand every read and write to a blocking thread, a thread hop per message each way.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

pub(super) type Input = Pin<Box<dyn AsyncRead + Send>>;
pub(super) type Output = Pin<Box<dyn AsyncWrite + Send>>;

pub(super) fn stdin() -> Input {
    #[cfg(unix)]
    if let Some(input) = unix::reader(std::io::stdin()) {
        return input;
    }
    Box::pin(tokio::io::stdin())
}

pub(super) fn stdout() -> Output {
    #[cfg(unix)]
    if let Some(output) = unix::writer(std::io::stdout()) {
        return output;
    }
    Box::pin(tokio::io::stdout())
}

#[cfg(unix)]
mod unix {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use super::{Input, Output};

    enum Kind {
        Fifo,
        Socket,
    }

    /// A duplicate of `fd` and what it is, if it can be polled (a pipe or a socket).
    fn pollable(fd: impl AsFd) -> Option<(OwnedFd, Kind)> {
        let owned = fd.as_fd().try_clone_to_owned().ok()?;
        let file = std::fs::File::from(owned);
        let kind = file.metadata().ok()?.file_type();
        let kind = if kind.is_fifo() {
            Kind::Fifo
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            return None;
        };
        Some((OwnedFd::from(file), kind))
    }

    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let std = std::os::unix::net::UnixStream::from(fd);
        std.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(std).ok()
    }

    pub(super) fn reader(fd: impl AsFd) -> Option<Input> {
        match pollable(fd)? {
            (fd, Kind::Fifo) => Some(Box::pin(tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
    }

    pub(super) fn writer(fd: impl AsFd) -> Option<Output> {
        match pollable(fd)? {
            (fd, Kind::Fifo) => Some(Box::pin(tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
    }
}
