//! The JSON-RPC envelope: raw bytes plus the fields routing needs.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;

use crate::parse_error::ParseError;
use crate::strict::{self, Shape};

/// A JSON-RPC id, kept as the canonical JSON text of its value (`7`, `"abc"`), so ids compare by
/// value: `"\u0061"` and `"a"` are the same id, `1` and `"1"` are not. The bytes a message
/// carries are never rewritten to this form; it is the key ids are matched by.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RequestId(Arc<str>);

impl RequestId {
    /// Reads an id from its raw JSON text: a string (escapes and all) or an integer. Anything
    /// else — `null`, a fraction, an exponent, `-0`, an object — is refused: readers disagree on
    /// whether `1.0` is `1`, and JSON-RPC libraries treat a `null` id as a notification.
    fn from_raw_text(text: &str) -> Result<Self, ParseError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ParseError::Json(e.to_string()))?;
        Self::from_value(&value).ok_or_else(|| match value {
            Value::Null => ParseError::NullId,
            _ => ParseError::BadId(text.to_owned()),
        })
    }

    /// An id minted by the gateway for its own requests.
    pub fn number(n: u64) -> Self {
        Self(Arc::from(n.to_string()))
    }

    /// The id as canonical JSON text, ready to splice into a message.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// The id as a JSON value (for messages built with `serde_json::json!`).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// An id out of a JSON value (e.g. `requestId` of `notifications/cancelled`): a string or an
    /// integer, else `None`.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self(Arc::from(n.to_string()))),
            Value::String(_) => Some(Self(Arc::from(value.to_string()))),
            _ => None,
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What kind of JSON-RPC message this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Request {
        id: RequestId,
        method: Arc<str>,
    },
    Notification {
        method: Arc<str>,
    },
    /// A result or an error. `id` is `None` only for error replies to unparseable requests.
    Response {
        id: Option<RequestId>,
        is_error: bool,
    },
}

/// One JSON-RPC message: the exact bytes plus its parsed [`Kind`].
#[derive(Clone)]
pub struct Message {
    raw: Bytes,
    kind: Kind,
    /// Where the `id` value sits in `raw`, so it can be replaced without touching anything else.
    id_span: Option<Range<usize>>,
}

/// The id to answer a refused message under, when one can be read: a client whose request is
/// refused gets its error at once instead of waiting for an answer that never comes. Read
/// leniently (last duplicate wins); an error under a guessed id is harmless.
pub fn refusal_id(raw: &[u8]) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(raw).ok()?;
    value.get("method")?;
    RequestId::from_value(value.get("id")?)
}

/// How the responses the gateway builds begin, up to the id.
const ID_PREFIX: &str = r#"{"jsonrpc":"2.0","id":"#;

/// The rules for requests and notifications beyond their kind: `jsonrpc` is `"2.0"`, `params`
/// an object (or `null`), and a `tools/call` has no near-miss of the members the gate reads.
fn check_call_shape(env: &strict::Envelope, method: &str) -> Result<(), ParseError> {
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(ParseError::Version);
    }
    if matches!(env.params, Some(Shape::Other | Shape::String)) {
        return Err(ParseError::Params);
    }
    if env.has_result || env.has_error {
        // Readers that look for `result` first would take it for a response.
        return Err(ParseError::Ambiguous(
            "a request or notification carrying a result or an error".into(),
        ));
    }
    let info = &env.params_info;
    let members: &[&str] = match method {
        crate::method::TOOLS_CALL => &strict::TOOL_CALL_PARAMS,
        crate::method::RESOURCES_READ | crate::method::RESOURCES_SUBSCRIBE => &strict::RESOURCE_PARAMS,
        crate::method::PROMPTS_GET => &strict::PROMPT_PARAMS,
        _ => &[],
    };
    if let Some((key, _)) = info.near_misses.iter().find(|(_, member)| members.contains(member)) {
        return Err(ParseError::Ambiguous(format!(
            "{method} params key {key:?} differs only by case from a member the gate reads; some readers take it for that member"
        )));
    }
    if members == strict::RESOURCE_PARAMS && (env.params != Some(Shape::Object) || info.uri != Some(Shape::String)) {
        return Err(ParseError::Door("params.uri of a resources request must be a string"));
    }
    if members == strict::PROMPT_PARAMS {
        if env.params != Some(Shape::Object) || info.name != Some(Shape::String) {
            return Err(ParseError::Door("params.name of prompts/get must be a string"));
        }
        if matches!(info.arguments, Some(Shape::Other | Shape::String)) {
            return Err(ParseError::Door("params.arguments of prompts/get must be an object"));
        }
    }
    if method == crate::method::TOOLS_CALL {
        if env.params != Some(Shape::Object) || info.name != Some(Shape::String) {
            return Err(ParseError::ToolCall("params.name must be a string"));
        }
        if matches!(info.arguments, Some(Shape::Other | Shape::String)) {
            // A server that coerces would read a string or an array as arguments the gate never saw.
            return Err(ParseError::ToolCall("params.arguments must be an object"));
        }
        if matches!(info.meta, Some(Shape::Other | Shape::String)) {
            return Err(ParseError::ToolCall("params._meta must be an object"));
        }
    }
    Ok(())
}

impl Message {
    /// Parses one message from its bytes, keeping the bytes. Refuses what another reader could
    /// take differently ([`crate::strict`]).
    pub fn parse(raw: impl Into<Bytes>) -> Result<Self, ParseError> {
        let raw: Bytes = raw.into();
        let (kind, id_span) = Self::parse_kind(&raw)?;
        Ok(Self { raw, kind, id_span })
    }

    fn parse_kind(raw: &[u8]) -> Result<(Kind, Option<Range<usize>>), ParseError> {
        match raw.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => {}
            Some(b'[') => return Err(ParseError::Batch),
            Some(_) => {
                // Distinguish "not JSON" from "JSON but not an object" for a useful error.
                return match serde_json::from_slice::<serde::de::IgnoredAny>(raw) {
                    Ok(_) => Err(ParseError::NotAnObject),
                    Err(e) => Err(ParseError::Json(e.to_string())),
                };
            }
            None => return Err(ParseError::Json("empty message".into())),
        }
        let env = strict::read(raw)?;
        let span = env.id.as_ref().map(|(_, span)| span.clone());
        let kind = match (&env.method, &env.id) {
            (Some(method), Some((id, _))) => {
                check_call_shape(&env, method)?;
                Kind::Request {
                    id: RequestId::from_raw_text(id)?,
                    method: Arc::from(method.as_str()),
                }
            }
            (Some(method), None) => {
                if !method.starts_with("notifications/") {
                    return Err(ParseError::NotANotification(method.clone()));
                }
                check_call_shape(&env, method)?;
                Kind::Notification {
                    method: Arc::from(method.as_str()),
                }
            }
            (None, id) if env.has_result || env.has_error => {
                if env.has_result && env.has_error {
                    return Err(ParseError::ResultAndError);
                }
                let id = match id {
                    Some((text, _)) if text == "null" => None,
                    Some((text, _)) => Some(RequestId::from_raw_text(text)?),
                    None => None,
                };
                Kind::Response {
                    id,
                    is_error: env.has_error,
                }
            }
            (None, _) => return Err(ParseError::NoKind),
        };
        Ok((kind, span))
    }

    /// Builds a message from a JSON value the gateway made itself.
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        Self::parse(serde_json::to_vec(value).map_err(|e| ParseError::Json(e.to_string()))?)
    }

    /// A success response with `result`.
    pub fn response(id: &RequestId, result: &Value) -> Self {
        let text = format!(r#"{ID_PREFIX}{},"result":{}}}"#, id.as_json(), result);
        Self {
            raw: Bytes::from(text),
            kind: Kind::Response {
                id: Some(id.clone()),
                is_error: false,
            },
            id_span: Some(ID_PREFIX.len()..ID_PREFIX.len() + id.as_json().len()),
        }
    }

    /// A JSON-RPC error response (protocol faults only; policy outcomes are tool results).
    pub fn error_response(id: Option<&RequestId>, code: i64, message: &str) -> Self {
        let error = serde_json::json!({ "code": code, "message": message });
        let id_text = id.map_or("null", RequestId::as_json);
        let text = format!(r#"{ID_PREFIX}{id_text},"error":{error}}}"#);
        Self {
            raw: Bytes::from(text),
            kind: Kind::Response {
                id: id.cloned(),
                is_error: true,
            },
            id_span: Some(ID_PREFIX.len()..ID_PREFIX.len() + id_text.len()),
        }
    }

    /// A notification with `params`.
    pub fn notification(method: &str, params: &Value) -> Self {
        let text = serde_json::json!({ "jsonrpc": "2.0", "method": method, "params": params });
        Self {
            raw: Bytes::from(text.to_string()),
            kind: Kind::Notification {
                method: Arc::from(method),
            },
            id_span: None,
        }
    }

    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The exact bytes of the message.
    pub fn bytes(&self) -> &Bytes {
        &self.raw
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match &self.kind {
            Kind::Request { method, .. } | Kind::Notification { method } => Some(method),
            Kind::Response { .. } => None,
        }
    }

    /// The id, for requests and responses.
    pub fn id(&self) -> Option<&RequestId> {
        match &self.kind {
            Kind::Request { id, .. } => Some(id),
            Kind::Response { id, .. } => id.as_ref(),
            Kind::Notification { .. } => None,
        }
    }

    pub fn is_request(&self) -> bool {
        matches!(self.kind, Kind::Request { .. })
    }

    pub fn is_response(&self) -> bool {
        matches!(self.kind, Kind::Response { .. })
    }

    /// Parses the whole message as a JSON value (only for messages the gateway inspects).
    pub fn to_value(&self) -> Result<Value, ParseError> {
        serde_json::from_slice(&self.raw).map_err(|e| ParseError::Json(e.to_string()))
    }

    /// Parses `params` into `T` (only for the methods the gateway polices).
    pub fn params<T: serde::de::DeserializeOwned>(&self) -> Result<T, ParseError> {
        #[derive(Deserialize)]
        struct P<T> {
            params: T,
        }
        serde_json::from_slice::<P<T>>(&self.raw)
            .map(|p| p.params)
            .map_err(|e| ParseError::Json(e.to_string()))
    }

    /// A copy of this `tools/call` with `params.arguments` replaced (approve with edits). Read
    /// back strictly, like any message: edits that another reader could take differently fail.
    pub fn with_arguments(&self, arguments: &Value) -> Result<Self, ParseError> {
        let mut value = self.to_value()?;
        let params = value
            .get_mut("params")
            .and_then(Value::as_object_mut)
            .ok_or(ParseError::ToolCall("params.name must be a string"))?;
        params.insert("arguments".into(), arguments.clone());
        Self::from_value(&value)
    }

    /// A copy of this `tools/call` that asks for no task: without the 2025-11-25 `task` param and
    /// without the tasks extension among the 2026-07-28 request capabilities. For a call the
    /// gateway already answered with a task of its own, so the upstream answers with the result.
    pub fn without_task_ask(&self) -> Result<Self, ParseError> {
        let mut value = self.to_value()?;
        let Some(params) = value.get_mut("params").and_then(Value::as_object_mut) else {
            return Ok(self.clone());
        };
        params.remove("task");
        let extensions = params
            .get_mut("_meta")
            .and_then(|m| m.get_mut(crate::method::META_CLIENT_CAPABILITIES))
            .and_then(|c| c.get_mut("extensions"))
            .and_then(Value::as_object_mut);
        if let Some(extensions) = extensions {
            extensions.remove(crate::method::TASKS_EXTENSION);
        }
        Self::from_value(&value)
    }

    /// A `tools/call`'s params as the gate reads them and its arguments' exact text (a slice, not a
    /// copy), in one pass over the message after the strict parse checked it: what every reader of
    /// the call (policy, digest, audit, the session's task and re-attach paths) then shares.
    pub fn tool_call(&self) -> Result<ToolCallRead, ParseError> {
        #[derive(Deserialize)]
        struct Read<'a> {
            name: String,
            #[serde(default, rename = "_meta")]
            meta: Option<serde_json::Map<String, Value>>,
            #[serde(default, rename = "requestState")]
            request_state: Option<Value>,
            #[serde(default)]
            task: Option<Value>,
            #[serde(default, borrow)]
            arguments: Option<&'a serde_json::value::RawValue>,
        }
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            params: Read<'a>,
        }
        let p: P<'_> = serde_json::from_slice(&self.raw).map_err(|e| ParseError::Json(e.to_string()))?;
        let Read {
            name,
            meta,
            request_state,
            task,
            arguments,
        } = p.params;
        Ok(ToolCallRead {
            params: ToolCallParams {
                name,
                meta,
                request_state,
                task,
            },
            arguments: arguments.map(|text| self.raw.slice_ref(text.get().as_bytes())),
        })
    }

    /// A `resources/read`, `resources/subscribe` or `prompts/get` read for what the gate decides
    /// on: the URI or the prompt's name, its `_meta`, and a prompt's `arguments` exactly as
    /// written. The strict parse checked the shapes ([`Message::parse`]).
    pub fn door_request(&self) -> Result<DoorRead, ParseError> {
        #[derive(Deserialize)]
        struct Read<'a> {
            #[serde(default)]
            uri: Option<String>,
            #[serde(default)]
            name: Option<String>,
            #[serde(default, rename = "_meta")]
            meta: Option<serde_json::Map<String, Value>>,
            #[serde(default, borrow)]
            arguments: Option<&'a serde_json::value::RawValue>,
            #[serde(default, rename = "requestState")]
            request_state: Option<Value>,
        }
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            params: Read<'a>,
        }
        let p: P<'_> = serde_json::from_slice(&self.raw).map_err(|e| ParseError::Json(e.to_string()))?;
        let subject = match self.method() {
            Some(crate::method::PROMPTS_GET) => p.params.name,
            _ => p.params.uri,
        };
        let subject = subject.ok_or(ParseError::Door("the request names no URI or prompt"))?;
        let arguments = match (self.method(), p.params.arguments) {
            (Some(crate::method::PROMPTS_GET), Some(text)) if text.get() != "null" => {
                Some(self.raw.slice_ref(text.get().as_bytes()))
            }
            _ => None,
        };
        Ok(DoorRead {
            subject,
            meta: p.params.meta,
            arguments,
            request_state: p.params.request_state,
        })
    }

    /// `params.arguments` exactly as written (every digit of a number, every escape), when
    /// present and not `null`: a slice of the message's bytes, not a copy. The strict parse
    /// checked it is an object with no two keys a reader could confuse.
    pub fn arguments(&self) -> Option<Bytes> {
        #[derive(Deserialize)]
        struct Args<'a> {
            #[serde(borrow)]
            arguments: Option<&'a serde_json::value::RawValue>,
        }
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            params: Args<'a>,
        }
        let p: P<'_> = serde_json::from_slice(&self.raw).ok()?;
        let text = p.params.arguments?.get().as_bytes();
        Some(self.raw.slice_ref(text))
    }

    /// A copy of this message with its id replaced (id remapping on shared upstreams): the id's
    /// bytes are swapped, every other byte stays as it came. A message without an id cannot be
    /// re-identified, and is refused rather than sent under the wrong one.
    pub fn with_id(&self, id: &RequestId) -> Result<Self, ParseError> {
        let span = self.id_span.clone().ok_or(ParseError::NoId)?;
        let mut raw = Vec::with_capacity(self.raw.len() - span.len() + id.as_json().len());
        raw.extend_from_slice(&self.raw[..span.start]);
        raw.extend_from_slice(id.as_json().as_bytes());
        raw.extend_from_slice(&self.raw[span.end..]);
        let kind = match &self.kind {
            Kind::Request { method, .. } => Kind::Request {
                id: id.clone(),
                method: method.clone(),
            },
            Kind::Response { is_error, .. } => Kind::Response {
                id: Some(id.clone()),
                is_error: *is_error,
            },
            Kind::Notification { .. } => return Err(ParseError::NoId),
        };
        let end = span.start + id.as_json().len();
        Ok(Self {
            raw: Bytes::from(raw),
            kind,
            id_span: Some(span.start..end),
        })
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("kind", &self.kind)
            .field("raw", &String::from_utf8_lossy(&self.raw))
            .finish()
    }
}

/// `params` of `tools/call`, as far as the gate reads them. The arguments are not among them:
/// they can be most of a 16 MiB message, and are read once, as a slice ([`Message::tool_call`]).
#[derive(Debug, Clone, Deserialize)]
pub struct ToolCallParams {
    pub name: String,
    #[serde(default, rename = "_meta")]
    pub meta: Option<serde_json::Map<String, Value>>,
    /// 2026-07-28 MRTR: the opaque state of a multi-round-trip call.
    #[serde(default, rename = "requestState")]
    pub request_state: Option<Value>,
    /// 2025-11-25: the call asks to run as a task (`{ttl?}`).
    #[serde(default)]
    pub task: Option<Value>,
}

/// A `tools/call` read once ([`Message::tool_call`]).
#[derive(Debug, Clone)]
pub struct ToolCallRead {
    pub params: ToolCallParams,
    /// `params.arguments` exactly as written, when present and not `null` (see [`Message::arguments`]).
    pub arguments: Option<Bytes>,
}

/// A client's request at another door read once ([`Message::door_request`]).
#[derive(Debug, Clone)]
pub struct DoorRead {
    /// The resource URI as sent, or the prompt's name.
    pub subject: String,
    pub meta: Option<serde_json::Map<String, Value>>,
    /// A prompt's `arguments` exactly as written, when present and not `null`.
    pub arguments: Option<Bytes>,
    /// 2026-07-28 MRTR: the state a retry carries (a read or a prompt may need input too).
    pub request_state: Option<Value>,
}

impl DoorRead {
    /// A 2026-07-28 request: it names its protocol version in `_meta`.
    pub fn is_modern(&self) -> bool {
        self.meta
            .as_ref()
            .is_some_and(|m| m.contains_key(crate::method::META_PROTOCOL_VERSION))
    }
}

/// Which tasks flavour a `tools/call` asked for, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAsk {
    /// 2025-11-25: a `task` param; answered with `{task: Task}`, results by `tasks/result`.
    Legacy,
    /// 2026-07-28 tasks extension declared in the request's client capabilities; answered with
    /// `resultType: "task"`, results inline in `tasks/get`.
    Extension,
}

impl ToolCallParams {
    /// What a held request at another door shares with a held tool call: its name (the URI or
    /// the prompt) and its `_meta` (a progress token). It asks for no task and carries no state.
    pub fn of_door(name: String, meta: Option<serde_json::Map<String, Value>>) -> Self {
        Self {
            name,
            meta,
            request_state: None,
            task: None,
        }
    }

    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.as_ref()?.get("progressToken")
    }

    /// Whether the client would take a task for this call instead of its result.
    pub fn task_ask(&self) -> Option<TaskAsk> {
        if self.is_modern() {
            let declared = self
                .meta
                .as_ref()?
                .get(crate::method::META_CLIENT_CAPABILITIES)?
                .get("extensions")?
                .get(crate::method::TASKS_EXTENSION)
                .is_some_and(Value::is_object);
            return declared.then_some(TaskAsk::Extension);
        }
        self.task
            .as_ref()
            .is_some_and(Value::is_object)
            .then_some(TaskAsk::Legacy)
    }

    /// True when the request carries the 2026-07-28 per-request protocol version.
    pub fn is_modern(&self) -> bool {
        self.meta
            .as_ref()
            .is_some_and(|m| m.contains_key(crate::method::META_PROTOCOL_VERSION))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "request")]
    #[case(r#"{"jsonrpc":"2.0","id":"a","method":"x/y","params":{}}"#, "request")]
    #[case(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "notification")]
    #[case(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "response")]
    #[case(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#, "response")]
    fn kinds(#[case] text: &str, #[case] expected: &str) {
        let kind = match Message::parse(text.to_owned()).unwrap().kind() {
            Kind::Request { .. } => "request",
            Kind::Notification { .. } => "notification",
            Kind::Response { .. } => "response",
        };
        assert_eq!(kind, expected);
    }

    #[test]
    fn a_call_asks_for_a_task_by_its_eras_sign_and_the_forwarded_copy_asks_for_none() {
        let legacy = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{},"task":{"ttl":5}}}"#
                .to_owned(),
        )
        .unwrap();
        let modern = Message::parse(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{},"x/other":{}}}}}}"#.to_owned(),
        )
        .unwrap();
        let plain = Message::parse(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"task":{}}}"#.to_owned(),
        )
        .unwrap();
        let ask = |m: &Message| m.params::<ToolCallParams>().unwrap().task_ask();
        assert_eq!(ask(&legacy), Some(TaskAsk::Legacy));
        assert_eq!(ask(&modern), Some(TaskAsk::Extension));
        assert_eq!(ask(&plain), None, "a 2026 request asks only through the extension");
        assert_eq!(ask(&legacy.without_task_ask().unwrap()), None);
        let stripped = modern.without_task_ask().unwrap();
        assert_eq!(ask(&stripped), None);
        let value = stripped.to_value().unwrap();
        let extensions = &value["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
        assert!(
            extensions.get("x/other").is_some(),
            "other extensions stay: {extensions}"
        );
    }

    #[rstest]
    #[case("not json", "not valid JSON")]
    #[case("[1,2]", "batches")]
    #[case("42", "JSON object")]
    #[case(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#, "invalid JSON-RPC id")]
    #[case(r#"{"jsonrpc":"2.0","id":1}"#, "no method, result or error")]
    #[case("", "empty")]
    fn malformed_messages_say_why(#[case] text: &str, #[case] needle: &str) {
        let err = Message::parse(text.to_owned()).unwrap_err().to_string();
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }

    #[test]
    fn ids_keep_their_json_type() {
        let a = Message::parse(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#).unwrap();
        let b = Message::parse(r#"{"jsonrpc":"2.0","id":"1","method":"m"}"#).unwrap();
        assert_ne!(a.id(), b.id(), "number 1 and string \"1\" are different ids");
        assert_eq!(a.id().unwrap().as_json(), "1");
        assert_eq!(b.id().unwrap().as_json(), "\"1\"");
    }

    #[test]
    fn bytes_are_kept_exactly() {
        let text =
            "{\"jsonrpc\":\"2.0\",\"id\":1, \"method\":\"m\",\"params\":{\"z\":1,\"a\":\"\u{2028}\"},\"_x\":true}";
        assert_eq!(Message::parse(text).unwrap().bytes().as_ref(), text.as_bytes());
    }

    #[test]
    fn built_responses_parse_back() {
        let id = RequestId::from_value(&serde_json::json!("abc")).unwrap();
        let msg = Message::response(&id, &serde_json::json!({"ok": true}));
        let reparsed = Message::parse(msg.bytes().clone()).unwrap();
        assert_eq!(reparsed.kind(), msg.kind());
        let err = Message::error_response(None, -32700, "bad \"json\"");
        assert!(Message::parse(err.bytes().clone()).is_ok());
    }

    /// Found by fuzzing (jsonrpc_message): `"result": null` read as "no result", so the response
    /// was refused as neither request nor response and the call it answered never completed.
    #[rstest]
    #[case(r#"{"jsonrpc":"2.0","id":5,"result":null}"#, false)]
    #[case(r#"{"jsonrpc":"2.0","id":5,"result":{},"error":null}"#, false)]
    fn a_null_result_is_a_success_response(#[case] text: &str, #[case] is_error: bool) {
        let id = RequestId::number(5);
        let msg = Message::parse(text.to_owned()).expect("a response");
        assert_eq!(
            msg.kind(),
            &Kind::Response {
                id: Some(id.clone()),
                is_error
            }
        );
        let built = Message::response(&id, &Value::Null);
        assert_eq!(
            Message::parse(built.bytes().clone()).map(|m| m.kind().clone()),
            Ok(built.kind().clone())
        );
    }

    #[test]
    fn tool_call_params_read_meta() {
        let msg = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":1},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )
        .unwrap();
        let p: ToolCallParams = msg.params().unwrap();
        assert_eq!(p.name, "echo");
        assert_eq!(p.progress_token(), Some(&serde_json::json!(7)));
        assert!(p.is_modern());
    }

    fn refused(text: &str) -> ParseError {
        Message::parse(text.to_owned()).expect_err(text)
    }

    /// Class 1 of the security issue: calls another reader executes must be calls here too.
    #[rstest]
    #[case(
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"wipe"}}"#,
        ParseError::NullId
    )]
    #[case(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"wipe"}}"#, ParseError::NotANotification("tools/call".into()))]
    #[case(r#"{"jsonrpc":"2.0","method":"ping"}"#, ParseError::NotANotification("ping".into()))]
    #[case(r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, ParseError::BadId("1.0".into()))]
    #[case(r#"{"jsonrpc":"2.0","id":1e0,"method":"ping"}"#, ParseError::BadId("1e0".into()))]
    #[case(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#, ParseError::BadId("-0".into()))]
    #[case(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, ParseError::BadId("true".into()))]
    #[case(r#"{"id":1,"method":"ping"}"#, ParseError::Version)]
    #[case(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, ParseError::Version)]
    #[case(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["wipe",{}]}"#,
        ParseError::Params
    )]
    #[case(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"wipe"}"#,
        ParseError::Params
    )]
    #[case(
        r#"{"jsonrpc":"2.0","id":5,"result":null,"error":{"code":1,"message":"m"}}"#,
        ParseError::ResultAndError
    )]
    #[case(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"},"result":{}}"#, ParseError::Ambiguous("a request or notification carrying a result or an error".into()))]
    #[case(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","_meta":1}}"#,
        ParseError::ToolCall("params._meta must be an object")
    )]
    fn messages_other_readers_execute_are_never_notifications(#[case] text: &str, #[case] expected: ParseError) {
        assert_eq!(refused(text), expected);
    }

    /// Class 2: keys that collide under case folding or repeat, at any depth, and near-misses
    /// of the members the gateway reads.
    #[rstest]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"wipe"}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"wipe"}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"wipe"}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call"}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"result":{},"Method":"tools/call","Params":{}}"#)]
    #[case(r#"{"jsonrpc":"2.0","ID":1,"method":"notifications/x"}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/tmp/a","PATH":"/etc"}}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{},"argumentſ":{"path":"/etc"}}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","Arguments":{"path":"/etc"}}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"a":[{"k":1,"\u212a":2}]}}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"b":1,"B":2}}}"#)]
    #[case(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"params":{}}"#)]
    fn colliding_keys_are_refused(#[case] text: &str) {
        assert!(matches!(refused(text), ParseError::Ambiguous(_)), "{text}");
    }

    #[test]
    fn many_keys_are_checked_through_the_folded_set() {
        let mut keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let ok = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{}}}}}"#,
            keys.join(",")
        );
        assert!(Message::parse(ok).is_ok());
        keys.push("\"K7\":0".into());
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{}}}}}"#,
            keys.join(",")
        );
        assert!(matches!(refused(&bad), ParseError::Ambiguous(_)));
    }

    #[test]
    fn a_near_miss_of_a_member_is_refused_only_on_the_methods_the_gate_reads() {
        // The gate reads `name` of prompts/get and `uri` of resources/read: `Name` or `URI`
        // alone is that member to Go's encoding/json, so it is refused there.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"Name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","URI":"file:///b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"Uri":"file:///b"}}"#,
        ] {
            assert!(matches!(refused(text), ParseError::Ambiguous(_)), "{text}");
        }
        // A method the gate does not read is the server's business; and `uri` is not a member
        // of prompts/get.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x/get","params":{"Name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"a","Names":1,"URI":2}}"#,
        ] {
            assert!(Message::parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn a_door_request_names_what_it_reads() {
        let read =
            Message::parse(r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a%2Fb"}}"#)
                .unwrap()
                .door_request()
                .unwrap();
        assert_eq!(read.subject, "file:///a%2Fb");
        assert!(read.arguments.is_none());
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"n": 1.50}}}"#;
        let read = Message::parse(text).unwrap().door_request().unwrap();
        assert_eq!(read.subject, "p");
        assert_eq!(read.arguments.as_deref(), Some(&br#"{"n": 1.50}"#[..]));
        for (text, why) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#,
                "params.uri of a resources request must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":7}}"#,
                "params.uri of a resources request must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":["p"]}}"#,
                "params.name of prompts/get must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":"{}"}}"#,
                "params.arguments of prompts/get must be an object",
            ),
        ] {
            assert_eq!(refused(text), ParseError::Door(why), "{text}");
        }
    }

    #[test]
    fn arguments_must_be_an_object() {
        let parse = |args: &str| {
            Message::parse(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{args}}}}}"#
            ))
        };
        let refused = ParseError::ToolCall("params.arguments must be an object");
        assert_eq!(parse(r#""{\"path\":\"/etc\"}""#).err(), Some(refused.clone()));
        assert_eq!(parse("[1]").err(), Some(refused));
        let arguments = |args| parse(args).unwrap().arguments();
        assert_eq!(arguments("null"), None);
        assert_eq!(arguments(r#"{"a":1}"#).as_deref(), Some(&br#"{"a":1}"#[..]));
        let no_name = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#;
        assert_eq!(
            refused_text(no_name),
            ParseError::ToolCall("params.name must be a string")
        );
        let no_params = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#;
        assert_eq!(
            refused_text(no_params),
            ParseError::ToolCall("params.name must be a string")
        );
    }

    fn refused_text(text: &str) -> ParseError {
        Message::parse(text.to_owned()).expect_err(text)
    }

    /// Class 3 / MCP interop: ids compare by value, whatever escapes the sender used.
    #[rstest]
    #[case(r#""\u0061bc""#, r#""abc""#)]
    #[case(r#""x\/y""#, r#""x/y""#)]
    #[case(r#""caf\u00e9""#, "\"caf\u{e9}\"")]
    #[case("18446744073709551615", "18446744073709551615")]
    #[case("-7", "-7")]
    fn ids_compare_by_value(#[case] written: &str, #[case] canonical: &str) {
        let msg = Message::parse(format!(r#"{{"jsonrpc":"2.0","id":{written},"method":"ping"}}"#)).unwrap();
        assert_eq!(msg.id().unwrap().as_json(), canonical);
        assert!(
            String::from_utf8_lossy(msg.bytes()).contains(written),
            "the bytes keep the sender's spelling"
        );
        let answer = Message::parse(format!(r#"{{"jsonrpc":"2.0","id":{canonical},"result":{{}}}}"#)).unwrap();
        assert_eq!(answer.id(), msg.id());
    }

    #[test]
    fn with_id_swaps_only_the_id_bytes() {
        let text = r#"{"jsonrpc":"2.0", "id" : "\u0061",  "method":"m","params":{"z":1,"a":[1.50,"\u2028"]}}"#;
        let msg = Message::parse(text).unwrap();
        let swapped = msg.with_id(&RequestId::number(42)).unwrap();
        assert_eq!(
            std::str::from_utf8(swapped.bytes()).unwrap(),
            text.replace(r#""\u0061""#, "42")
        );
        assert_eq!(swapped.id().unwrap().as_json(), "42");
        let back = swapped.with_id(msg.id().unwrap()).unwrap();
        assert_eq!(back.id(), msg.id());
        assert!(Message::parse(back.bytes().clone()).is_ok());
        let note = Message::parse(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).unwrap();
        assert_eq!(note.with_id(&RequestId::number(1)).unwrap_err(), ParseError::NoId);
    }

    #[test]
    fn a_refused_request_is_answered_under_its_id_when_it_has_one() {
        let dup = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","Name":"b"}}"#;
        assert!(Message::parse(dup.to_vec()).is_err());
        assert_eq!(refusal_id(dup), Some(RequestId::number(7)));
        assert_eq!(refusal_id(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#), None);
        assert_eq!(
            refusal_id(br#"{"jsonrpc":"2.0","id":7,"result":{},"error":{}}"#),
            None,
            "not a request"
        );
        assert_eq!(refusal_id(b"not json"), None);
    }

    #[test]
    fn a_tool_call_is_read_in_one_pass_as_its_parts_are() {
        let msg = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay","arguments":{"amount":1.50,"to":"\u0061"},"requestState":{"s":1},"task":{"ttl":5},"_meta":{"progressToken":7}}}"#,
        )
        .unwrap();
        let read = msg.tool_call().unwrap();
        let parts: ToolCallParams = msg.params().unwrap();
        assert_eq!(read.params.name, parts.name);
        assert_eq!(read.params.meta, parts.meta);
        assert_eq!(read.params.request_state, parts.request_state);
        assert_eq!(read.params.task, parts.task);
        assert_eq!(read.arguments, msg.arguments());
        assert_eq!(
            read.arguments.as_deref(),
            Some(&br#"{"amount":1.50,"to":"\u0061"}"#[..])
        );
        let bare =
            Message::parse(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":null}}"#)
                .unwrap();
        let read = bare.tool_call().unwrap();
        assert_eq!((read.arguments, read.params.meta), (None, None));
    }

    #[test]
    fn raw_arguments_keep_every_digit() {
        let msg = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay","arguments":{"amount":100000000000000000001}}}"#,
        )
        .unwrap();
        let arguments = msg.arguments().unwrap();
        assert_eq!(&arguments[..], br#"{"amount":100000000000000000001}"#);
        let at = msg.bytes().len() - arguments.len() - 2;
        assert_eq!(
            arguments.as_ptr(),
            msg.bytes()[at..].as_ptr(),
            "a slice of the message, not a copy"
        );
    }
}
