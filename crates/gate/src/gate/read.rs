//! A `tools/call` read once, at the session's entry ([`Call::read`]): one pass over the message
//! after its strict read gives the tool, the params the session itself reads (task, progress,
//! era), the arguments as one `Value` and as the client's exact text, and their keyed digest. The
//! [`Call`] carries all of it through the decision — policy, continuation, held-call question,
//! audit row — so nothing reads the message or digests the arguments again.

use std::borrow::Cow;

use portcullis_wire::canonical::ArgumentDigester;
use portcullis_wire::message::{ToolCallParams, ToolCallRead};
use portcullis_wire::{Message, ParseError, RequestId};
use serde_json::Value;

use super::{Call, Gate};

/// The gate's keyed digester of call arguments (`digest_key.rs` holds its key). Every digest the
/// gate computes goes through it, which is what lets a test count them
/// (`session/read_once_tests.rs`: one per allowed call).
#[derive(Clone)]
pub struct Digester(ArgumentDigester);

impl From<ArgumentDigester> for Digester {
    fn from(digester: ArgumentDigester) -> Self {
        Self(digester)
    }
}

impl Digester {
    /// The keyed digest of `arguments` (`hmac-sha256:<hex>` of their canonical form).
    pub fn digest(&self, arguments: &Value) -> String {
        #[cfg(feature = "test-support")]
        #[cfg(unix)]
        counts::DIGESTS.with(|n| n.set(n.get() + 1));
        self.0.digest(arguments)
    }
}

impl Call {
    /// A client's `tools/call` to `server`, read once: its params as the session reads them,
    /// and the call with its arguments parsed and digested here, once, for every reader after.
    pub fn read(
        server: &str,
        msg: &Message,
        id: &RequestId,
        digester: &Digester,
    ) -> Result<(Self, ToolCallParams), ParseError> {
        let ToolCallRead {
            params,
            arguments: text,
        } = msg.tool_call()?;
        let arguments = match &text {
            Some(text) => parse_arguments(text)?,
            None => Value::Object(serde_json::Map::new()),
        };
        let call = Self {
            server: server.to_owned(),
            method: portcullis_audit::Method::ToolsCall,
            tool: params.name.clone(),
            modern: params.is_modern(),
            request_state: params.request_state.as_ref().map(Value::to_string),
            digest: Some(digester.digest(&arguments)),
            arguments,
            arguments_text: text,
            original_arguments: None,
            request_id: id.clone(),
        };
        Ok((call, params))
    }

    /// A call made here rather than read from a client's message: no text, its digest computed
    /// when asked for.
    pub fn made(server: &str, tool: &str, arguments: Value, request_id: RequestId) -> Self {
        Self {
            server: server.to_owned(),
            method: portcullis_audit::Method::ToolsCall,
            tool: tool.to_owned(),
            arguments,
            arguments_text: None,
            original_arguments: None,
            request_id,
            modern: false,
            request_state: None,
            digest: None,
        }
    }

    /// The keyed digest of `arguments`: the one computed when the call was read, unless the
    /// arguments are not those any more (a person's edit keeps the agent's in
    /// `original_arguments`) or the call was made here.
    pub(crate) fn arguments_digest(&self, digester: &Digester) -> Cow<'_, str> {
        match (&self.digest, &self.original_arguments) {
            (Some(digest), None) => Cow::Borrowed(digest),
            _ => Cow::Owned(digester.digest(&self.arguments)),
        }
    }

    /// [`Call::arguments_digest`], taken out of the call (for its audit row).
    pub(super) fn take_digest(&mut self, digester: &Digester) -> String {
        match self.digest.take() {
            Some(digest) if self.original_arguments.is_none() => digest,
            _ => digester.digest(&self.arguments),
        }
    }
}

impl Gate {
    /// A client's `tools/call` to `server`, read once ([`Call::read`]).
    pub(crate) fn read_call(
        &self,
        server: &str,
        msg: &Message,
        id: &RequestId,
    ) -> Result<(Call, ToolCallParams), ParseError> {
        Call::read(server, msg, id, &self.digester)
    }

    /// The digester a call's digest falls back to ([`Call::arguments_digest`]).
    pub fn digester(&self) -> &Digester {
        &self.digester
    }
}

/// The arguments' text as one value: the only place the gate turns a call's arguments into a
/// `Value`.
fn parse_arguments(text: &[u8]) -> Result<Value, ParseError> {
    #[cfg(feature = "test-support")]
    #[cfg(unix)]
    counts::ARGUMENT_PARSES.with(|n| n.set(n.get() + 1));
    serde_json::from_slice(text).map_err(|e| ParseError::Json(e.to_string()))
}

/// How many digests and argument parses this thread has made: a call is decided on the thread
/// that reads it (the tests' runtime has one), so the counts are that call's.
#[cfg(feature = "test-support")]
#[cfg(unix)]
pub mod counts {
    use std::cell::Cell;

    thread_local! {
        pub(super) static DIGESTS: Cell<usize> = const { Cell::new(0) };
        pub(super) static ARGUMENT_PARSES: Cell<usize> = const { Cell::new(0) };
    }

    /// (digests, argument parses) since the last call, and the counts reset.
    pub fn take() -> (usize, usize) {
        (DIGESTS.with(|n| n.replace(0)), ARGUMENT_PARSES.with(|n| n.replace(0)))
    }
}
