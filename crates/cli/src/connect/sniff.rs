//! The little `connect` reads of each line it relays: the id, whether it is a request or an
//! answer, and the method — read in one lenient pass that skips the rest, instead of the strict
//! parse (which the gateway does on every client line anyway, and is the gate's; nothing is
//! decided here). A line this cannot read is passed on unnoted: the gateway answers a bad client
//! line itself, and the gateway's own lines are well formed.

use std::borrow::Cow;

use portcullis_wire::RequestId;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// What a line is, as far as `connect` cares.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    Request {
        id: RequestId,
        initialize: bool,
    },
    Response {
        id: RequestId,
    },
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled` for this request id.
    Cancelled {
        id: RequestId,
    },
    Other,
}

pub(super) fn sniff(line: &[u8]) -> Line {
    let Ok(head) = serde_json::from_slice::<Head<'_>>(line) else {
        return Line::Other;
    };
    let id = head
        .id
        .and_then(|raw| RequestId::from_value(&serde_json::from_str(raw.get()).ok()?));
    match (head.method.as_deref(), id) {
        (Some(method), Some(id)) => Line::Request {
            id,
            initialize: method == portcullis_wire::method::INITIALIZE,
        },
        (None, Some(id)) if head.result.is_some() || head.error.is_some() => Line::Response { id },
        (Some(portcullis_wire::method::INITIALIZED), None) => Line::Initialized,
        (Some(portcullis_wire::method::CANCELLED), None) => head
            .params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| RequestId::from_value(p.get("requestId")?))
            .map_or(Line::Other, |id| Line::Cancelled { id }),
        _ => Line::Other,
    }
}

#[cfg(test)]
mod tests {
    use portcullis_wire::Message;

    use super::*;

    #[test]
    fn reads_what_the_strict_parser_reads_for_the_lines_connect_notes() {
        for raw in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"initialize","params":{}}"#,
            r#"{"result":{"content":[]},"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}"#,
        ] {
            let strict = Message::parse(raw.as_bytes().to_vec()).unwrap();
            let id = strict.id().cloned().unwrap();
            let want = if strict.is_request() {
                Line::Request {
                    id,
                    initialize: strict.method() == Some("initialize"),
                }
            } else {
                Line::Response { id }
            };
            assert_eq!(sniff(raw.as_bytes()), want, "{raw}");
        }
        assert_eq!(
            sniff(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Line::Initialized
        );
        assert_eq!(
            sniff(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#),
            Line::Cancelled {
                id: RequestId::number(7)
            }
        );
        assert_eq!(sniff(b"not json"), Line::Other);
        assert_eq!(
            sniff(br#"{"id":1,"id":2,"method":"x"}"#),
            Line::Other,
            "duplicates: left to the gateway"
        );
    }
}
