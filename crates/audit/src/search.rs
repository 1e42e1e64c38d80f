//! The `text` filter: a substring of the arguments as the client spelled them, or of the values
//! they decode to.
//!
//! The `arguments` column holds the client's own JSON text when nothing in it was redacted, so a
//! path sent as `"\u002fhome\u002fu\u002f.ssh"` is stored with those escapes. A plain substring
//! search (SQL `LIKE`) would not find `/home/u/.ssh` there, and a call that ran would hide from
//! the person looking for it. So a row also matches when the needle is a substring of its
//! [`decoded_text`]: the arguments written with every string (key or value) decoded.
//!
//! Decoding means parsing, so it runs only where it can change the answer: rows whose text does
//! not hold the needle as spelled and does hold a backslash (every JSON escape starts with one).
//! Text without a backslash decodes to itself. The whole test is one SQL function, so a row costs
//! one call and a byte search, no slower than the `LIKE` it replaces.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::Connection;
use serde_json::Value;

/// The `WHERE` condition of the `text` filter; binds the needle, as typed (no `LIKE` escaping).
pub(crate) const CONDITION: &str = "portcullis_text_matches(arguments, ?)";

/// Registers the function of [`CONDITION`] on a connection (each reader does when it opens).
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "portcullis_text_matches",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx: &Context<'_>| {
            let arguments = ctx.get_raw(0).as_str().unwrap_or_default();
            let needle = ctx.get_raw(1).as_str().unwrap_or_default();
            Ok(text_matches(arguments, needle))
        },
    )
}

/// Whether `needle` is, ignoring ASCII case as `LIKE` does, in the JSON `arguments` as spelled
/// or in their [`decoded_text`].
pub(crate) fn text_matches(arguments: &str, needle: &str) -> bool {
    contains_ignoring_ascii_case(arguments, needle) || (arguments.contains('\\') && decoded_contains(arguments, needle))
}

/// Whether `needle` is in the decoded text of the JSON `arguments`, ignoring ASCII case. Text
/// that is not JSON decodes to nothing.
fn decoded_contains(arguments: &str, needle: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(arguments) else {
        return false;
    };
    let mut text = String::with_capacity(arguments.len());
    decoded_text(&value, &mut text);
    contains_ignoring_ascii_case(&text, needle)
}

/// A substring search ignoring ASCII case, as SQL `LIKE` does. The haystack is lowercased into a
/// copy so the search is the standard library's (a fast first-byte scan, linear time); a byte-wise
/// comparison at every position measured slower. On UTF-8 a byte match is a character match.
fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if !needle.bytes().any(|b| b.is_ascii_alphabetic()) {
        return haystack.contains(needle);
    }
    haystack.to_ascii_lowercase().contains(&needle.to_ascii_lowercase())
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
        assert!(text_matches(arguments, needle), "{needle:?} in {arguments}");
    }

    #[rstest]
    #[case::other_path(r#"{"path":"\u002fhome\u002fv"}"#, "/home/u")]
    #[case::not_across_values(r#"{"a":"/ho","b":"me"}"#, "/home")]
    #[case::not_json(r"\u002fhome", "/home")]
    #[case::escape_not_decoded_twice(r#"{"q":"\\u002f"}"#, "/")]
    fn near_misses_are_not_found(#[case] arguments: &str, #[case] needle: &str) {
        assert!(!text_matches(arguments, needle), "{needle:?} in {arguments}");
    }

    #[rstest]
    #[case::same("abc", "b", true)]
    #[case::ascii_case("ABC", "b", true)]
    #[case::needle_case("abc", "BC", true)]
    #[case::no_letters("/a/1", "/1", true)]
    #[case::non_ascii_kept("Café", "CAFé", true)]
    #[case::only_ascii_folds("CAFÉ", "café", false)]
    #[case::like_metacharacters_are_text("50%_off", "%_", true)]
    #[case::like_metacharacters_do_not_wildcard("50 off", "%", false)]
    #[case::empty_needle("x", "", true)]
    #[case::longer_needle("ab", "abc", false)]
    fn substrings_ignore_ascii_case_only(#[case] haystack: &str, #[case] needle: &str, #[case] found: bool) {
        assert_eq!(contains_ignoring_ascii_case(haystack, needle), found);
    }

    #[test]
    fn the_decoded_text_is_compact_with_strings_unescaped() {
        let value: Value = serde_json::from_str(r#"{ "a\u0062" : [1, true, null, "\u0063\n"], "d": {} }"#).unwrap();
        let mut text = String::new();
        decoded_text(&value, &mut text);
        assert_eq!(text, "{\"ab\":[1,true,null,\"c\n\"],\"d\":{}}");
    }
}
