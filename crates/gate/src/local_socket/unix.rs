//! Unix domain sockets.

use std::future::Future;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::poll::{PollFd, PollFlags, PollTimeout};

use super::BindError;

pub type Stream = tokio::net::UnixStream;

pub struct Listener {
    pub path: PathBuf,
    inner: tokio::net::UnixListener,
    /// (device, inode) of the socket file we made, so shutting down removes only our own.
    identity: (u64, u64),
}

impl Listener {
    /// Binds `path` with mode 0600. The socket is made under a private random name in the same
    /// directory, made private, then renamed into place: no moment exists at which `path` is a
    /// socket others may use. A `path` already there is replaced only when it is a socket of this
    /// user that nobody answers on (a gateway that crashed); anything else is refused.
    pub fn bind(path: &Path) -> Result<Self, BindError> {
        let io = |source| BindError::Io {
            path: path.to_owned(),
            source,
        };
        check_existing(path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = dir.join(format!(".{}.{:016x}.tmp", super::SOCKET_FILE, rand::random::<u64>()));
        let std_listener = std::os::unix::net::UnixListener::bind(&tmp).map_err(io)?;
        let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = placed {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        let meta = std::fs::symlink_metadata(path).map_err(io)?;
        std_listener.set_nonblocking(true).map_err(io)?;
        let inner = tokio::net::UnixListener::from_std(std_listener).map_err(io)?;
        Ok(Self {
            path: path.to_owned(),
            inner,
            identity: (meta.dev(), meta.ino()),
        })
    }

    /// The next connection from this user. A peer of another user (or one whose credentials
    /// cannot be read) is closed at once and logged; the directory's mode should already keep
    /// them out, this holds even if it was loosened.
    pub async fn accept(&self) -> std::io::Result<Stream> {
        let me = nix::unistd::geteuid().as_raw();
        loop {
            let (stream, _) = self.inner.accept().await?;
            match stream.peer_cred() {
                Ok(cred) if cred.uid() == me => return Ok(stream),
                Ok(cred) => tracing::warn!(
                    uid = cred.uid(),
                    pid = cred.pid(),
                    "local socket: closed a connection from another user"
                ),
                Err(e) => tracing::warn!(error = %e, "local socket: cannot read the peer's credentials; closed"),
            }
        }
    }

    /// Removes the socket file if it is still the one this listener made.
    pub fn remove_if_ours(&self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.identity {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// What is at `path` may be replaced only if it is a stale socket of this user.
fn check_existing(path: &Path) -> Result<(), BindError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(BindError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    if !meta.file_type().is_socket() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(BindError::NotOurs { path: path.to_owned() });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(BindError::InUse { path: path.to_owned() }),
        Err(_) => Ok(()),
    }
}

/// Resolves once the peer has closed the whole connection, not only its writing half (after a
/// peer's `shutdown(SHUT_WR)` the socket reads end of input but stays writable; after its
/// `close` the kernel reports `POLLHUP`). Polled on a short tick on a duplicate of the
/// descriptor: readiness through the runtime cannot wait for a hang-up alone (a writable socket
/// is always ready), and this runs only while a connection waits for its last answers, so a
/// connection pays one `dup` and nothing per message. Never resolves if the descriptor cannot
/// be duplicated.
pub fn hang_up(stream: &Stream) -> impl Future<Output = ()> + Send + 'static {
    let fd = stream.as_fd().try_clone_to_owned();
    async move {
        let Ok(fd) = fd else {
            return std::future::pending().await;
        };
        let mut tick = tokio::time::interval(HANG_UP_TICK);
        loop {
            tick.tick().await;
            let mut polled = [PollFd::new(fd.as_fd(), PollFlags::empty())];
            let hung_up = nix::poll::poll(&mut polled, PollTimeout::ZERO).is_ok()
                && polled[0]
                    .revents()
                    .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
            if hung_up {
                return;
            }
        }
    }
}

/// How often [`hang_up`] looks.
const HANG_UP_TICK: std::time::Duration = std::time::Duration::from_millis(100);

pub async fn connect(path: &Path) -> std::io::Result<Stream> {
    tokio::net::UnixStream::connect(path).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn binds_private_accepts_this_user_and_replaces_only_a_stale_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connect.sock");
        let listener = Listener::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(
            matches!(Listener::bind(&path), Err(BindError::InUse { .. })),
            "a live socket is not taken over"
        );
        let client = tokio::spawn(async move { connect(&path).await.map(drop) });
        tokio::time::timeout(std::time::Duration::from_secs(5), listener.accept())
            .await
            .expect("accepted in time")
            .expect("same user is accepted");
        client.await.unwrap().unwrap();
        let path = listener.path.clone();
        drop(listener);
        let again = Listener::bind(&path).expect("a stale socket of ours is replaced");
        again.remove_if_ours();
        assert!(!path.exists(), "removed on the way out");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "no temp socket left behind");
    }

    #[tokio::test]
    async fn hang_up_tells_a_closed_peer_from_one_that_only_stopped_sending() {
        use tokio::io::AsyncWriteExt;
        let (ours, mut peer) = Stream::pair().unwrap();
        let gone = hang_up(&ours);
        tokio::pin!(gone);
        peer.shutdown().await.unwrap();
        assert!(
            tokio::time::timeout(4 * HANG_UP_TICK, &mut gone).await.is_err(),
            "a peer that only shut its writing half is still there"
        );
        drop(peer);
        tokio::time::timeout(std::time::Duration::from_secs(5), gone)
            .await
            .expect("a peer that closed the connection is seen gone");
    }

    #[test]
    fn a_file_that_is_not_a_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connect.sock");
        std::fs::write(&path, b"not a socket").unwrap();
        assert!(matches!(Listener::bind(&path), Err(BindError::NotOurs { .. })));
        assert_eq!(std::fs::read(&path).unwrap(), b"not a socket", "left alone");
    }
}
