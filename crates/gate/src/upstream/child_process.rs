//! An upstream MCP server run as a child process speaking stdio.
//!
//! Messages are written to stdin by their sender when the pipe has room, else queued for the
//! pipe's writer task, in the order they were sent ([`super::stdin_pipe`]); one reader task
//! splits stdout into lines, and stderr goes to the log. Stopping follows MCP.md: close stdin, wait, then
//! SIGTERM, then SIGKILL — to the child's whole process group, since launchers like `npx` leave the
//! real server as a grandchild.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::BytesMut;
use portcullis_wire::{method, LineDecoder, Message, RequestId};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdout, Command};
use tokio::sync::Mutex as AsyncMutex;

use super::correlator::{Correlator, IdMode};
use super::stdin_pipe::{self, StdinPipe};
use super::{Exchange, UpstreamError};

/// Longest line accepted from a server.
const MAX_LINE: usize = portcullis_wire::MAX_MESSAGE;
/// How much of an oversized line is kept to find its id.
const OVERSIZED_HEAD: usize = 512;
/// How long a server gets after stdin closes, then after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// The caller's environment when the app runs from the AppImage (what its AppRun changed is
/// undone for servers); read once, as the process's environment does not change.
fn host_env() -> &'static portcullis_config::host_env::HostEnv {
    static HOST: std::sync::OnceLock<portcullis_config::host_env::HostEnv> = std::sync::OnceLock::new();
    HOST.get_or_init(portcullis_config::host_env::HostEnv::current)
}

pub struct ChildProcess {
    server: String,
    stdin: Arc<StdinPipe>,
    correlator: Arc<Correlator>,
    alive: Arc<AtomicBool>,
    child: AsyncMutex<Option<Child>>,
    pid: Option<u32>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl ChildProcess {
    pub fn spawn(
        server: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
        ids: IdMode,
        events: crate::queue::Sender<Message>,
    ) -> Result<Self, UpstreamError> {
        let host = host_env();
        let mut cmd = Command::new(command);
        for (name, value) in &host.vars {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        cmd.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = cwd.or(host.cwd.as_deref()) {
            cmd.current_dir(cwd);
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|source| UpstreamError::Spawn {
            command: command.to_owned(),
            source,
        })?;
        let pid = child.id();
        tracing::info!(server, pid, command, "started upstream");

        let correlator = Arc::new(Correlator::new(ids, events));
        let alive = Arc::new(AtomicBool::new(true));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_failed(
                command,
                std::io::Error::other("the child's stdio was not piped"),
            ));
        };
        // A server slow to read its input is still serving: a message that does not fit the
        // backlog fails alone (its client gets the error) and later ones may fit.
        let (stdin, stdin_writer) =
            StdinPipe::for_child(stdin, crate::queue::stream_budget()).map_err(|e| spawn_failed(command, e))?;
        tokio::spawn(stdin_writer);
        tokio::spawn(read_stdout(
            server.to_owned(),
            stdout,
            correlator.clone(),
            alive.clone(),
        ));
        tokio::spawn(super::stderr::log_stderr(
            server.to_owned(),
            stderr,
            stderr_tail.clone(),
        ));
        Ok(Self {
            server: server.to_owned(),
            stdin,
            correlator,
            alive,
            child: AsyncMutex::new(Some(child)),
            pid,
            stderr_tail,
        })
    }

    #[allow(clippy::unused_async, reason = "every transport offers the same async interface")]
    pub async fn request(&self, msg: Message) -> Result<Exchange, UpstreamError> {
        let (wire_msg, messages) = self.correlator.register(msg)?;
        let wire_id = wire_msg.id().cloned().unwrap_or_else(|| RequestId::number(0));
        if let Err(e) = self.write(&wire_msg) {
            self.correlator.forget(&wire_id);
            return Err(e);
        }
        Ok(Exchange {
            framing: None,
            wire_id,
            messages,
            status: None,
        })
    }

    /// A notification or a response, as the session gives it (a client's cancel already names
    /// the wire id: the session translated it).
    #[allow(clippy::unused_async, reason = "every transport offers the same async interface")]
    pub async fn send(&self, msg: Message) -> Result<(), UpstreamError> {
        self.write(&msg)
    }

    /// Stops waiting for the request sent as `wire_id`; the server is not told.
    pub fn forget(&self, wire_id: &RequestId) {
        self.correlator.forget(wire_id);
    }

    /// Stops waiting for the request sent as `wire_id` and sends the server
    /// `notifications/cancelled`, if it was still waiting.
    pub fn cancel(&self, wire_id: &RequestId, reason: &str) {
        if self.correlator.forget(wire_id) {
            let cancel = Message::notification(
                method::CANCELLED,
                &serde_json::json!({ "requestId": wire_id.to_value(), "reason": reason }),
            );
            let _ = self.write(&cancel);
        }
    }

    fn write(&self, msg: &Message) -> Result<(), UpstreamError> {
        if !self.is_alive() {
            return Err(UpstreamError::Gone(self.server.clone()));
        }
        self.stdin.send(msg.bytes()).map_err(|e| match e {
            stdin_pipe::Refused::Full => UpstreamError::Busy(self.server.clone()),
            stdin_pipe::Refused::Closed => UpstreamError::Gone(self.server.clone()),
        })
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Close stdin → wait → SIGTERM → wait → SIGKILL, bounded.
    pub async fn stop(&self) {
        let Some(mut child) = self.child.lock().await.take() else {
            return;
        };
        // Once what was sent before is written, stdin closes: the server sees EOF.
        self.stdin.close();
        if wait_exit(&mut child, GRACE).await {
            return;
        }
        self.signal(Stop::Term);
        if wait_exit(&mut child, GRACE).await {
            return;
        }
        self.signal(Stop::Kill);
        let _ = wait_exit(&mut child, GRACE).await;
    }

    /// Signals the process group on Unix. Off Unix there are no signals: `kill_on_drop` ends
    /// the child when `stop` (or drop) lets it go.
    fn signal(&self, stop: Stop) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let signal = match stop {
                Stop::Term => nix::sys::signal::Signal::SIGTERM,
                Stop::Kill => nix::sys::signal::Signal::SIGKILL,
            };
            tracing::debug!(server = %self.server, pid, ?signal, "signalling upstream process group");
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
        }
        #[cfg(not(unix))]
        let _ = (stop, self.pid);
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // The writer task ends, and the descriptor with it.
        self.stdin.close();
        // Last resort when stop() was not awaited: do not leave grandchildren behind.
        if self.is_alive() {
            self.signal(Stop::Kill);
        }
    }
}

/// The two steps of stopping after stdin closes.
#[derive(Clone, Copy)]
enum Stop {
    Term,
    Kill,
}

async fn wait_exit(child: &mut Child, within: Duration) -> bool {
    matches!(tokio::time::timeout(within, child.wait()).await, Ok(Ok(_)))
}

fn spawn_failed(command: &str, source: std::io::Error) -> UpstreamError {
    UpstreamError::Spawn {
        command: command.to_owned(),
        source,
    }
}

async fn read_stdout(server: String, mut stdout: ChildStdout, correlator: Arc<Correlator>, alive: Arc<AtomicBool>) {
    let mut decoder = LineDecoder::new(MAX_LINE);
    let mut buf = BytesMut::with_capacity(portcullis_wire::codec::FIRST_CAPACITY);
    'read: loop {
        loop {
            // An oversized line is dropped by the decoder; keep its start to learn whose answer it was.
            let head = (buf.len() > MAX_LINE).then(|| buf[..OVERSIZED_HEAD].to_vec());
            match decoder.decode(&mut buf) {
                Ok(Some(line)) => match Message::parse(line.clone()) {
                    Ok(msg) => correlator.dispatch(msg),
                    Err(e) => refused_line(&server, &line, &e, &correlator),
                },
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(server, error = %e, "upstream stdout line dropped");
                    if let Some(id) = head.as_deref().and_then(response_id) {
                        let text = format!(
                            "[portcullis] upstream server {server:?} answered with a message larger than \
                             the {} MiB limit; it was dropped",
                            MAX_LINE / (1024 * 1024)
                        );
                        correlator.fail(&id, &text);
                    }
                }
            }
        }
        portcullis_wire::codec::make_room(&mut buf);
        match stdout.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break 'read,
            Ok(_) => {}
        }
    }
    // `stop` clears `alive` before it closes stdin: an EOF while still alive is a crash.
    if alive.swap(false, Ordering::AcqRel) {
        tracing::warn!(server, "upstream exited on its own (stdout closed)");
    } else {
        tracing::debug!(server, "upstream stopped");
    }
    correlator.fail_all(&format!(
        "[portcullis] upstream server {server:?} exited before answering"
    ));
}

/// A line the strict reading refused: not passed on. When it looks like the answer to a pending
/// request, that request fails now with the reason instead of waiting for the call timeout.
fn refused_line(server: &str, line: &[u8], e: &portcullis_wire::ParseError, correlator: &Correlator) {
    tracing::warn!(server, error = %e, "upstream wrote a non-JSON-RPC (or ambiguous) line to stdout; not passed on");
    let head = &line[..line.len().min(OVERSIZED_HEAD)];
    if let Some(id) = response_id(head) {
        let text = format!("[portcullis] upstream server {server:?} answered with a message that was refused: {e}");
        correlator.fail(&id, &text);
    }
}

/// The id of a response from the first bytes of its line, when they show one: `"id"` before any
/// `"method"` (a server request), and a `"result"` or `"error"` key. Servers put `id` first in
/// practice; when they do not, the call ends at the call timeout instead.
fn response_id(head: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(head);
    if text.contains("\"method\"") || !(text.contains("\"result\"") || text.contains("\"error\"")) {
        return None;
    }
    let after = text
        .split_once("\"id\"")?
        .1
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = if let Some(rest) = after.strip_prefix('"') {
        rest.find('"')? + 2
    } else {
        after.find(|c: char| !(c.is_ascii_digit() || c == '-'))?
    };
    let value: serde_json::Value = serde_json::from_str(&after[..end]).ok()?;
    RequestId::from_value(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_an_oversized_response_comes_from_its_head() {
        let id = |s: &str| response_id(s.as_bytes()).map(|i| i.as_json().to_owned());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"text":"xxxx"#),
            Some("42".into())
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0", "id" : "a-1", "error":{"code":1"#),
            Some("\"a-1\"".into())
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"#),
            None
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":{"content":[{"text":"xxxx"#), None);
    }
}
