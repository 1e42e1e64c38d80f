//! Connections to upstream MCP servers.
//!
//! Every transport offers the same three things to a downstream session:
//! - [`Upstream::request`]: send a request, get an [`Exchange`] — a channel of the messages related
//!   to it (progress, and for HTTP everything on its response stream), ending with its response;
//! - [`Upstream::send`]: send a notification or a response to a server→client request;
//! - the `events` channel given at connect time: server-initiated messages not tied to a request.
//!
//! When an upstream dies, every pending exchange is answered with a JSON-RPC error so no client
//! waits forever.

mod child_process;
mod correlator;
mod legacy_sse;
pub mod list_tools;
pub mod monitor;
mod stderr;
mod stdin_pipe;
mod streamable_http;

use std::sync::Arc;

use portcullis_config::config::ServerConfig;
use portcullis_wire::{Message, RequestId};

pub use child_process::ChildProcess;
pub use correlator::IdMode;
pub use legacy_sse::LegacySse;
pub use streamable_http::StreamableHttp;

/// Messages from the upstream about one request; the last is its response.
pub struct Exchange {
    /// How the upstream framed its answer, when it said (HTTP). `None`: ours to choose (stdio).
    pub framing: Option<Framing>,
    /// The request's id on the wire: the client's own, or the one a shared pipe gave it. Cancels
    /// name this id, so they reach this request and no other client's.
    pub wire_id: RequestId,
    pub messages: crate::queue::Receiver<Message>,
    /// The HTTP status (not 2xx) that carried the upstream's own JSON-RPC answer to a 2026-era
    /// request, for the HTTP entry to mirror; `None` otherwise.
    pub status: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Json,
    Sse,
}

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("cannot start `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("upstream {0} is not running")]
    Gone(String),
    #[error("upstream HTTP error: {0}")]
    Http(String),
    #[error("upstream {0} is not reading its input; the message was refused")]
    Busy(String),
    /// A limit refused a new session; the text says which and what to do.
    #[error("{0}")]
    Full(String),
    #[error("upstream session expired")]
    SessionExpired,
    /// Not sent: its answer could not be told apart from another's.
    #[error("{0}")]
    Refused(String),
}

/// One connection to one upstream server.
#[derive(Clone)]
pub enum Upstream {
    Stdio(Arc<ChildProcess>),
    Http(Arc<StreamableHttp>),
    Sse(Arc<LegacySse>),
}

impl Upstream {
    /// Opens a connection. Server-initiated messages go to `events`.
    pub async fn connect(
        server: &str,
        config: &ServerConfig,
        ids: IdMode,
        events: crate::queue::Sender<Message>,
    ) -> Result<Self, UpstreamError> {
        Ok(match config {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => Self::Stdio(Arc::new(ChildProcess::spawn(
                server,
                command,
                args,
                env,
                cwd.as_deref(),
                ids,
                events,
            )?)),
            ServerConfig::Http { url, headers } => {
                Self::Http(Arc::new(StreamableHttp::new(server, url, headers, events)))
            }
            ServerConfig::Sse { url, headers } => {
                Self::Sse(Arc::new(LegacySse::connect(server, url, headers, events).await?))
            }
        })
    }

    /// `param_headers`: the `Mcp-Param-*` headers an HTTP upstream gets with the request, written
    /// from `msg` itself ([`crate::session::Session::param_headers`]).
    pub async fn request(&self, msg: Message, param_headers: &[(String, String)]) -> Result<Exchange, UpstreamError> {
        match self {
            Self::Stdio(c) => c.request(msg).await,
            Self::Http(c) => c.request(msg, param_headers).await,
            Self::Sse(c) => c.request(msg).await,
        }
    }

    pub async fn send(&self, msg: Message) -> Result<(), UpstreamError> {
        match self {
            Self::Stdio(c) => c.send(msg).await,
            Self::Http(c) => c.send(msg).await,
            Self::Sse(c) => c.send(msg).await,
        }
    }

    /// Stops waiting for the request sent as `id` without telling the server: the client's own
    /// `notifications/cancelled` already went there. A late answer is dropped.
    pub fn forget(&self, id: &RequestId) {
        match self {
            Self::Stdio(c) => c.forget(id),
            Self::Http(_) => {} // the exchange's receiver is dropped: its response stream ends
            Self::Sse(c) => c.forget(id),
        }
    }

    /// Nobody waits for the request sent as `id` (its [`Exchange::wire_id`]) any more — call
    /// timeout, a 2026 client that closed its response stream: tell the server as a well-behaved
    /// client would, so it can stop the work. stdio and legacy SSE: `notifications/cancelled`
    /// under the wire id; Streamable HTTP: the dropped response stream (plus the notification in
    /// a legacy session).
    pub async fn cancel(&self, id: &RequestId, reason: &str) {
        match self {
            Self::Stdio(c) => c.cancel(id, reason),
            Self::Http(c) => c.cancel(id, reason).await,
            Self::Sse(c) => c.cancel(id, reason).await,
        }
    }

    /// Whether [`Upstream::request`] returns once the request is on its way, never waiting on
    /// the server: a child's stdin takes the line at once or keeps it in its backlog, while an
    /// HTTP upstream's send waits for the response headers (legacy SSE: for the POST's 202).
    pub fn sends_at_once(&self) -> bool {
        matches!(self, Self::Stdio(_))
    }

    pub fn is_alive(&self) -> bool {
        match self {
            Self::Stdio(c) => c.is_alive(),
            Self::Http(_) => true,
            Self::Sse(c) => c.is_alive(),
        }
    }

    /// Ends the connection: stops the child or ends the HTTP session.
    pub async fn close(&self) {
        match self {
            Self::Stdio(c) => c.stop().await,
            Self::Http(c) => c.close().await,
            Self::Sse(c) => c.close(),
        }
    }
}
