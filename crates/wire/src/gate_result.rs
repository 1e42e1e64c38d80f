//! Tool results Portcullis answers with when it does not forward a call.
//!
//! A refusal is a normal `tools/call` result with `isError: true` — agents read it and adapt —
//! never a success and never a JSON-RPC error (those are for protocol faults). The text always
//! starts with `[portcullis]` so a person reading a transcript knows who answered.

use serde_json::{json, Value};

pub const PREFIX: &str = "[portcullis]";

/// The result object for a refused call. `modern` adds the 2026-07-28 `resultType`.
pub fn refusal(text: &str, modern: bool) -> Value {
    let text = if text.starts_with(PREFIX) {
        text.to_owned()
    } else {
        format!("{PREFIX} {text}")
    };
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": true });
    if modern {
        result["resultType"] = json!("complete");
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_is_an_error_result_with_the_prefix() {
        let r = refusal("denied by rule tools.x: no", false);
        assert_eq!(r["isError"], json!(true));
        assert_eq!(
            r["content"][0]["text"],
            json!("[portcullis] denied by rule tools.x: no")
        );
        assert!(r.get("resultType").is_none());
        assert_eq!(refusal("[portcullis] x", true)["resultType"], json!("complete"));
    }
}
