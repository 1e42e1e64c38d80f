//! Limits on what the gateway reads, in one place.
//!
//! - [`portcullis_wire::MAX_MESSAGE`]: the largest JSON-RPC message, whichever way it comes (an
//!   HTTP request body, a stdio line, an SSE event).
//! - [`MAX_DEPTH`]: how deeply a client's message may nest. serde_json refuses deeper input when
//!   it builds a value (its recursion limit is 128), but the envelope parse skips `params` without
//!   that check, so a request other than `tools/call` would reach the upstream as it came: a server
//!   whose parser recurses (most do) can be crashed by one message. We refuse it instead, with a
//!   parse error. Upstream answers are not checked: they are the server's own, passed on as they
//!   would be without Portcullis.
//! - Client messages must be UTF-8 (RFC 8259 §8.1); the envelope parse would otherwise let
//!   invalid bytes inside `params` through to the upstream.

/// The deepest nesting of arrays and objects accepted from a client (serde_json's own limit).
pub const MAX_DEPTH: usize = 128;

/// Checks a client's message before it is parsed: UTF-8, nesting at most [`MAX_DEPTH`]. The
/// error is the text for a JSON-RPC parse error.
pub fn check_client_message(bytes: &[u8]) -> Result<(), String> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(format!("message is not valid UTF-8 (at byte {})", e.valid_up_to()));
    }
    let depth = max_depth(bytes, MAX_DEPTH);
    if depth > MAX_DEPTH {
        return Err(format!("message nested deeper than {MAX_DEPTH} levels"));
    }
    Ok(())
}

/// The deepest nesting of `[` / `{` outside strings, counting stops once past `stop`. A linear
/// scan without recursion; malformed input just yields some depth (the parser reports the rest).
fn max_depth(bytes: &[u8], stop: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > deepest {
                    deepest = depth;
                    if deepest > stop {
                        return deepest;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert_eq!(max_depth(br#"{"a":[1,{"b":[]}]}"#, 1000), 4);
        assert_eq!(max_depth(br#"{"a":"[[[[{{{{\"[["}"#, 1000), 1);
        assert_eq!(
            max_depth(br#"{"a":"\\","b":[[]]}"#, 1000),
            3,
            "an escaped backslash ends the escape"
        );
        assert_eq!(max_depth(b"42", 1000), 0);
    }

    #[test]
    fn deep_or_non_utf8_client_messages_are_refused() {
        let ok = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}{}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        assert!(check_client_message(ok.as_bytes()).is_ok());
        let deep = format!(r#"{{"params":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
        let err = check_client_message(deep.as_bytes()).unwrap_err();
        assert!(err.contains("deeper than 128"), "{err}");
        let err = check_client_message(b"{\"a\":\"\xc3\x28\"}").unwrap_err();
        assert!(err.contains("UTF-8") && err.contains("byte 6"), "{err}");
    }
}
