//! A forwarded request waiting for its answer, and how the answer reaches the client.

use std::future::Future;
use std::sync::Arc;

use portcullis_wire::{error_code, Message, RequestId};
use tokio::time::Instant;

use super::in_flight::Ticket;
use super::{Reply, RequestContext, Session};
use crate::gate::Forwarded;
use crate::queue;
use crate::upstream::{Exchange, Framing};

/// What to do with the final response.
pub(super) enum Finish {
    Plain,
    FilterHidden,
}

/// A forwarded request waiting for its answer.
pub(super) struct PendingReply {
    pub(super) session: Arc<Session>,
    pub(super) id: RequestId,
    /// The request's entry among the session's requests in flight, if its sender is tracked.
    ticket: Option<Ticket>,
    /// The id it went upstream under, once sent (cancels name it).
    wire_id: Option<RequestId>,
    pub(super) forwarded: Option<Forwarded>,
    pub(super) finish: Finish,
    /// When a forwarded `tools/call` is given up on (the call timeout); `None` for other requests.
    deadline: Option<Instant>,
}

/// How long telling the upstream about a timed-out call may take.
const CANCEL_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// `fut`, unless `deadline` passes first (`None`).
async fn until<F: Future>(deadline: Option<Instant>, fut: F) -> Option<F::Output> {
    match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, fut).await.ok(),
        None => Some(fut.await),
    }
}

impl PendingReply {
    pub(super) fn new(
        session: Arc<Session>,
        id: RequestId,
        ticket: Option<Ticket>,
        forwarded: Option<Forwarded>,
    ) -> Self {
        let deadline = forwarded.as_ref().map(|_| Instant::now() + session.call_timeout);
        Self {
            session,
            id,
            ticket,
            wire_id: None,
            forwarded,
            finish: Finish::Plain,
            deadline,
        }
    }

    fn is_final(&self, msg: &Message) -> bool {
        msg.is_response() && msg.id() == Some(&self.id)
    }

    fn complete(&mut self, response: Message) -> Message {
        // The ticket ends here: the id is free again for the client's next request.
        let cancelled = self.ticket.take().is_some_and(|t| t.is_cancelled());
        if let Some(f) = self.forwarded.take() {
            if cancelled {
                f.abandon();
            } else {
                f.finish(&response);
            }
        }
        match self.finish {
            Finish::Plain => response,
            Finish::FilterHidden => self.session.filter_hidden(response),
        }
    }

    /// Sends the request upstream and answers the way the upstream (or the client) wants.
    pub(super) async fn forward(mut self, msg: Message, ctx: &RequestContext) -> Reply {
        let exchange = match self.send_upstream(msg, &ctx.pass_headers).await {
            Ok(exchange) => exchange,
            Err(answer) => return Reply::Json(answer),
        };
        if let Some(sink) = &ctx.sink {
            self.stream_into(exchange, sink.clone(), None);
            return Reply::Sent;
        }
        if !ctx.accepts_sse || (exchange.framing == Some(Framing::Json) && !ctx.stream_now) {
            return Reply::Json(self.collect(exchange).await);
        }
        if ctx.stream_now || exchange.framing == Some(Framing::Sse) {
            let (tx, rx) = queue::client_stream("response stream");
            self.stream_into(exchange, tx, None);
            return Reply::Sse(rx);
        }
        // The framing is ours to choose (stdio upstream): JSON when the answer comes alone,
        // cheaper for the client; a stream as soon as anything comes before it.
        self.adaptive(exchange).await
    }

    /// Sends the request upstream (an HTTP upstream may already answer here), within the
    /// deadline. `Err` is the client's answer: unreachable or timed out.
    pub(super) async fn send_upstream(
        &mut self,
        msg: Message,
        pass_headers: &[(String, String)],
    ) -> Result<Exchange, Message> {
        match until(self.deadline, self.session.upstream.request(msg, pass_headers)).await {
            Some(Ok(exchange)) => {
                if let Some(ticket) = &self.ticket {
                    ticket.sent_as(&exchange.wire_id);
                }
                self.wire_id = Some(exchange.wire_id.clone());
                Ok(exchange)
            }
            Some(Err(e @ crate::upstream::UpstreamError::Refused(_))) => Err(self.refused(&e)),
            Some(Err(e)) => Err(self.unreachable(&e)),
            None => Err(self.timed_out()),
        }
    }

    /// The call timeout passed: cancel the request upstream, fail it, record the failure.
    fn timed_out(&mut self) -> Message {
        let secs = self.session.call_timeout.as_secs();
        let server = &*self.session.server;
        tracing::warn!(server, id = %self.id, secs, "upstream did not answer a tools/call within the call timeout; cancelled");
        let reason = format!("no answer within {secs} s (Portcullis call timeout)");
        // In the background and bounded: telling a hung HTTP server may hang too, and the client's
        // answer must not wait for it.
        let id = self.wire_id.clone().unwrap_or_else(|| self.id.clone());
        let upstream = self.session.upstream.clone();
        tokio::spawn(async move {
            let cancelled = tokio::time::timeout(CANCEL_WITHIN, upstream.cancel(&id, &reason)).await;
            if cancelled.is_err() {
                tracing::debug!(%id, "the upstream did not take the cancel in time");
            }
        });
        let text = format!(
            "[portcullis] upstream {server:?} did not answer within {secs} s (the call timeout, \
             upstream.call_timeout_secs); the call was cancelled"
        );
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, &text);
        self.complete(reply)
    }

    /// Not sent: its answer could have reached another request ([`crate::upstream::UpstreamError::Refused`]).
    fn refused(&mut self, e: &crate::upstream::UpstreamError) -> Message {
        let text = format!("[portcullis] request not forwarded: {e}");
        let reply = Message::error_response(Some(&self.id), error_code::INVALID_REQUEST, &text);
        self.complete(reply)
    }

    pub(super) fn unreachable(&mut self, e: &crate::upstream::UpstreamError) -> Message {
        let text = format!("[portcullis] cannot reach upstream {:?}: {e}", &*self.session.server);
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, &text);
        self.complete(reply)
    }

    /// JSON answer: wait for the response; anything before it has nowhere to go but the outlets.
    async fn collect(mut self, mut exchange: Exchange) -> Message {
        loop {
            match until(self.deadline, exchange.messages.recv()).await {
                Some(Some(msg)) if self.is_final(&msg) => return self.complete(msg),
                Some(Some(msg)) => self.session.outlets.deliver(msg, &self.session.id),
                Some(None) => return self.lost(),
                None => return self.timed_out(),
            }
        }
    }

    /// Waits for the first message: the response alone → JSON; anything else → a stream.
    async fn adaptive(mut self, mut exchange: Exchange) -> Reply {
        let first = match until(self.deadline, exchange.messages.recv()).await {
            Some(Some(first)) => first,
            Some(None) => return Reply::Json(self.lost()),
            None => return Reply::Json(self.timed_out()),
        };
        if self.is_final(&first) {
            return Reply::Json(self.complete(first));
        }
        let (tx, rx) = queue::client_stream("response stream");
        self.stream_into(exchange, tx, Some(first));
        Reply::Sse(rx)
    }

    /// SSE answer: stream related messages into `tx` (after `first`), then the response, then end.
    pub(super) fn stream_into(mut self, mut exchange: Exchange, tx: queue::Sender<Message>, first: Option<Message>) {
        let outlet = (!self.session.stateless).then(|| self.session.outlets.open_post(tx.clone()));
        if let Some(first) = first {
            let _ = tx.send(first);
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tx.closed() => {
                        // Ended for overflow by whoever fed it last (this task or the outlets).
                        if tx.overflowed() {
                            self.client_not_reading().await;
                        } else {
                            self.client_gone().await;
                        }
                        break;
                    }
                    next = until(self.deadline, exchange.messages.recv()) => {
                        let msg = match next {
                            Some(Some(msg)) => msg,
                            Some(None) => {
                                let _ = tx.send(self.lost());
                                break;
                            }
                            None => {
                                let _ = tx.send(self.timed_out());
                                break;
                            }
                        };
                        if self.is_final(&msg) {
                            if let Some(outlet) = outlet {
                                self.session.outlets.close(outlet);
                            }
                            let _ = tx.send(self.complete(msg));
                            break;
                        }
                        if let Err(queue::SendError::Full(_)) = tx.send(msg) {
                            self.client_not_reading().await;
                            break;
                        }
                    }
                }
            }
            if let Some(outlet) = outlet {
                self.session.outlets.close(outlet);
            }
        });
    }

    /// The client stopped reading its response stream, which the queue ended rather than buffer
    /// on: its answer can no longer reach it, so the exchange ends too and the server is told,
    /// in every era, so it stops producing for nobody.
    async fn client_not_reading(&mut self) {
        let server = &*self.session.server;
        tracing::warn!(server, session = %self.session.id, id = %self.id,
            "client is not reading its response stream; ended the stream and cancelled the request");
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        let upstream = self.session.upstream.clone();
        let id = self.wire_id.clone().unwrap_or_else(|| self.id.clone());
        let reason = "[portcullis] the client stopped reading the response";
        let _ = tokio::time::timeout(CANCEL_WITHIN, upstream.cancel(&id, reason)).await;
    }

    /// The client closed the response stream. In the 2026 era that is cancellation.
    async fn client_gone(&mut self) {
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        if self.session.stateless {
            if let Some(wire_id) = self.wire_id.take() {
                self.session.upstream.abandon(&wire_id).await;
            }
        }
    }

    fn lost(&mut self) -> Message {
        let text = "[portcullis] the upstream connection ended before answering";
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, text);
        self.complete(reply)
    }
}
