//! `portcullis connect` over the local socket ([`crate::local_socket`]): one connection, one
//! client, one JSON-RPC message per line each way.
//!
//! The connection opens with one line from the client, a hello naming the server and the token
//! from gateway.json (`{"portcullis":1,"server":"everything","token":"…"}`); the gateway answers
//! [`ACK`] or a one-line JSON-RPC error whose `data.code` says why ([`RefusalCode`]) and closes.
//! Then the connection drives the same [`Session`] API as the keeper's HTTP entry (`crates/keeper/src/http/mcp.rs`),
//! so no decision is made here:
//! - `initialize` opens a legacy session owned by this connection (ended when it closes);
//! - anything else without one goes to the server's stateless session, with the connection as
//!   the caller (`relay:<random>`, chosen here, so no other client can speak as it);
//! - messages are handled one at a time in reading order up to their dispatch (a request's
//!   `session.request` returns once it went upstream, or was held or refused), so nothing read
//!   later overtakes anything read earlier — a cancel never overtakes its request; answers then
//!   stream concurrently;
//! - every answer and server-initiated message goes into one bounded queue ([`queue`]) per
//!   connection, straight from the session's task ([`RequestContext::sink`]), and one writer
//!   task writes them out in the order they came;
//! - a client that only stops sending (its writing half shut, e.g. `echo '…' | portcullis
//!   connect`) still gets the answers to what it sent: on end of input the connection waits,
//!   bounded by the server's call timeout and the longest hold, until every request read on it
//!   has been answered ([`InFlight`]), then closes;
//! - closing the socket (the whole connection, or the client's hang-up while draining) ends the
//!   queue, which every request in flight on it watches: held calls are withdrawn and recorded
//!   `cancelled`, forwarded ones abandoned; the legacy session ends.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use futures::FutureExt;
use portcullis_wire::codec::{encode_line_into, is_shareable_line};
use portcullis_wire::message::refusal_id;
use portcullis_wire::{error_code, method, Kind, LineDecoder, Message, RequestId};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::gate::Caller;
use crate::held_calls::remote::LinkStreams;
use crate::plane::Plane;
use crate::queue::{self, Budget, Overflow};
use crate::session::caller_for;
use crate::session::{Reply, RequestContext, Session};
use crate::upstream::UpstreamError;

/// The protocol version in the hello.
pub const PROTOCOL: u32 = 1;
/// The gateway's answer to an accepted hello.
pub const ACK: &[u8] = b"{\"portcullis\":1,\"ok\":true}\n";
/// The connection's outgoing queue: several of the largest messages, or many small ones.
const OUT_BUDGET: Budget = Budget {
    bytes: 3 * portcullis_wire::MAX_MESSAGE,
    messages: 8192,
};
/// The writer gathers what is ready into one write, up to this much.
const WRITE_BATCH: usize = 256 * 1024;

/// Why the gateway turned a client away before handling any of its messages: a stable code for
/// programs beside the words for people (`portcullis connect` branches on the code, never on the
/// text). The HTTP entry answers an unknown server with 404 and `{"code":"unknown_server",
/// "error":"…"}`; the local socket's hello refusal carries the code as `error.data.code`
/// ([`crate::local_conn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// The config names no such server.
    UnknownServer,
    /// The hello's token is not this gateway's.
    BadToken,
    /// No hello in time, or not one this gateway speaks.
    BadHello,
    /// A code this build does not know (from a newer gateway).
    #[serde(other)]
    Other,
}

/// The client's first line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Hello {
    pub portcullis: u32,
    /// The server a relay connection speaks to; empty for a keeper link.
    #[serde(default)]
    pub server: String,
    pub token: String,
    /// `held_calls` for a data plane's keeper link ([`crate::held_calls::link`]); absent for a relay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The keeper link's version the data plane speaks ([`crate::held_calls::link::VERSION`]);
    /// absent from the first ones, which speak version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
}

/// The link version a keeper's answer to a link hello says; `None` for a refusal.
fn link_version_of(answer: &[u8]) -> Option<u32> {
    #[derive(Deserialize)]
    struct Ack {
        portcullis: u32,
        ok: bool,
        link: u32,
    }
    if answer == ACK {
        return Some(1);
    }
    let ack: Ack = serde_json::from_slice(answer).ok()?;
    (ack.portcullis == PROTOCOL && ack.ok).then_some(ack.link)
}

impl Hello {
    /// The hello as a line to send.
    pub fn line(&self) -> Vec<u8> {
        crate::held_calls::link::line(self)
    }
}

/// Opens a keeper link on the keeper's local socket at `socket`: the hello with `token`, then
/// its one-line answer, within `within`.
pub async fn open_keeper_link(socket: &std::path::Path, token: &str, within: Duration) -> std::io::Result<LinkStreams> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let opening = async {
        let stream = crate::local_socket::connect(socket).await?;
        let (mut rd, mut wr) = tokio::io::split(stream);
        let hello = Hello {
            portcullis: PROTOCOL,
            server: String::new(),
            token: token.to_owned(),
            role: Some(crate::held_calls::link::ROLE.to_owned()),
            link: Some(crate::held_calls::link::VERSION),
        };
        wr.write_all(&hello.line()).await?;
        let mut buf = BytesMut::with_capacity(4096);
        let answer = loop {
            if let Some(end) = buf.iter().position(|b| *b == b'\n') {
                break buf.split_to(end + 1);
            }
            if buf.len() > 64 * 1024 || rd.read_buf(&mut buf).await? == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the keeper closed before answering the hello",
                ));
            }
        };
        let Some(version) = link_version_of(&answer) else {
            let text = String::from_utf8_lossy(&answer);
            return Err(std::io::Error::other(format!(
                "the keeper refused the link: {}",
                text.trim()
            )));
        };
        Ok(LinkStreams {
            rd: Box::new(rd),
            wr: Box::new(wr),
            buf,
            version,
        })
    };
    tokio::time::timeout(within, opening).await.unwrap_or_else(|_| {
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the keeper did not answer the hello in time",
        ))
    })
}

/// A data plane's one client on stdio (`portcullis connect`): the same line protocol as a
/// socket connection after its hello, on the process's own gateway. Returns when the client's
/// input ended and what it asked was answered (bounded), or its output closed.
pub async fn serve_stdio<R, W>(plane: Arc<Plane>, server: String, rd: R, wr: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let stopping = plane.stopping_token();
    // A pipe's reader leaving shows only as a failed write, which ends the writer and the queue.
    let hang_up = std::future::pending::<()>();
    drive(plane, server, rd, BytesMut::new(), wr, hang_up, stopping).await;
}

/// The connection after its hello: lines in, answers out, until the end (see the module doc).
/// `hang_up` resolves when the client has closed the whole connection (not only its writing
/// half): it ends the wait for answers after end of input.
pub async fn drive<R, W, H>(
    plane: Arc<Plane>,
    server: String,
    mut rd: R,
    mut buf: BytesMut,
    wr: W,
    hang_up: H,
    stopping: CancellationToken,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
    H: Future<Output = ()> + Send,
{
    let (tx, rx) = queue::bounded("local socket connection", OUT_BUDGET, Overflow::End);
    let in_flight = Arc::new(InFlight::default());
    let writer = tokio::spawn(write_loop(wr, rx, in_flight.clone()));
    let mut conn = Conn {
        plane,
        server,
        caller_id: format!("{:016x}{:016x}", rand::random::<u64>(), rand::random::<u64>()),
        tx,
        in_flight,
        legacy: None,
        stateless: None,
    };
    let mut decoder = LineDecoder::new(portcullis_wire::MAX_MESSAGE);
    let mut at_end = false;
    let input_ended = 'read: loop {
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(line)) => conn.handle(line).await,
                Ok(None) => break,
                Err(e) => conn.answer(Message::error_response(
                    None,
                    error_code::PARSE_ERROR,
                    &format!("[portcullis] {e}"),
                )),
            }
        }
        portcullis_wire::codec::make_room(&mut buf);
        tokio::select! {
            read = rd.read_buf(&mut buf), if !at_end => match read {
                // A last line without its newline is a line (`printf '{…}' | portcullis connect`).
                Ok(0) if !buf.is_empty() => {
                    buf.extend_from_slice(b"\n");
                    at_end = true;
                }
                Ok(0) => break 'read true,
                Err(_) => break 'read false,
                Ok(_) => {}
            },
            () = std::future::ready(()), if at_end => break 'read true,
            () = conn.tx.closed() => break 'read false,
            () = stopping.cancelled() => break 'read false,
        }
    };
    if input_ended {
        conn.finish_in_flight(hang_up, &stopping).await;
    }
    // Ending the queue is what every request in flight on this connection watches.
    writer.abort();
    let _ = writer.await;
    if let Some(session) = conn.legacy.take() {
        conn.plane.end_session(&session.id).await;
    }
}

struct Conn {
    plane: Arc<Plane>,
    server: String,
    /// This connection as a sender and caller of stateless requests.
    caller_id: String,
    tx: queue::Sender<Message>,
    /// The client's requests read and not answered yet.
    in_flight: Arc<InFlight>,
    /// The legacy session `initialize` opened on this connection.
    legacy: Option<Arc<Session>>,
    /// The server's shared stateless session, once used.
    stateless: Option<Arc<Session>>,
}

impl Conn {
    fn answer(&self, msg: Message) {
        let _ = self.tx.send(msg);
    }

    /// The client sent all it will: wait until what it asked is answered (and written), it
    /// hangs up, the writer fails, or the gateway stops — bounded by the longest a call may
    /// take here (the server's call timeout plus the longest hold for approval).
    async fn finish_in_flight(&self, hang_up: impl Future<Output = ()>, stopping: &CancellationToken) {
        let config = self.plane.config();
        let bound = config.call_timeout(&self.server) + Duration::from_secs(config.max_hold_secs);
        let answered = async {
            loop {
                let emptied = self.in_flight.emptied.notified();
                if self.in_flight.is_empty() {
                    return;
                }
                emptied.await;
            }
        };
        tokio::select! {
            () = answered => {}
            () = hang_up => tracing::debug!(server = %self.server, "local socket: the client hung up with requests in flight"),
            () = self.tx.closed() => {}
            () = stopping.cancelled() => {}
            () = tokio::time::sleep(bound) => tracing::warn!(server = %self.server, "local socket: requests still unanswered {bound:?} after the client's end of input"),
        }
    }

    async fn handle(&mut self, line: bytes::Bytes) {
        if let Err(why) = crate::limits::check_client_message(&line) {
            let id = refusal_id(&line);
            return self.answer(Message::error_response(
                id.as_ref(),
                error_code::PARSE_ERROR,
                &format!("[portcullis] {why}"),
            ));
        }
        let msg = match Message::parse(line.clone()) {
            Ok(msg) => msg,
            Err(e) => {
                tracing::warn!(server = %self.server, error = %e, "client message refused");
                let id = refusal_id(&line);
                return self.answer(Message::error_response(
                    id.as_ref(),
                    e.code(),
                    &format!("[portcullis] {e}"),
                ));
            }
        };
        let is_initialize = msg.method() == Some(method::INITIALIZE);
        let session = match self.session_for(&msg, is_initialize).await {
            Ok(session) => session,
            Err(answer) => return self.answer(answer),
        };
        let relay = self.relay_key();
        match msg.kind() {
            Kind::Request { .. } => {
                if let Some(id) = msg.id() {
                    self.in_flight.insert(id.clone());
                }
                let ctx = RequestContext {
                    caller: caller_for(&session, Some(relay), &msg),
                    stream_now: !is_initialize,
                    accepts_sse: !is_initialize,
                    // The initialize answer is looked at here (a failed one ends the session).
                    sink: (!is_initialize).then(|| self.tx.clone()),
                };
                let id = msg.id().cloned();
                match session.request(msg, ctx).await {
                    Reply::Sent => {}
                    // A cancelled request gets no answer.
                    Reply::Cancelled => self.in_flight.remove(id.as_ref()),
                    Reply::JsonStatus(_, answer) => self.answer(answer),
                    Reply::Json(answer) => {
                        if is_initialize && matches!(answer.kind(), Kind::Response { is_error: true, .. }) {
                            if let Some(failed) = self.legacy.take() {
                                self.plane.end_session(&failed.id).await;
                            }
                        }
                        self.answer(answer);
                    }
                    Reply::Sse(mut rx) => {
                        let tx = self.tx.clone();
                        tokio::spawn(async move {
                            while let Some(msg) = rx.recv().await {
                                if tx.send(msg).is_err() {
                                    break;
                                }
                            }
                        });
                    }
                }
            }
            Kind::Notification { .. } | Kind::Response { .. } => {
                let caller = if msg.method() == Some(method::CANCELLED) {
                    // The client no longer waits for that answer.
                    self.in_flight.remove(cancelled_id(&msg).as_ref());
                    caller_for(&session, Some(relay), &msg)
                } else {
                    Caller::default()
                };
                if let Err(e) = session.send(msg, &caller).await {
                    tracing::warn!(server = %self.server, error = %e, "cannot pass a client message on");
                }
            }
        }
    }

    fn relay_key(&self) -> &str {
        &self.caller_id
    }

    /// The session a message goes to: a new legacy one for `initialize`, this connection's
    /// legacy one, else the shared stateless one. `Err` is the client's answer.
    async fn session_for(&mut self, msg: &Message, is_initialize: bool) -> Result<Arc<Session>, Message> {
        if is_initialize {
            if let Some(old) = self.legacy.take() {
                self.plane.end_session(&old.id).await;
            }
            let session = match self.plane.open_session(&self.server).await {
                Ok(session) => session,
                Err(UpstreamError::Full(why)) => {
                    return Err(Message::error_response(msg.id(), error_code::INTERNAL_ERROR, &why))
                }
                Err(e) => return Err(start_failed(msg, &e)),
            };
            // Server-initiated messages outside any request (logging, list changes …).
            let mut events = session.open_event_stream();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        next = events.recv() => match next {
                            Some(msg) => if tx.send(msg).is_err() { break },
                            None => break,
                        },
                        () = tx.closed() => break,
                    }
                }
            });
            self.legacy = Some(session.clone());
            return Ok(session);
        }
        if let Some(session) = &self.legacy {
            session.touch();
            return Ok(session.clone());
        }
        if let Some(session) = self.stateless.as_ref().filter(|s| s.is_alive()) {
            return Ok(session.clone());
        }
        match self.plane.stateless_session(&self.server).await {
            Ok(session) => {
                self.stateless = Some(session.clone());
                Ok(session)
            }
            Err(e) => Err(start_failed(msg, &e)),
        }
    }
}

/// The `requestId` a `notifications/cancelled` names.
fn cancelled_id(msg: &Message) -> Option<RequestId> {
    let params: serde_json::Value = msg.params().ok()?;
    RequestId::from_value(params.get("requestId")?)
}

/// The ids of the client's requests read on a connection and not yet answered on it: the reader
/// adds one before dispatch, the writer takes it out once the answer is written (so "none left"
/// means every answer reached the socket), a cancel or a request that gets no answer takes it out.
#[derive(Default)]
struct InFlight {
    ids: Mutex<HashSet<RequestId>>,
    /// Woken when the last one is taken out.
    emptied: Notify,
}

impl InFlight {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn insert(&self, id: RequestId) {
        self.ids().insert(id);
    }

    fn remove(&self, id: Option<&RequestId>) {
        self.remove_all(id.into_iter());
    }

    fn remove_all<'a>(&self, ids: impl Iterator<Item = &'a RequestId>) {
        let mut set = self.ids();
        let before = set.len();
        for id in ids {
            set.remove(id);
        }
        if before > 0 && set.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    fn is_empty(&self) -> bool {
        self.ids().is_empty()
    }
}

fn start_failed(msg: &Message, e: &UpstreamError) -> Message {
    let text = format!("[portcullis] cannot start the upstream server: {e}");
    Message::error_response(msg.id(), error_code::INTERNAL_ERROR, &text)
}

/// Writes the connection's queue out in order, gathering what is already waiting into one write;
/// the answers written are then taken out of `in_flight`.
async fn write_loop<W: AsyncWrite + Unpin>(mut wr: W, mut rx: queue::Receiver<Message>, in_flight: Arc<InFlight>) {
    let mut out = Vec::with_capacity(portcullis_wire::codec::FIRST_CAPACITY);
    let mut answered: Vec<RequestId> = Vec::new();
    while let Some(msg) = rx.recv().await {
        let mut next = Some(msg);
        while let Some(msg) = next.take() {
            note(&msg, &mut answered);
            if is_shareable_line(msg.bytes()) {
                // A large message is written as it is, after what is gathered, not copied into the batch.
                if wr.write_all(&out).await.is_err() || wr.write_all(msg.bytes()).await.is_err() {
                    return;
                }
                out.clear();
                out.push(b'\n');
            } else {
                encode_line_into(&mut out, msg.bytes());
            }
            drop(msg);
            if out.len() < WRITE_BATCH {
                next = rx.recv().now_or_never().flatten();
            }
        }
        if wr.write_all(&out).await.is_err() {
            return;
        }
        in_flight.remove_all(answered.iter());
        answered.clear();
        out.clear();
        if out.capacity() > 4 * WRITE_BATCH {
            out = Vec::with_capacity(portcullis_wire::codec::FIRST_CAPACITY);
        }
    }
}

/// Notes the id of an answer about to be written.
fn note(msg: &Message, answered: &mut Vec<RequestId>) {
    if let (true, Some(id)) = (msg.is_response(), msg.id()) {
        answered.push(id.clone());
    }
}
