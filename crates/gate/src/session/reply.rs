//! A forwarded request waiting for its answer, and how the answer reaches the client.
//!
//! Two rules hold on every path here:
//! - a request its sender cancelled gets no answer ([`in_flight::answer`] is the one check, in
//!   [`PendingReply::complete`]); waiting for it stops at the cancel and the stream just ends;
//! - a request nobody waits for any more is cancelled upstream by the one path,
//!   [`PendingReply`]'s `Drop` (a 2026 client that closed its response stream or hung up on a
//!   JSON answer, a task that gave up): the audit row is completed as `cancelled` and the server
//!   is told under the request's wire id, as its transport understands it.

use std::future::Future;
use std::sync::Arc;

use portcullis_wire::{error_code, Message, RequestId};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::in_flight::{self, Ticket};
use super::{Reply, RequestContext, Session};
use crate::gate::{Forwarded, Inspected};
use crate::queue;
use crate::upstream::{Exchange, Framing};

/// What to do with the final response.
pub(super) enum Finish {
    Plain,
    FilterHidden,
    /// A resource, template or prompt list: its hidden entries removed.
    FilterEntries(&'static crate::tools_filter::ListKind),
}

/// A forwarded request waiting for its answer.
pub(super) struct PendingReply {
    pub(super) session: Arc<Session>,
    pub(super) id: RequestId,
    /// The request's entry among the session's requests in flight, if its sender is tracked.
    ticket: Option<Ticket>,
    /// Fires when the sender cancels the request (its ticket's token; never for an untracked one).
    cancelled: CancellationToken,
    /// The id it went upstream under, once sent and until answered (cancels name it).
    wire_id: Option<RequestId>,
    pub(super) forwarded: Option<Forwarded>,
    /// How an answer with no decision row of its own is inspected (an upstream task's result,
    /// [`super::task_answers`]); a forwarded request's is its token's.
    pub(super) answer_check: Option<crate::answers::AnswerCheck>,
    pub(super) finish: Finish,
    /// When a forwarded `tools/call` is given up on (the call timeout); `None` for other requests.
    deadline: Option<Instant>,
    /// Answered, or given up on with everything told: nothing left for `Drop` to do.
    settled: bool,
}

/// How long telling the upstream about a call given up on may take.
const CANCEL_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// `fut`, unless `deadline` passes first (`None`).
async fn until<F: Future>(deadline: Option<Instant>, fut: F) -> Option<F::Output> {
    match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, fut).await.ok(),
        None => Some(fut.await),
    }
}

/// What waiting on an exchange gave.
enum Next {
    Message(Message),
    /// The exchange ended without the response (the upstream went away).
    Ended,
    TimedOut,
    /// The sender cancelled the request.
    Cancelled,
}

impl Reply {
    /// The answer, or none: the sender cancelled the request.
    pub(super) fn answer(answer: Option<Message>) -> Self {
        answer.map_or(Self::Cancelled, Self::Json)
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
        let cancelled = ticket.as_ref().map(Ticket::cancellation).unwrap_or_default();
        Self {
            session,
            id,
            ticket,
            cancelled,
            wire_id: None,
            forwarded,
            answer_check: None,
            finish: Finish::Plain,
            deadline,
            settled: false,
        }
    }

    fn is_final(&self, msg: &Message) -> bool {
        msg.is_response() && msg.id() == Some(&self.id)
    }

    /// Every answer this request gets passes here — the server's, or one of the gateway's own
    /// (timed out, unreachable, refused, upstream gone): recorded, and withheld when the sender
    /// cancelled the request.
    fn complete(&mut self, response: Message) -> Option<Message> {
        self.settled = true;
        self.wire_id = None;
        // The ticket ends here: the id is free again for the client's next request.
        let answer = in_flight::answer(self.ticket.take(), response);
        let answer = match (self.forwarded.take(), answer) {
            // Inspected here, once: what the agent reads is the answer as the policy treats it.
            (Some(f), Some(response)) => f.finish_answer(response),
            (Some(f), None) => {
                f.abandon();
                return None;
            }
            (None, answer) => answer?,
        };
        Some(match self.finish {
            Finish::Plain => answer,
            Finish::FilterHidden => self.session.filter_hidden(answer),
            Finish::FilterEntries(kind) => self.session.gate.filter_entries(&self.session.server, answer, kind),
        })
    }

    /// Sends the request upstream and answers the way the upstream (or the client) wants.
    pub(super) async fn forward(mut self, msg: Message, ctx: &RequestContext) -> Reply {
        if ctx.stream_now && ctx.accepts_sse && !self.sends_inline(ctx) {
            // The `connect` relay waits for each POST's headers to keep message order: give them
            // at once and feed the stream when the upstream answers, so the relay's next request
            // (and its cancel) need not wait for this one's upstream headers.
            // The local-socket entry gives its connection's queue (`sink`): no stream of our own.
            let (tx, rx) = match &ctx.sink {
                Some(sink) => (sink.clone(), None),
                None => {
                    let (tx, rx) = queue::client_stream("response stream");
                    (tx, Some(rx))
                }
            };
            let stream = async move {
                let sent = tokio::select! {
                    // The relay closed the stream: `Drop` gives the request up.
                    () = tx.closed() => return,
                    sent = self.send_upstream(msg) => sent,
                };
                match sent {
                    Ok(exchange) => self.stream_into(exchange, tx, None),
                    Err(Some(answer)) => {
                        let _ = tx.send(answer);
                    }
                    Err(None) => {}
                }
            };
            tokio::spawn(stream.in_current_span());
            return rx.map_or(Reply::Sent, Reply::Sse);
        }
        let exchange = match self.send_upstream(msg).await {
            Ok(exchange) => exchange,
            Err(answer) => return Reply::answer(answer),
        };
        if let Some(sink) = &ctx.sink {
            self.stream_into(exchange, sink.clone(), None);
            return Reply::Sent;
        }
        if !ctx.accepts_sse || (exchange.framing == Some(Framing::Json) && !ctx.stream_now) {
            let status = exchange.status;
            return match (status, self.collect(exchange).await) {
                (Some(status), Some(answer)) => Reply::JsonStatus(status, answer),
                (_, answer) => Reply::answer(answer),
            };
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

    /// Whether `forward` may send from the caller's own task although the context asks for a
    /// stream at once: the answer goes to the connection's queue (`sink`), and the upstream's
    /// send never waits on the server (stdio), so the connection's reader is not held up and
    /// nothing it reads later can overtake the request. A task per call saved.
    fn sends_inline(&self, ctx: &RequestContext) -> bool {
        ctx.sink.is_some() && self.session.upstream.sends_at_once()
    }

    /// Sends the request upstream (an HTTP upstream may already answer here), within the
    /// deadline. `Err` is the client's answer (unreachable, timed out), or none when the sender
    /// cancelled the request first — then it is not sent at all.
    pub(super) async fn send_upstream(&mut self, msg: Message) -> Result<Exchange, Option<Message>> {
        if self.cancelled.is_cancelled() {
            return Err(self.cancelled_by_sender());
        }
        // Written from the call as it goes, never copied from the client's request.
        let param_headers = self.session.param_headers(&msg);
        let cancelled = self.cancelled.clone();
        let sent = tokio::select! {
            biased;
            () = cancelled.cancelled() => return Err(self.cancelled_by_sender()),
            sent = until(self.deadline, self.session.upstream.request(msg, &param_headers)) => sent,
        };
        match sent {
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

    /// The next message of the exchange, unless it ended, the deadline passed or the sender
    /// cancelled (which wins a tie: its answer must not go out).
    /// A request the server sends on the way ([`super::server_asks`]) is decided first, and
    /// comes out only when it may go on to the client.
    async fn next(&mut self, exchange: &mut Exchange) -> Next {
        loop {
            let next = tokio::select! {
                biased;
                () = self.cancelled.cancelled() => Next::Cancelled,
                got = until(self.deadline, exchange.messages.recv()) => match got {
                    Some(Some(msg)) => Next::Message(msg),
                    Some(None) => Next::Ended,
                    None => Next::TimedOut,
                },
            };
            let msg = match next {
                Next::Message(msg) if msg.is_request() => msg,
                Next::Message(msg) if self.is_final(&msg) => {
                    let screened = self.screened_answer(msg).await;
                    return Next::Message(self.inspected_answer(screened).await);
                }
                next => return next,
            };
            let screened = tokio::select! {
                biased;
                () = self.cancelled.cancelled() => return Next::Cancelled,
                screened = self.session.screen(msg) => screened,
            };
            if let Some(msg) = screened {
                return Next::Message(msg);
            }
        }
    }

    /// The final answer, with the MRTR input requests of a 2026-era call decided
    /// ([`super::input_requests`]); the sender's cancel still wins while they are.
    async fn screened_answer(&self, answer: Message) -> Message {
        let Some((caller, method)) = self.forwarded.as_ref().and_then(Forwarded::asker) else {
            return answer;
        };
        let cancelled = self.cancelled.clone();
        tokio::select! {
            biased;
            // Its answer must not go out; the row says `cancelled` when this reply is dropped.
            () = cancelled.cancelled() => answer,
            screened = self.session.screen_answer(answer.clone(), caller, method) => screened,
        }
    }

    /// The final answer inspected ([`crate::answers`]); one the policy holds for a person waits
    /// for their decision here ([`crate::gate::held_answer`]), and the sender's cancel ends the
    /// wait. The row is completed with what was kept when the answer is [`Self::complete`]d.
    async fn inspected_answer(&mut self, answer: Message) -> Message {
        let Some(forwarded) = self.forwarded.as_mut() else {
            return match &self.answer_check {
                Some(check) => crate::gate::treat_unasked(answer, check),
                None => answer,
            };
        };
        if let Some(check) = forwarded.answer_check() {
            // A call answered with an upstream task gives its result later, to `tasks/result`.
            self.session.task_answers.note(&answer, check);
        }
        let held = match forwarded.inspect(answer) {
            Inspected::Ready(answer) => return answer,
            Inspected::Held(held) => held,
        };
        let cancelled = self.cancelled.clone();
        let verdict = self
            .session
            .gate
            .ask_about_answer(&held, async move { cancelled.cancelled().await })
            .await;
        forwarded.settle_held(held, &verdict)
    }

    /// The answer when the exchange ends without the server's response.
    fn ended(&mut self, next: Next) -> Option<Message> {
        match next {
            Next::Message(msg) => self.complete(msg),
            Next::Ended => self.lost(),
            Next::TimedOut => self.timed_out(),
            Next::Cancelled => self.cancelled_by_sender(),
        }
    }

    /// The sender cancelled the request: its own `notifications/cancelled` already went upstream
    /// (translated to the wire id), so the gateway only stops waiting; no answer, the audit row
    /// says `cancelled`.
    fn cancelled_by_sender(&mut self) -> Option<Message> {
        if let Some(wire_id) = self.wire_id.take() {
            self.session.upstream.forget(&wire_id);
        }
        self.settled = true;
        self.ticket = None;
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        None
    }

    /// The gateway gives up on the request: tell the server under the wire id, in the
    /// background and bounded (telling a hung HTTP server may hang too).
    fn cancel_upstream(&mut self, reason: String) {
        let Some(id) = self.wire_id.take() else {
            return;
        };
        let upstream = self.session.upstream.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let tell = async move {
            let told = tokio::time::timeout(CANCEL_WITHIN, upstream.cancel(&id, &reason)).await;
            if told.is_err() {
                tracing::debug!(wire_id = %id, "the upstream did not take the cancel in time");
            }
        };
        runtime.spawn(tell.in_current_span());
    }

    /// The call timeout passed: cancel the request upstream, fail it, record the failure.
    fn timed_out(&mut self) -> Option<Message> {
        let secs = self.session.call_timeout.as_secs();
        let server = self.session.server.clone();
        tracing::warn!(
            secs,
            "upstream did not answer a tools/call within the call timeout; cancelled"
        );
        self.cancel_upstream(format!("no answer within {secs} s (Portcullis call timeout)"));
        let text = format!(
            "[portcullis] upstream {server:?} did not answer within {secs} s (the call timeout, \
             upstream.call_timeout_secs); the call was cancelled"
        );
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, &text);
        self.complete(reply)
    }

    /// Not sent: its answer could have reached another request ([`crate::upstream::UpstreamError::Refused`]).
    fn refused(&mut self, e: &crate::upstream::UpstreamError) -> Option<Message> {
        let text = format!("[portcullis] request not forwarded: {e}");
        let reply = Message::error_response(Some(&self.id), error_code::INVALID_REQUEST, &text);
        self.complete(reply)
    }

    pub(super) fn unreachable(&mut self, e: &crate::upstream::UpstreamError) -> Option<Message> {
        let text = format!("[portcullis] cannot reach upstream {:?}: {e}", &*self.session.server);
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, &text);
        self.complete(reply)
    }

    /// JSON answer: wait for the response; anything before it has nowhere to go but the outlets.
    /// A client that hangs up drops this future, and with it the pending reply (see `Drop`).
    async fn collect(mut self, mut exchange: Exchange) -> Option<Message> {
        loop {
            match self.next(&mut exchange).await {
                Next::Message(msg) if !self.is_final(&msg) => self.session.outlets.deliver(msg, &self.session.id),
                next => return self.ended(next),
            }
        }
    }

    /// Waits for the first message: the response alone → JSON; anything else → a stream.
    async fn adaptive(mut self, mut exchange: Exchange) -> Reply {
        let first = match self.next(&mut exchange).await {
            Next::Message(first) if !self.is_final(&first) => first,
            next => return Reply::answer(self.ended(next)),
        };
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
        let pump = async move {
            loop {
                let next = tokio::select! {
                    () = tx.closed() => None,
                    next = self.next(&mut exchange) => Some(next),
                };
                match next {
                    // Ended for overflow by whoever fed it last (this task or the outlets).
                    None if tx.overflowed() => self.client_not_reading(),
                    // The client closed the stream: `Drop` gives the request up.
                    None => {}
                    Some(Next::Message(msg)) if !self.is_final(&msg) => {
                        if let Err(queue::SendError::Full(_)) = tx.send(msg) {
                            self.client_not_reading();
                        } else {
                            continue;
                        }
                    }
                    Some(next) => {
                        if let Some(outlet) = outlet {
                            self.session.outlets.close(outlet);
                        }
                        if let Some(answer) = self.ended(next) {
                            let _ = tx.send(answer);
                        }
                    }
                }
                break;
            }
            if let Some(outlet) = outlet {
                self.session.outlets.close(outlet);
            }
        };
        tokio::spawn(pump.in_current_span());
    }

    /// Runs an approved call for a gateway task ([`super::tasks`]): the answer is the task's,
    /// not a stream's. Messages the upstream sends about the call (sampling, elicitation,
    /// logging) reach a legacy session's open streams; a stateless caller has none. `None`: the
    /// client cancelled the task first, and the server is told.
    pub(super) async fn answer_for_task(mut self, msg: Message, cancelled: CancellationToken) -> Option<Message> {
        let sent = tokio::select! {
            () = cancelled.cancelled() => return self.given_up_for_task(),
            sent = self.send_upstream(msg) => sent,
        };
        let mut exchange = match sent {
            Ok(exchange) => exchange,
            Err(answer) => return answer,
        };
        loop {
            let next = tokio::select! {
                () = cancelled.cancelled() => return self.given_up_for_task(),
                next = self.next(&mut exchange) => next,
            };
            match next {
                Next::Message(msg) if !self.is_final(&msg) => {
                    if !self.session.stateless {
                        self.session.outlets.deliver(msg, &self.session.id);
                    }
                }
                next => return self.ended(next),
            }
        }
    }

    /// `tasks/cancel` on a task whose call is running: recorded as cancelled, the server told.
    fn given_up_for_task(&mut self) -> Option<Message> {
        self.settled = true;
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        self.cancel_upstream("[portcullis] the client cancelled the task".to_owned());
        None
    }

    /// The client stopped reading its response stream, which the queue ended rather than buffer
    /// on: its answer can no longer reach it, so the exchange ends too and the server is told,
    /// in every era, so it stops producing for nobody.
    fn client_not_reading(&mut self) {
        tracing::warn!("client is not reading its response stream; ended the stream and cancelled the request");
        self.settled = true;
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        self.cancel_upstream("[portcullis] the client stopped reading the response".to_owned());
    }

    fn lost(&mut self) -> Option<Message> {
        let text = "[portcullis] the upstream connection ended before answering";
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, text);
        self.complete(reply)
    }
}

/// Nobody waits for the answer any more: the client closed its response stream or hung up on a
/// JSON answer (its handler was dropped), or the task carrying the request ended. The audit row
/// says `cancelled`; in the 2026 era (and for the `connect` relay's stateless requests) closing
/// the stream is cancellation, so the server is told. A legacy client's disconnect is not a
/// cancel (MCP 2025-03-26 on), so the request runs on there.
impl Drop for PendingReply {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        if self.cancelled.is_cancelled() {
            self.cancelled_by_sender();
            return;
        }
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        if self.session.stateless {
            self.cancel_upstream("[portcullis] the client closed the response stream".to_owned());
        }
    }
}
