//! The `text` filter: a substring of the arguments as the client spelled them, or of the values
//! they decode to.
//!
//! The `arguments` column holds the client's own JSON text when nothing in it was redacted, so a
//! path sent as `"\u002fhome\u002fu\u002f.ssh"` is stored with those escapes. A plain substring
//! search (`LIKE`) would not find `/home/u/.ssh` there, and a call that ran would hide from the
//! person looking for it. So a row also matches when the needle is a substring of its
//! [`decoded_text`]: the arguments written with every string (key or value) decoded.
//!
//! Decoding means parsing, so it runs only where it can change the answer: rows whose text
//! holds a backslash (every JSON escape starts with one) and that `LIKE` did not match already.
//! Text without a backslash decodes to itself.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::Connection;
use serde_json::Value;

/// The SQL function `portcullis_decoded_contains(arguments, needle)`: whether `needle` is, ASCII
/// case-insensitively like `LIKE`, a substring of the [`decoded_text`] of `arguments`.
pub(crate) const FUNCTION: &str = "portcullis_decoded_contains";

/// The `WHERE` condition of the `text` filter; binds the `LIKE` pattern, then the needle.
pub(crate) const CONDITION: &str = "(arguments LIKE ? ESCAPE '\\' \
     OR (instr(arguments, '\\') > 0 AND portcullis_decoded_contains(arguments, ?)))";

/// Registers [`FUNCTION`] on a connection (each reader registers it when it opens).
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        FUNCTION,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx: &Context<'_>| {
            let arguments = ctx.get_raw(0).as_str().unwrap_or_default();
            let needle = ctx.get_raw(1).as_str().unwrap_or_default();
            Ok(decoded_contains(arguments, needle))
        },
    )
}

/// Whether `needle` is in the decoded text of the JSON `arguments`, ignoring ASCII case. Text
/// that is not JSON decodes to nothing.
pub(crate) fn decoded_contains(arguments: &str, needle: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(arguments) else {
        return false;
    };
    let mut text = String::with_capacity(arguments.len());
    decoded_text(&value, &mut text);
    text.make_ascii_lowercase();
    text.contains(&needle.to_ascii_lowercase())
}

/// `value` written as compact JSON, except that strings are written as they decode: no escapes,
/// so `"\u002fhome"` is `"/home"`, `"C:\\Users"` is `"C:\Users"` and `"say \"hi\""` is
/// `"say "hi""`. Not JSON any more, but what a person searching for a value types.
pub(crate) fn decoded_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => quoted(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                decoded_text(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quoted(key, out);
                out.push(':');
                decoded_text(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn quoted(s: &str, out: &mut String) {
    out.push('"');
    out.push_str(s);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::solidus_escapes(r#"{"path":"\u002fhome\u002fu\u002f.ssh\u002fid"}"#, "/home/u/.ssh")]
    #[case::letter_escape(r#"{"path":"/home/u/.ss\u0068/id"}"#, "/home/u/.ssh")]
    #[case::escaped_solidus(r#"{"path":"\/home\/u\/.ssh"}"#, "/home/u/.ssh")]
    #[case::surrogate_pair(r#"{"q":"\ud83d\udc69 here"}"#, "👩 here")]
    #[case::key_escaped(r#"{"p\u0061th":"x"}"#, r#""path":"x""#)]
    #[case::ascii_case(r#"{"path":"\u002FHome"}"#, "/home")]
    #[case::backslash_in_value(r#"{"path":"C:\\Users\\u"}"#, r"C:\Users\u")]
    #[case::quote_in_value(r#"{"q":"say \"hi\""}"#, r#"say "hi""#)]
    #[case::nested(r#"{"a":[{"b":"\u002fetc\u002fshadow"}]}"#, "/etc/shadow")]
    #[case::line_separator(r#"{"q":"a\u2028b"}"#, "a\u{2028}b")]
    fn escaped_spellings_are_found(#[case] arguments: &str, #[case] needle: &str) {
        assert!(decoded_contains(arguments, needle), "{needle:?} in {arguments}");
    }

    #[rstest]
    #[case::other_path(r#"{"path":"\u002fhome\u002fv"}"#, "/home/u")]
    #[case::not_across_values(r#"{"a":"/ho","b":"me"}"#, "/home")]
    #[case::not_json(r"\u002fhome", "/home")]
    #[case::escape_not_decoded_twice(r#"{"q":"\\u002f"}"#, "/")]
    fn near_misses_are_not_found(#[case] arguments: &str, #[case] needle: &str) {
        assert!(!decoded_contains(arguments, needle), "{needle:?} in {arguments}");
    }

    #[test]
    fn the_decoded_text_is_compact_with_strings_unescaped() {
        let value: Value = serde_json::from_str(r#"{ "a\u0062" : [1, true, null, "\u0063\n"], "d": {} }"#).unwrap();
        let mut text = String::new();
        decoded_text(&value, &mut text);
        assert_eq!(text, "{\"ab\":[1,true,null,\"c\n\"],\"d\":{}}");
    }
}
