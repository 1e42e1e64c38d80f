//! 2026-07-28 HTTP headers that mirror the body: `Mcp-Method` and `Mcp-Name` here, `Mcp-Param-*`
//! in [`params`].
//!
//! A server may route on a header before it reads the body, so a header that disagrees with the
//! body is a second reading of the same message — the body decides, and a mismatch is refused
//! (`-32020`). One table says which param each name-bearing method mirrors; the check on the way
//! in and the headers written on the way out both read it, so they cannot drift apart.
//!
//! Header values that would not survive HTTP as they are (non-ASCII, control characters, edge
//! whitespace) travel as `=?base64?<standard base64 of the UTF-8>?=`, as the SDKs write them.

pub mod params;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

pub const METHOD_HEADER: &str = "mcp-method";
pub const NAME_HEADER: &str = "mcp-name";

/// The param a name-bearing method mirrors into `Mcp-Name`.
pub fn name_param(method: &str) -> Option<&'static str> {
    match method {
        crate::method::TOOLS_CALL | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // SEP-2663 (tasks extension): requests about a task route on its id.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The value `Mcp-Name` must carry for a request with this method and params, if any.
pub fn mirrored_name<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    params.get(name_param(method)?)?.as_str()
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// The header form of `value`: as it is when it is plain printable ASCII without edge spaces,
/// else base64 in the sentinel.
pub fn encode_header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b)) && value.trim() == value && !looks_encoded(value);
    if plain {
        return value.to_owned();
    }
    format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(value.as_bytes()))
}

/// What a header value stands for. `None` for a malformed sentinel (bad or non-canonical base64,
/// not UTF-8): it matches nothing.
pub fn decode_header_value(value: &str) -> Option<String> {
    if !looks_encoded(value) {
        return Some(value.to_owned());
    }
    let payload = &value[SENTINEL_START.len()..value.len() - SENTINEL_END.len()];
    let bytes = STANDARD.decode(payload).ok()?;
    // Canonical only: another decoder could read a sloppy payload differently.
    if STANDARD.encode(&bytes) != payload {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn looks_encoded(value: &str) -> bool {
    value.len() >= SENTINEL_START.len() + SENTINEL_END.len()
        && value.starts_with(SENTINEL_START)
        && value.ends_with(SENTINEL_END)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_names_the_mirrored_param() {
        let p = json!({"name": "echo", "uri": "file:///a"});
        assert_eq!(mirrored_name("tools/call", &p), Some("echo"));
        assert_eq!(mirrored_name("prompts/get", &p), Some("echo"));
        assert_eq!(mirrored_name("resources/read", &p), Some("file:///a"));
        assert_eq!(mirrored_name("tools/list", &p), None);
        let task = json!({"taskId": "t-1"});
        assert_eq!(mirrored_name("tasks/get", &task), Some("t-1"));
        assert_eq!(mirrored_name("tasks/cancel", &task), Some("t-1"));
    }

    #[test]
    fn values_round_trip_through_the_header_form() {
        for v in [
            "echo",
            "file:///tmp/a b",
            "café",
            " edge",
            "line\nbreak",
            "=?base64?eA==?=",
            "",
        ] {
            let header = encode_header_value(v);
            assert!(header.bytes().all(|b| (0x20..0x7f).contains(&b)), "{header:?}");
            assert_eq!(decode_header_value(&header).as_deref(), Some(v), "{v:?} as {header:?}");
        }
        assert_eq!(encode_header_value("echo"), "echo");
        assert_eq!(encode_header_value("café"), "=?base64?Y2Fmw6k=?=");
    }

    #[test]
    fn malformed_sentinels_match_nothing() {
        for bad in ["=?base64?***?=", "=?base64?Y2Fmw6l=?=", "=?base64?/w==?="] {
            assert_eq!(decode_header_value(bad), None, "{bad}");
        }
    }
}
