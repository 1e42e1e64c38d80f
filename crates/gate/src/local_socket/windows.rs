//! Windows: a named pipe per data dir, named by [`pipe_name`] from the socket path gateway.json
//! names (so `serve` and `connect` map it to the same pipe).
//!
//! What guards it, in the order a stranger meets it:
//! - **the DACL**: every instance is created with `D:P(A;;GA;;;<our user SID>)` (see
//!   [`dacl_for`]): only this user may open the pipe or create further instances of it, and
//!   remote clients are rejected. This is the boundary, as the 0700 data dir is on Unix;
//! - **the server checks its client** on every accepted connection: the client's process id
//!   (`GetNamedPipeClientProcessId`) → that process's token → its user SID, compared with ours;
//!   another user's process (or one that cannot be read) is disconnected and logged. This is the
//!   `SO_PEERCRED` of the Unix side, but weaker: a process id is not a credential bound to the
//!   connection (it can be reused by the time it is opened, and the pipe reports it from
//!   attributes the client side sets, as far as we know), so it catches a loosened DACL, not a
//!   hostile process the DACL already let in;
//! - **the client checks its server** the same way (`GetNamedPipeServerProcessId`): pipe names
//!   are one machine-wide namespace and this one is computable, so another user could create it
//!   first while no gateway runs; `connect` refuses to talk to a pipe another user serves. (A
//!   gateway that finds the name taken refuses to start: `first_pipe_instance`.)
//!
//! [`hang_up`] asks the pipe's state (`PeekNamedPipe`) on a short tick, as the Unix side polls
//! for `POLLHUP`. A pipe has no half close, so the server reads end of input only once the client
//! closed its handle; the tick is still what tells, not that assumption.
//!
//! **Status: off by default.** Compiled and lint-clean in CI (`scripts/check-windows.sh`: clippy
//! for `x86_64-pc-windows-gnu`) and run there under Wine (`scripts/test-wine.sh`: these tests and
//! `connect` over the pipe end to end), which shows the pipe works but not that it guards (Wine
//! enforces no DACL and ignores FILE_FLAG_FIRST_PIPE_INSTANCE); no Windows machine runs them. So
//! [`Listener::bind`] refuses with [`BindError::Unsupported`] unless
//! `PORTCULLIS_EXPERIMENTAL_PIPE=1`, gateway.json names no socket, and `connect` keeps using the
//! HTTP relay: an untested security boundary does not replace the tested fallback. What a Windows
//! test run must show before the gate goes is listed in SECURITY.md ("Windows: the named pipe is
//! off by default").

#![allow(unsafe_code)] // The Win32 calls below; every `unsafe` block says why it holds.

use std::future::Future;
use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{LocalFree, ERROR_BROKEN_PIPE, ERROR_PIPE_BUSY, ERROR_PIPE_NOT_CONNECTED, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, TokenUser, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId, PeekNamedPipe};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::pipe_text::{dacl_for, pipe_name};
use super::BindError;

/// One end of a connection: the gateway holds server ends, `connect` a client end.
pub enum Stream {
    Server(NamedPipeServer),
    Client(NamedPipeClient),
}

pub struct Listener {
    pub path: PathBuf,
    name: String,
    /// The SID string of the user we run as: the only one let in.
    user: String,
    /// `dacl_for(user)`, NUL-terminated UTF-16, for every instance made.
    sddl: Vec<u16>,
    /// The instance the next client connects to.
    next: Mutex<Option<NamedPipeServer>>,
}

impl Listener {
    /// Refuses unless `PORTCULLIS_EXPERIMENTAL_PIPE=1` (see the module docs), else [`Self::open`].
    pub fn bind(path: &Path) -> Result<Self, BindError> {
        if std::env::var_os("PORTCULLIS_EXPERIMENTAL_PIPE").is_none_or(|v| v != "1") {
            return Err(BindError::Unsupported);
        }
        Self::open(path)
    }

    /// Creates the pipe's first instance; a name someone else made first is refused as in use.
    fn open(path: &Path) -> Result<Self, BindError> {
        let io = |source| BindError::Io {
            path: path.to_owned(),
            source,
        };
        let user = own_user().map_err(io)?;
        let sddl = dacl_for(&user).ok_or_else(|| {
            io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected SID text {user:?}"),
            ))
        })?;
        let sddl: Vec<u16> = sddl.encode_utf16().chain([0]).collect();
        let name = pipe_name(path);
        // The first instance must be new: a name someone else made first is refused, not joined.
        let first = create(&name, &sddl, true).map_err(|source| match source.kind() {
            io::ErrorKind::PermissionDenied => BindError::InUse { path: path.to_owned() },
            _ => io(source),
        })?;
        Ok(Self {
            path: path.to_owned(),
            name,
            user,
            sddl,
            next: Mutex::new(Some(first)),
        })
    }

    /// The next connection from this user. A client of another user (or one whose user cannot
    /// be read) is disconnected at once and logged.
    pub async fn accept(&self) -> io::Result<Stream> {
        loop {
            let taken = self
                .next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            let server = match taken {
                Some(server) => server,
                None => create(&self.name, &self.sddl, false)?,
            };
            // The spare is made before waiting on this one, so an instance is always open: a
            // client that finds none gets "not found" (no gateway), not "busy" (retry). A
            // client that opens the spare first is picked up by the next `accept`.
            let spare = create(&self.name, &self.sddl, false)?;
            *self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(spare);
            server.connect().await?;
            match peer_user(&server, GetNamedPipeClientProcessId) {
                Ok((_, user)) if user == self.user => return Ok(Stream::Server(server)),
                Ok((pid, user)) => tracing::warn!(pid, %user, "local pipe: closed a connection from another user"),
                Err(e) => tracing::warn!(error = %e, "local pipe: cannot read the client's user; closed"),
            }
            // Dropping `server` disconnects that client.
        }
    }

    /// A named pipe disappears with its last handle: nothing to remove.
    pub fn remove_if_ours(&self) {}
}

/// One instance of the pipe, created with our DACL. Every instance gets it: the descriptor
/// given to later instances is what guards them.
fn create(name: &str, sddl: &[u16], first: bool) -> io::Result<NamedPipeServer> {
    let descriptor = SecurityDescriptor::from_sddl(sddl)?;
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: u32::try_from(size_of::<SECURITY_ATTRIBUTES>()).expect("a small struct"),
        lpSecurityDescriptor: descriptor.0,
        bInheritHandle: 0,
    };
    let mut options = ServerOptions::new();
    options.first_pipe_instance(first).reject_remote_clients(true);
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor (`descriptor`) lives
    // until after this call; CreateNamedPipeW reads both during the call and keeps neither.
    unsafe { options.create_with_security_attributes_raw(name, (&raw mut attributes).cast()) }
}

/// A security descriptor made from SDDL; the system allocates it, [`Drop`] frees it.
struct SecurityDescriptor(PSECURITY_DESCRIPTOR);

impl SecurityDescriptor {
    fn from_sddl(sddl: &[u16]) -> io::Result<Self> {
        assert_eq!(sddl.last(), Some(&0), "NUL-terminated");
        let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
        // SAFETY: `sddl` is NUL-terminated UTF-16 (asserted); on success the call stores a
        // LocalAlloc'ed descriptor in `descriptor`, which we own from then on.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &raw mut descriptor,
                null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(descriptor))
    }
}

impl Drop for SecurityDescriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW, freed once.
        unsafe { LocalFree(self.0) };
    }
}

/// The user SID of the process at the other end of `pipe`, with its process id: `pid_of` is
/// `GetNamedPipeClientProcessId` (the server asking) or `GetNamedPipeServerProcessId`.
fn peer_user(
    pipe: &impl AsRawHandle,
    pid_of: unsafe extern "system" fn(HANDLE, *mut u32) -> windows_sys::core::BOOL,
) -> io::Result<(u32, String)> {
    let mut pid = 0u32;
    // SAFETY: `pipe` is a live pipe handle; the call writes one u32.
    if unsafe { pid_of(pipe.as_raw_handle(), &raw mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: plain call; a null result is the error case, handled below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just opened for us, owned (and closed) from here.
    let process = unsafe { OwnedHandle::from_raw_handle(process) };
    Ok((pid, process_user(process.as_handle())?))
}

/// The user SID this process runs as.
fn own_user() -> io::Result<String> {
    // SAFETY: GetCurrentProcess returns a pseudo-handle, valid for the process's whole life.
    let me = unsafe { BorrowedHandle::borrow_raw(GetCurrentProcess()) };
    process_user(me)
}

/// The user SID of `process`'s token, as text (`S-1-5-21-…`).
fn process_user(process: BorrowedHandle<'_>) -> io::Result<String> {
    let mut token: HANDLE = null_mut();
    // SAFETY: `process` is live; on success `token` is a new handle we own.
    if unsafe { OpenProcessToken(process.as_raw_handle(), TOKEN_QUERY, &raw mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the handle just returned, owned (and closed) from here.
    let token = unsafe { OwnedHandle::from_raw_handle(token) };
    let mut len = 0u32;
    // SAFETY: asks only for the size (no buffer); it "fails" with the size in `len`.
    unsafe { GetTokenInformation(token.as_raw_handle(), TokenUser, null_mut(), 0, &raw mut len) };
    if len == 0 {
        return Err(io::Error::last_os_error());
    }
    // u64s: TOKEN_USER holds pointers, so the buffer must be pointer-aligned.
    let mut buf = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: `buf` has room for `len` bytes.
    if unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TokenUser,
            buf.as_mut_ptr().cast(),
            len,
            &raw mut len,
        )
    } == 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call filled `buf` with a TOKEN_USER whose SID points into `buf`, alive here.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text = null_mut();
    // SAFETY: `sid` is valid (above); on success `text` is a LocalAlloc'ed NUL-terminated string.
    if unsafe { ConvertSidToStringSidW(sid, &raw mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `text` is NUL-terminated, read up to the NUL, then freed once.
    let wide = unsafe {
        let mut len = 0;
        while *text.add(len) != 0 {
            len += 1;
        }
        let wide = std::slice::from_raw_parts(text, len).to_vec();
        LocalFree(text.cast());
        wide
    };
    String::from_utf16(&wide).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a SID that is not UTF-16"))
}

/// Resolves once the other end has closed the pipe: polled on a short tick on a duplicate of
/// the handle (runtime readiness cannot wait for a disconnect alone, and this runs only while a
/// connection waits for its last answers). Never resolves if the handle cannot be duplicated.
pub fn hang_up(stream: &Stream) -> impl Future<Output = ()> + Send + 'static {
    let handle = stream.as_handle().try_clone_to_owned();
    async move {
        let Ok(handle) = handle else {
            return std::future::pending().await;
        };
        let mut tick = tokio::time::interval(HANG_UP_TICK);
        loop {
            tick.tick().await;
            if disconnected(&handle) {
                return;
            }
        }
    }
}

/// How often [`hang_up`] looks.
const HANG_UP_TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// The other end is gone: peeking fails with "broken pipe" or "not connected".
fn disconnected(pipe: &OwnedHandle) -> bool {
    // SAFETY: `pipe` is live; no buffer is given, so nothing is read or written.
    let ok = unsafe { PeekNamedPipe(pipe.as_raw_handle(), null_mut(), 0, null_mut(), null_mut(), null_mut()) };
    let gone = [ERROR_BROKEN_PIPE, ERROR_PIPE_NOT_CONNECTED].map(|e| i32::try_from(e).ok());
    ok == 0 && gone.contains(&io::Error::last_os_error().raw_os_error())
}

/// Opens the pipe of the gateway of `path`, if one of this user serves it. Every instance busy
/// means the gateway is making the next one: retried briefly.
pub async fn connect(path: &Path) -> io::Result<Stream> {
    let name = pipe_name(path);
    let mut pause = std::time::Duration::from_millis(5);
    for _ in 0..20 {
        match ClientOptions::new().open(&name) {
            Ok(client) => {
                check_server(&client, &name)?;
                return Ok(Stream::Client(client));
            }
            Err(e) if e.raw_os_error() == i32::try_from(ERROR_PIPE_BUSY).ok() => {}
            Err(e) => return Err(e),
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        "every instance of the pipe stayed busy",
    ))
}

/// Refuses a pipe served by another user's process: its name could have been taken first.
fn check_server(client: &NamedPipeClient, name: &str) -> io::Result<()> {
    let me = own_user()?;
    let (pid, them) = peer_user(client, GetNamedPipeServerProcessId)?;
    if them == me {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{name} is served by another user's process (pid {pid}, {them}), not by this user's gateway"),
    ))
}

impl AsHandle for Stream {
    fn as_handle(&self) -> BorrowedHandle<'_> {
        match self {
            Stream::Server(s) => s.as_handle(),
            Stream::Client(c) => c.as_handle(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Client(c) => Pin::new(c).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_write(cx, data),
            Stream::Client(c) => Pin::new(c).poll_write(cx, data),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_flush(cx),
            Stream::Client(c) => Pin::new(c).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Client(c) => Pin::new(c).poll_shutdown(cx),
        }
    }
}

/// Windows only. CI runs them under Wine (scripts/check-windows.sh), which shows the pipe works
/// but not that it guards: Wine enforces no DACL and ignores FILE_FLAG_FIRST_PIPE_INSTANCE. So
/// they are still the first thing a Windows test run must pass before the pipe's gate goes
/// (SECURITY.md).
#[cfg(test)]
mod tests {
    use super::*;

    const WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

    /// Whether this is Wine rather than Windows: Wine's ntdll exports `wine_get_version`.
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
        // SAFETY: both names are NUL-terminated literals; the module handle of ntdll (loaded in
        // every process) is only passed to GetProcAddress, and the address is only tested.
        unsafe {
            let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
            !ntdll.is_null() && GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast()).is_some()
        }
    }

    #[test]
    fn our_user_is_a_sid_and_its_descriptor_parses() {
        let user = own_user().unwrap();
        let sddl = dacl_for(&user).expect("the SID text has the SID form");
        let wide: Vec<u16> = sddl.encode_utf16().chain([0]).collect();
        SecurityDescriptor::from_sddl(&wide).expect("the system accepts the descriptor");
    }

    #[tokio::test]
    async fn accepts_this_user_and_refuses_a_second_gateway() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connect.sock");
        let listener = Listener::open(&path).unwrap();
        if under_wine() {
            // Wine (what runs these tests in CI) ignores FILE_FLAG_FIRST_PIPE_INSTANCE: a second
            // CreateNamedPipeW with it succeeds there. Only Windows can show the refusal.
            eprintln!(
                "under Wine: the second-gateway refusal is not checked (Wine ignores FILE_FLAG_FIRST_PIPE_INSTANCE)"
            );
        } else {
            assert!(
                matches!(Listener::open(&path), Err(BindError::InUse { .. })),
                "a live pipe is not joined"
            );
        }
        let to = path.clone();
        let client = tokio::spawn(async move { connect(&to).await.map(drop) });
        tokio::time::timeout(WITHIN, listener.accept())
            .await
            .expect("accepted in time")
            .expect("same user is accepted");
        client.await.unwrap().expect("the client accepts its own user's server");
    }

    #[tokio::test]
    async fn hang_up_tells_a_closed_client_from_a_connected_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connect.sock");
        let listener = Listener::open(&path).unwrap();
        let to = path.clone();
        let client = tokio::spawn(async move { connect(&to).await });
        let ours = tokio::time::timeout(WITHIN, listener.accept()).await.unwrap().unwrap();
        let client = client.await.unwrap().unwrap();
        let gone = hang_up(&ours);
        tokio::pin!(gone);
        assert!(
            tokio::time::timeout(4 * HANG_UP_TICK, &mut gone).await.is_err(),
            "a connected client is still there"
        );
        drop(client);
        tokio::time::timeout(WITHIN, gone)
            .await
            .expect("a client that closed its end is seen gone");
    }
}
