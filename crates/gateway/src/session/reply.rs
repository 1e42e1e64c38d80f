//! A forwarded request waiting for its answer, and how the answer reaches the client.

use std::sync::Arc;

use portcullis_wire::{error_code, Message, RequestId};
use tokio::sync::mpsc;

use super::{Reply, RequestContext, Session};
use crate::gate::Forwarded;
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
    pub(super) forwarded: Option<Forwarded>,
    pub(super) finish: Finish,
}

impl PendingReply {
    pub(super) fn new(session: Arc<Session>, id: RequestId, forwarded: Option<Forwarded>) -> Self {
        Self {
            session,
            id,
            forwarded,
            finish: Finish::Plain,
        }
    }

    fn is_final(&self, msg: &Message) -> bool {
        msg.is_response() && msg.id() == Some(&self.id)
    }

    fn complete(&mut self, response: Message) -> Message {
        let cancelled = self.session.lock_cancelled().remove(&self.id);
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
        let exchange = match self.session.upstream.request(msg, &ctx.pass_headers).await {
            Ok(exchange) => exchange,
            Err(e) => return Reply::Json(self.unreachable(&e)),
        };
        if !ctx.accepts_sse || (exchange.framing == Some(Framing::Json) && !ctx.stream_now) {
            return Reply::Json(self.collect(exchange).await);
        }
        if ctx.stream_now || exchange.framing == Some(Framing::Sse) {
            let (tx, rx) = mpsc::unbounded_channel();
            self.stream_into(exchange, tx, None);
            return Reply::Sse(rx);
        }
        // The framing is ours to choose (stdio upstream): JSON when the answer comes alone,
        // cheaper for the client; a stream as soon as anything comes before it.
        self.adaptive(exchange).await
    }

    pub(super) fn unreachable(&mut self, e: &crate::upstream::UpstreamError) -> Message {
        let text = format!("[portcullis] cannot reach upstream {:?}: {e}", &*self.session.server);
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, &text);
        self.complete(reply)
    }

    /// JSON answer: wait for the response; anything before it has nowhere to go but the outlets.
    async fn collect(mut self, mut exchange: Exchange) -> Message {
        while let Some(msg) = exchange.messages.recv().await {
            if self.is_final(&msg) {
                return self.complete(msg);
            }
            self.session.outlets.deliver(msg, &self.session.id);
        }
        self.lost()
    }

    /// Waits for the first message: the response alone → JSON; anything else → a stream.
    async fn adaptive(mut self, mut exchange: Exchange) -> Reply {
        let Some(first) = exchange.messages.recv().await else {
            return Reply::Json(self.lost());
        };
        if self.is_final(&first) {
            return Reply::Json(self.complete(first));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.stream_into(exchange, tx, Some(first));
        Reply::Sse(rx)
    }

    /// SSE answer: stream related messages into `tx` (after `first`), then the response, then end.
    pub(super) fn stream_into(
        mut self,
        mut exchange: Exchange,
        tx: mpsc::UnboundedSender<Message>,
        first: Option<Message>,
    ) {
        let outlet = (!self.session.stateless).then(|| self.session.outlets.open_post(tx.clone()));
        if let Some(first) = first {
            let _ = tx.send(first);
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tx.closed() => {
                        self.client_gone().await;
                        break;
                    }
                    next = exchange.messages.recv() => {
                        let Some(msg) = next else {
                            let _ = tx.send(self.lost());
                            break;
                        };
                        if self.is_final(&msg) {
                            if let Some(outlet) = outlet {
                                self.session.outlets.close(outlet);
                            }
                            let _ = tx.send(self.complete(msg));
                            break;
                        }
                        let _ = tx.send(msg);
                    }
                }
            }
            if let Some(outlet) = outlet {
                self.session.outlets.close(outlet);
            }
        });
    }

    /// The client closed the response stream. In the 2026 era that is cancellation.
    async fn client_gone(&mut self) {
        if let Some(f) = self.forwarded.take() {
            f.abandon();
        }
        if self.session.stateless {
            self.session.upstream.abandon(&self.id).await;
        }
    }

    fn lost(&mut self) -> Message {
        let text = "[portcullis] the upstream connection ended before answering";
        let reply = Message::error_response(Some(&self.id), error_code::INTERNAL_ERROR, text);
        self.complete(reply)
    }
}
