//! `portcullis connect` over the gateway's local socket, and what keeps the client whole when
//! the gateway goes away.
//!
//! One task, no thread hops: it waits on the client's stdin and the socket at once and passes
//! each complete line on as it is read, in order (the gateway keeps that order up to dispatch,
//! [`portcullis_gateway::local_conn`]). On the way it notes the little it needs to survive a
//! gateway restart: the client's requests still unanswered, and its `initialize` and
//! `notifications/initialized` lines.
//!
//! When the socket closes: every unanswered request gets a `[portcullis]` error under its id,
//! `connect` waits for a gateway (re-reading gateway.json, with a bounded backoff, starting one
//! when none is running — [`super::start`]), says hello again, replays `initialize` (swallowing
//! its answer) and `notifications/initialized`, and carries on; the client's stdio stays open
//! throughout and its ids are its own as before.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use portcullis_config::gateway_file::GatewayFile;
use portcullis_gateway::http::mcp::RefusalCode;
use portcullis_gateway::local_conn::{Hello, PROTOCOL};
use portcullis_gateway::local_socket;
use portcullis_wire::codec::encode_line_into;
use portcullis_wire::{error_code, LineDecoder, Message, RequestId};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::time::Instant;

use super::sniff::{sniff, Line as SniffedLine};
use super::stdio::{Input, Output};

const MAX_LINE: usize = portcullis_wire::MAX_MESSAGE;
/// Said for each request in flight when the gateway went away.
pub(super) const RESTARTED: &str = "[portcullis] the gateway restarted; the call was not completed";
/// How long `connect` waits for a gateway before it answers requests with an error instead.
const WAIT_FOR_GATEWAY: Duration = Duration::from_secs(30);
/// Between tries while waiting: doubling from the first, up to the last.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(10), Duration::from_millis(250));
/// Without a gateway, how often to look for one again while answering with errors.
const RETRY_WITHOUT_GATEWAY: Duration = Duration::from_secs(2);
/// After losing a gateway, how long to wait for it to come back before starting one.
const RESTART_GRACE: Duration = Duration::from_secs(10);
/// How long a replayed `initialize` may take to be answered.
const REPLAY_WITHIN: Duration = Duration::from_secs(30);
/// After the client's end of input, how long its last answers may take: the gateway's default
/// call timeout and longest hold (the gateway bounds every call by its own settings; this only
/// keeps a relay from outliving a gateway that stopped answering).
const FINISH_WITHIN: Duration = Duration::from_secs(
    portcullis_config::config::DEFAULT_CALL_TIMEOUT_SECS + portcullis_config::config::DEFAULT_MAX_HOLD_SECS,
);

type Sock = local_socket::Stream;

/// What to do when no gateway answers.
pub(super) struct Options {
    pub data_dir: PathBuf,
    pub server: String,
    /// Starts a gateway in the background; `Err` says why it could not.
    pub start: Option<Box<dyn Fn() -> Result<(), String> + Send + Sync>>,
}

pub(super) enum Outcome {
    /// The client closed its stdin.
    Done,
    /// gateway.json names no socket: relay over HTTP instead.
    NoSocket(GatewayFile),
    /// The gateway refused this connection for good (unknown server): said on stderr.
    Refused(String),
}

struct Relay {
    opts: Options,
    stdin: Input,
    in_buf: BytesMut,
    in_lines: LineDecoder,
    stdout: Output,
    out_buf: Vec<u8>,
    /// The client's requests sent and not answered yet.
    in_flight: HashSet<RequestId>,
    /// The client's `initialize` line and id, and its `notifications/initialized`, to replay.
    initialize: Option<(Bytes, RequestId)>,
    initialized: Option<Bytes>,
}

/// A connection to the gateway, hello done.
struct Conn {
    rd: ReadHalf<Sock>,
    wr: WriteHalf<Sock>,
    buf: BytesMut,
    lines: LineDecoder,
}

enum Lost {
    /// stdin ended: the client is done.
    ClientDone,
    /// The socket closed or failed.
    Gateway,
}

pub(super) async fn run(opts: Options, stdin: Input, stdout: Output) -> Outcome {
    let mut relay = Relay {
        opts,
        stdin,
        in_buf: BytesMut::with_capacity(64 * 1024),
        in_lines: LineDecoder::new(MAX_LINE),
        stdout,
        out_buf: Vec::with_capacity(64 * 1024),
        in_flight: HashSet::new(),
        initialize: None,
        initialized: None,
    };
    let mut first = true;
    loop {
        let conn = match relay.reach_gateway(first).await {
            Ok(Some(conn)) => conn,
            Ok(None) => return Outcome::Done,
            Err(outcome) => return outcome,
        };
        first = false;
        match relay.pump(conn).await {
            Lost::ClientDone => return Outcome::Done,
            Lost::Gateway => {
                tracing::info!("the gateway closed the connection; reconnecting");
                relay.fail_in_flight().await;
            }
        }
    }
}

impl Relay {
    /// A connection with the session restored, or `None` when the client ended meanwhile.
    async fn reach_gateway(&mut self, first: bool) -> Result<Option<Conn>, Outcome> {
        let mut started = false;
        let waited = Instant::now();
        loop {
            let deadline = Instant::now() + WAIT_FOR_GATEWAY;
            let mut pause = BACKOFF.0;
            let mut why = String::new();
            while Instant::now() < deadline {
                match self.try_connect().await {
                    Ok(mut conn) => match if first { Ok(()) } else { self.replay(&mut conn).await } {
                        Ok(()) => return Ok(Some(conn)),
                        Err(e) => why = e,
                    },
                    Err(Attempt::NoSocket(file)) if first => return Err(Outcome::NoSocket(file)),
                    Err(Attempt::Refused(RefusalCode::UnknownServer, text)) => return Err(Outcome::Refused(text)),
                    // A gateway that went away is most likely restarting: give it time first.
                    Err(Attempt::NotRunning(e))
                        if !started && self.opts.start.is_some() && (first || waited.elapsed() >= RESTART_GRACE) =>
                    {
                        started = true;
                        tracing::info!("no gateway is running ({e}); starting one");
                        if let Some(start) = &self.opts.start {
                            if let Err(e) = start() {
                                why = e;
                                break;
                            }
                        }
                        continue;
                    }
                    Err(Attempt::NotRunning(e) | Attempt::Refused(_, e)) => why = e,
                    Err(Attempt::NoSocket(_)) => why = "the gateway names no local socket".into(),
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(BACKOFF.1);
            }
            tracing::warn!("no gateway to relay to: {why}");
            // Answer with what to do until one comes.
            if !self.without_gateway(&why).await {
                return Ok(None);
            }
        }
    }

    async fn try_connect(&self) -> Result<Conn, Attempt> {
        let file = GatewayFile::read(&self.opts.data_dir).map_err(|e| Attempt::NotRunning(e.to_string()))?;
        let Some(path) = file.socket.clone() else {
            return Err(Attempt::NoSocket(file));
        };
        let sock = local_socket::connect(&path)
            .await
            .map_err(|e| Attempt::NotRunning(format!("cannot connect to {}: {e}", path.display())))?;
        let (rd, mut wr) = tokio::io::split(sock);
        let hello = Hello {
            portcullis: PROTOCOL,
            server: self.opts.server.clone(),
            token: file.token,
            role: None,
        };
        wr.write_all(&hello.line())
            .await
            .map_err(|e| Attempt::NotRunning(format!("hello: {e}")))?;
        let mut conn = Conn {
            rd,
            wr,
            buf: BytesMut::with_capacity(64 * 1024),
            lines: LineDecoder::new(MAX_LINE),
        };
        let answer = tokio::time::timeout(Duration::from_secs(10), conn.next_line())
            .await
            .map_err(|_| Attempt::NotRunning("the gateway did not answer the hello".into()))?
            .ok_or_else(|| Attempt::NotRunning("the gateway closed the connection at hello".into()))?;
        let value: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
        if value.get("ok") == Some(&Value::Bool(true)) {
            return Ok(conn);
        }
        Err(refused(&value))
    }

    /// The session as the client made it: its `initialize` again (the answer swallowed), then
    /// its `notifications/initialized`.
    async fn replay(&mut self, conn: &mut Conn) -> Result<(), String> {
        let Some((line, id)) = self.initialize.clone() else {
            return Ok(());
        };
        conn.send(&mut self.out_buf, &line).await.map_err(|e| e.to_string())?;
        let deadline = Instant::now() + REPLAY_WITHIN;
        loop {
            let next = tokio::time::timeout_at(deadline, conn.next_line())
                .await
                .map_err(|_| "the replayed initialize was not answered".to_owned())?
                .ok_or_else(|| "the gateway closed the connection during the replay".to_owned())?;
            let answer = Message::parse(next.clone()).ok();
            if answer.as_ref().is_some_and(|m| m.is_response() && m.id() == Some(&id)) {
                if next.windows(8).any(|w| w == b"\"error\":") {
                    tracing::warn!(
                        "the new gateway refused the replayed initialize: {}",
                        String::from_utf8_lossy(&next)
                    );
                }
                break;
            }
            // Anything else the new session says first is the client's.
            self.write_client(&next).await;
        }
        if let Some(line) = self.initialized.clone() {
            conn.send(&mut self.out_buf, &line).await.map_err(|e| e.to_string())?;
        }
        tracing::info!("session restored on the new gateway");
        Ok(())
    }

    /// Relays both ways until one side ends.
    async fn pump(&mut self, mut conn: Conn) -> Lost {
        loop {
            // Lines already buffered first, each side.
            if self.send_client_lines(&mut conn).await.is_err() {
                return Lost::Gateway;
            }
            while let Ok(Some(line)) = conn.lines.decode(&mut conn.buf) {
                self.note_from_gateway(&line);
                self.write_client(&line).await;
            }
            let client_done = tokio::select! {
                read = self.stdin.read_buf(&mut self.in_buf) => matches!(read, Ok(0) | Err(_)),
                read = conn.rd.read_buf(&mut conn.buf) => match read {
                    Ok(0) | Err(_) => return Lost::Gateway,
                    Ok(_) => false,
                },
            };
            if client_done {
                self.finish(conn).await;
                return Lost::ClientDone;
            }
        }
    }

    /// Sends every whole line the client sent, noting what it needs to survive a restart.
    async fn send_client_lines(&mut self, conn: &mut Conn) -> std::io::Result<()> {
        while let Some(line) = self.next_client_line().await {
            self.note_from_client(&line);
            conn.send(&mut self.out_buf, &line).await?;
        }
        Ok(())
    }

    /// stdin ended: what the client asked is still answered before the relay ends (`echo
    /// '<request>' | portcullis connect` gets its answer). A last line without its newline is
    /// sent as a line; the socket's writing half is shut, so the gateway answers what it has
    /// and closes; bounded by [`FINISH_WITHIN`]. A gateway that goes away meanwhile leaves the
    /// rest answered with [`RESTARTED`] — there is no client session left to restore.
    async fn finish(&mut self, mut conn: Conn) {
        if !self.in_buf.is_empty() {
            self.in_buf.extend_from_slice(b"\n");
        }
        let sent = self.send_client_lines(&mut conn).await;
        let _ = conn.wr.shutdown().await;
        let deadline = Instant::now() + FINISH_WITHIN;
        while sent.is_ok() && !self.in_flight.is_empty() {
            while let Ok(Some(line)) = conn.lines.decode(&mut conn.buf) {
                self.note_from_gateway(&line);
                self.write_client(&line).await;
            }
            if self.in_flight.is_empty() {
                break;
            }
            match tokio::time::timeout_at(deadline, conn.rd.read_buf(&mut conn.buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => break,
                Err(_) => {
                    tracing::warn!("requests still unanswered {FINISH_WITHIN:?} after the client's end of input");
                    break;
                }
            }
        }
        self.fail_in_flight().await;
    }

    fn note_from_client(&mut self, line: &Bytes) {
        match sniff(line) {
            SniffedLine::Request { id, initialize } => {
                if initialize {
                    self.initialize = Some((line.clone(), id.clone()));
                }
                self.in_flight.insert(id);
            }
            SniffedLine::Initialized => self.initialized = Some(line.clone()),
            // A cancelled request gets no answer: it is no longer waiting for one.
            SniffedLine::Cancelled { id } => {
                self.in_flight.remove(&id);
            }
            SniffedLine::Response { .. } | SniffedLine::Other => {} // the gateway answers a bad one
        }
    }

    fn note_from_gateway(&mut self, line: &Bytes) {
        if self.in_flight.is_empty() {
            return;
        }
        if let SniffedLine::Response { id } = sniff(line) {
            self.in_flight.remove(&id);
        }
    }

    async fn write_client(&mut self, line: &[u8]) {
        self.out_buf.clear();
        encode_line_into(&mut self.out_buf, line);
        // A client that closed its stdout is noticed on stdin.
        let _ = self.stdout.write_all(&self.out_buf).await;
        let _ = self.stdout.flush().await;
    }

    /// A stdin line over the limit: skipped, and the client told (its id is not known).
    /// The next whole line the client already sent, answering the ones over the limit; `None`
    /// when more must be read first.
    async fn next_client_line(&mut self) -> Option<bytes::Bytes> {
        loop {
            match self.in_lines.decode(&mut self.in_buf) {
                Ok(line) => return line,
                Err(e) => self.line_refused(&e).await,
            }
        }
    }

    async fn line_refused(&mut self, e: &portcullis_wire::LineError) {
        let answer = Message::error_response(None, error_code::PARSE_ERROR, &format!("[portcullis] {e}"));
        self.write_client(answer.bytes()).await;
    }

    /// The gateway went away with these requests unanswered: say so, under their ids.
    async fn fail_in_flight(&mut self) {
        let ids: Vec<RequestId> = self.in_flight.drain().collect();
        for id in ids {
            let answer = Message::error_response(Some(&id), error_code::INTERNAL_ERROR, RESTARTED);
            self.write_client(answer.bytes()).await;
        }
    }

    /// No gateway: answer every request with `why` and what to do, and look for a gateway every
    /// few seconds. `false` when the client ended meanwhile.
    async fn without_gateway(&mut self, why: &str) -> bool {
        let text = format!(
            "[portcullis] no gateway is running ({why}); start it with `portcullis serve` or the \
             desktop app (data dir {}), then call again",
            self.opts.data_dir.display()
        );
        let retry = tokio::time::sleep(RETRY_WITHOUT_GATEWAY);
        tokio::pin!(retry);
        loop {
            loop {
                let Some(line) = self.next_client_line().await else {
                    break;
                };
                if let Ok(msg) = Message::parse(line.clone()) {
                    if msg.is_request() {
                        let answer = Message::error_response(msg.id(), error_code::INTERNAL_ERROR, &text);
                        self.write_client(answer.bytes()).await;
                    }
                }
            }
            tokio::select! {
                read = self.stdin.read_buf(&mut self.in_buf) => match read {
                    Ok(0) | Err(_) => return false,
                    Ok(_) => {}
                },
                () = &mut retry => {
                    if matches!(self.try_connect().await, Ok(_) | Err(Attempt::Refused(..))) {
                        return true;
                    }
                    retry.as_mut().reset(Instant::now() + RETRY_WITHOUT_GATEWAY);
                }
            }
        }
    }
}

enum Attempt {
    NotRunning(String),
    NoSocket(GatewayFile),
    /// The gateway answered the hello with a refusal: why, for programs and for people.
    Refused(RefusalCode, String),
}

/// The hello's refusal: its code (`error.data.code`; a gateway that sends none is taken to
/// refuse for a passing reason) and its words.
fn refused(answer: &Value) -> Attempt {
    let code = answer
        .pointer("/error/data/code")
        .and_then(|code| serde_json::from_value(code.clone()).ok())
        .unwrap_or(RefusalCode::Other);
    let text = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("the gateway refused the connection");
    Attempt::Refused(code, text.to_owned())
}

impl Conn {
    async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            match self.lines.decode(&mut self.buf) {
                Ok(Some(line)) => return Some(line),
                Ok(None) => {}
                Err(_) => continue,
            }
            match self.rd.read_buf(&mut self.buf).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn send(&mut self, out: &mut Vec<u8>, line: &[u8]) -> std::io::Result<()> {
        out.clear();
        encode_line_into(out, line);
        self.wr.write_all(out).await
    }
}
