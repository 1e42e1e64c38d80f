//! The JSON-RPC envelope: raw bytes plus the fields routing needs.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON-RPC id kept as its exact JSON text (`7`, `"abc"`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RequestId(Arc<str>);

impl RequestId {
    /// Builds an id from its raw JSON text; the caller guarantees it is a JSON number or string.
    fn from_raw(raw: &RawValue) -> Result<Self, ParseError> {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"' | b'-' | b'0'..=b'9') => Ok(Self(Arc::from(text))),
            _ => Err(ParseError::BadId(text.to_owned())),
        }
    }

    /// An id minted by the gateway for its own requests.
    pub fn number(n: u64) -> Self {
        Self(Arc::from(n.to_string()))
    }

    /// The id as JSON text, ready to splice into a message.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// The id as a JSON value (for messages built with `serde_json::json!`).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// Parses an id out of a JSON value (e.g. `requestId` of `notifications/cancelled`).
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(_) | Value::String(_) => Some(Self(Arc::from(value.to_string()))),
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
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("a JSON-RPC message must be a JSON object")]
    NotAnObject,
    #[error("JSON-RPC batches are not supported (removed in MCP 2025-06-18)")]
    Batch,
    #[error("invalid JSON-RPC id {0}: expected a number or a string")]
    BadId(String),
    #[error("not a JSON-RPC request, notification or response (no method, result or error)")]
    NoKind,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<std::borrow::Cow<'a, str>>,
    /// Present whatever its value: `"result": null` is a success (JSON-RPC lets a method return
    /// null), not a message without a kind.
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    /// `"error": null` (sent next to a result by some libraries) is no error.
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

impl Message {
    /// Parses one message from its bytes, keeping the bytes.
    pub fn parse(raw: impl Into<Bytes>) -> Result<Self, ParseError> {
        let raw: Bytes = raw.into();
        let kind = Self::parse_kind(&raw)?;
        Ok(Self { raw, kind })
    }

    fn parse_kind(raw: &[u8]) -> Result<Kind, ParseError> {
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
        let env: Envelope<'_> = serde_json::from_slice(raw).map_err(|e| ParseError::Json(e.to_string()))?;
        let id = match env.id {
            Some(raw) if raw.get() == "null" => None,
            Some(raw) => Some(RequestId::from_raw(raw)?),
            None => None,
        };
        match (env.method, id) {
            (Some(method), Some(id)) => Ok(Kind::Request {
                id,
                method: Arc::from(method.as_ref()),
            }),
            (Some(method), None) => Ok(Kind::Notification {
                method: Arc::from(method.as_ref()),
            }),
            (None, id) if env.result.is_some() || env.error.is_some() => Ok(Kind::Response {
                id,
                is_error: env.error.is_some(),
            }),
            (None, _) => Err(ParseError::NoKind),
        }
    }

    /// Builds a message from a JSON value the gateway made itself.
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        Self::parse(serde_json::to_vec(value).map_err(|e| ParseError::Json(e.to_string()))?)
    }

    /// A success response with `result`.
    pub fn response(id: &RequestId, result: &Value) -> Self {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, id.as_json(), result);
        Self {
            raw: Bytes::from(text),
            kind: Kind::Response {
                id: Some(id.clone()),
                is_error: false,
            },
        }
    }

    /// A JSON-RPC error response (protocol faults only; policy outcomes are tool results).
    pub fn error_response(id: Option<&RequestId>, code: i64, message: &str) -> Self {
        let error = serde_json::json!({ "code": code, "message": message });
        let id_text = id.map_or("null", RequestId::as_json);
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id_text},"error":{error}}}"#);
        Self {
            raw: Bytes::from(text),
            kind: Kind::Response {
                id: id.cloned(),
                is_error: true,
            },
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

    /// A copy of this message with its id replaced (id remapping on shared upstreams).
    pub fn with_id(&self, id: &RequestId) -> Result<Self, ParseError> {
        let mut value = self.to_value()?;
        if let Value::Object(map) = &mut value {
            map.insert("id".into(), id.to_value());
        }
        Self::from_value(&value)
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

/// `params` of `tools/call`, as far as the gate reads them.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolCallParams {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<serde_json::Map<String, Value>>,
    /// 2026-07-28 MRTR: the opaque state of a multi-round-trip call.
    #[serde(default, rename = "requestState")]
    pub request_state: Option<Value>,
}

impl ToolCallParams {
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.as_ref()?.get("progressToken")
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
        let a = Message::parse(r#"{"id":1,"method":"m"}"#).unwrap();
        let b = Message::parse(r#"{"id":"1","method":"m"}"#).unwrap();
        assert_ne!(a.id(), b.id(), "number 1 and string \"1\" are different ids");
        assert_eq!(a.id().unwrap().as_json(), "1");
        assert_eq!(b.id().unwrap().as_json(), "\"1\"");
    }

    #[test]
    fn bytes_are_kept_exactly() {
        let text = "{\"id\":1, \"method\":\"m\",\"params\":{\"z\":1,\"a\":\"\u{2028}\"},\"_x\":true}";
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
    #[case(r#"{"jsonrpc":"2.0","id":5,"result":null,"error":{"code":1,"message":"m"}}"#, true)]
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
            r#"{"id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":1},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )
        .unwrap();
        let p: ToolCallParams = msg.params().unwrap();
        assert_eq!(p.name, "echo");
        assert_eq!(p.progress_token(), Some(&serde_json::json!(7)));
        assert!(p.is_modern());
    }
}
