//! The JSON-RPC envelope (`portcullis_wire::Message`, `RequestId`, `canonical`).
//!
//! Checks, for any bytes:
//! - parsing never panics, and a parsed message keeps its bytes exactly;
//! - the classification (request / notification / response, id, method, is_error) of a message the
//!   gateway accepts agrees with a plain reading of the same JSON as a `serde_json::Value` (what it
//!   refuses, and why, is the `strict_reader` target's business);
//! - messages the gateway builds from a parsed one (response, error response, id remapping,
//!   notification) parse back to what was meant, the id spliced in unchanged;
//! - `tools/call` params are read without panicking, and the argument digest does not depend on
//!   key order while the canonical form reads back as the same JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis_fuzz::same_json;
use portcullis_wire::message::ToolCallParams;
use portcullis_wire::{canonical, method, Kind, Message, RequestId};
use serde_json::{json, Map, Value};

fuzz_target!(|data: &[u8]| {
    let parsed = Message::parse(data.to_vec());
    let Ok(msg) = parsed else { return };
    // An accepted message has no repeated keys, so the plain reading sees exactly what it holds.
    let value = serde_json::from_slice::<Value>(data).expect("an accepted message is JSON");
    assert_eq!(Ok(classify(&msg)), reference(&value), "classification of {value}");
    assert_eq!(msg.bytes().as_ref(), data, "bytes kept exactly");
    check_builders(&msg);
    if msg.method() == Some(method::TOOLS_CALL) {
        if let Ok(params) = msg.params::<ToolCallParams>() {
            let _ = (params.progress_token(), params.is_modern());
            if let Some(arguments) = msg.arguments() {
                let arguments: Value = serde_json::from_slice(&arguments).expect("accepted arguments are JSON");
                check_canonical(&arguments);
            }
        }
    }
});

/// Kind, id (as a value) and method: what the classification decided.
#[derive(Debug, PartialEq)]
enum Class {
    Request(Value, String),
    Notification(String),
    Response(Option<Value>, bool),
}

fn classify(msg: &Message) -> Class {
    let id = |id: &RequestId| serde_json::from_str::<Value>(id.as_json()).expect("an id is JSON text");
    match msg.kind() {
        Kind::Request { id: i, method } => Class::Request(id(i), method.to_string()),
        Kind::Notification { method } => Class::Notification(method.to_string()),
        Kind::Response { id: i, is_error } => Class::Response(i.as_ref().map(id), *is_error),
    }
}

/// JSON-RPC 2.0 read off a parsed value: `method` makes a request (with a non-null id) or a
/// notification; otherwise a `result` (whatever its value, `null` included) or a non-null
/// `error` makes a response. An id must be a number or a string.
fn reference(value: &Value) -> Result<Class, ()> {
    let object = value.as_object().ok_or(())?;
    let present = |key| object.get(key).filter(|v: &&Value| !v.is_null());
    let id = match present("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => Some(id.clone()),
        Some(_) => return Err(()),
        None => None,
    };
    let method = match present("method") {
        Some(Value::String(m)) => Some(m.clone()),
        Some(_) => return Err(()),
        None => None,
    };
    match (method, id) {
        (Some(m), Some(id)) => Ok(Class::Request(id, m)),
        (Some(m), None) => Ok(Class::Notification(m)),
        (None, id) => {
            let is_error = present("error").is_some();
            if object.contains_key("result") || is_error {
                Ok(Class::Response(id, is_error))
            } else {
                Err(())
            }
        }
    }
}

fn check_builders(msg: &Message) {
    let reply = |built: &Message| Message::parse(built.bytes().clone()).expect("a built message parses");
    if let Some(id) = msg.id() {
        let ok = reply(&Message::response(id, &json!({"content": []})));
        assert_eq!(
            ok.kind(),
            &Kind::Response {
                id: Some(id.clone()),
                is_error: false
            }
        );
        let null = reply(&Message::response(id, &Value::Null));
        assert_eq!(
            null.kind(),
            &Kind::Response {
                id: Some(id.clone()),
                is_error: false
            }
        );
        let err = reply(&Message::error_response(Some(id), -32600, "bad \"request\"\n"));
        assert_eq!(
            err.kind(),
            &Kind::Response {
                id: Some(id.clone()),
                is_error: true
            }
        );
        // Re-parsing the id's own text gives the same id back.
        let value = id.to_value();
        if !value.is_null() && !id.as_json().contains('\\') {
            let again = RequestId::from_value(&value).expect("a number or string id");
            let back: Value = serde_json::from_str(again.as_json()).expect("an id is JSON text");
            assert!(same_json(&back, &value), "{back} is not {value}");
        }
        if msg.to_value().is_ok() {
            let remapped = msg.with_id(&RequestId::number(7)).expect("remapping a parsed message");
            assert_eq!(remapped.id(), Some(&RequestId::number(7)));
            assert_eq!(remapped.method(), msg.method());
            assert_eq!(remapped.is_response(), msg.is_response());
        }
    }
    // Only `notifications/*` may go without an id (anything else is refused as a notification).
    if let Some(method) = msg.method().filter(|m| m.starts_with("notifications/")) {
        let note = reply(&Message::notification(method, &json!({"x": 1})));
        assert_eq!(note.kind(), &Kind::Notification { method: method.into() });
    }
}

fn check_canonical(arguments: &Value) {
    let text = canonical::canonical_json(arguments);
    let back: Value = serde_json::from_str(&text).expect("canonical JSON parses");
    assert!(
        same_json(&sorted(arguments), &back),
        "canonical form reads back: {text}"
    );
    assert_eq!(canonical::digest(arguments), canonical::digest(&reversed(arguments)));
}

fn sorted(value: &Value) -> Value {
    reorder(value, |entries| entries.sort_by(|a, b| a.0.cmp(&b.0)))
}

fn reversed(value: &Value) -> Value {
    reorder(value, |entries| entries.reverse())
}

fn reorder(value: &Value, order: fn(&mut Vec<(String, Value)>)) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.iter().map(|(k, v)| (k.clone(), reorder(v, order))).collect();
            order(&mut entries);
            Value::Object(entries.into_iter().collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| reorder(v, order)).collect()),
        scalar => scalar.clone(),
    }
}
