//! The strict reading of a JSON-RPC message: one pass over the bytes that finds the envelope
//! fields and refuses anything another mainstream reader could take differently.
//!
//! A gate is only as good as its agreement with the reader behind it. The server may be built on
//! Go's encoding/json (struct fields match keys case-insensitively, the last match wins), Python's
//! `json` or Node's `JSON.parse` (the last duplicate wins), a JSON-RPC library that executes
//! `"id": null` requests, or serde (which ignores `"Name"` next to `"name"`). So a message passes
//! only when every one of them would read it as we do:
//!
//! - in every object, at any depth, no two keys are equal after unescaping or under case folding
//!   ([`fold`]): `{"name":"echo","Name":"wipe"}` and `argumentſ` next to `arguments` are refused;
//! - the envelope carries no near-miss of its own members (`"Method"`, `"ID"`, `"Params"` …):
//!   a reader that folds would see a member we do not;
//! - a `method` with an `id` member is a request whatever the id's value, and that value must be
//!   a string or an integer (`null` is refused: some libraries execute it, we could not answer
//!   it); a `method` without `id` is a notification only under `notifications/`;
//! - `jsonrpc` is `"2.0"` on requests and notifications; `params` is an object or `null`.
//!
//! serde_json's grammar does the rest: UTF-8, no trailing bytes, no lone surrogates, numbers in
//! range, nesting at most 128 deep.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize as _;
use serde_json::value::RawValue;

use crate::parse_error::ParseError;

/// Case folding for key comparison: lower, then upper, then lower again, one character at a time
/// (a mapping to several characters keeps the character). This puts `ſ` with `s`, `K` (Kelvin)
/// with `k`, `ß` with `ẞ` and `ς` with `σ` — every pair Go's `EqualFold` and `ToUpper(ToLower)`
/// join, and a few more, which only makes the check stricter.
pub fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let lower = single(c.to_lowercase()).unwrap_or(c);
    let upper = single(lower.to_uppercase()).unwrap_or(lower);
    single(upper.to_lowercase()).unwrap_or(upper)
}

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

/// Two keys a case-insensitive reader takes for the same field.
pub fn same_under_folding(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// The envelope members, which no near-miss key may shadow.
const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
/// The `tools/call` params the gate reads.
pub(crate) const TOOL_CALL_PARAMS: [&str; 4] = ["name", "arguments", "_meta", "requestState"];
/// The `resources/read` and `resources/subscribe` params the gate reads.
pub(crate) const RESOURCE_PARAMS: [&str; 2] = ["uri", "_meta"];
/// The `prompts/get` params the gate reads.
pub(crate) const PROMPT_PARAMS: [&str; 3] = ["name", "arguments", "_meta"];
/// Every `params` member the gate reads of a request it decides: a `tools/call`'s, and `uri`
/// (`resources/read`, `resources/subscribe`). `prompts/get` reads `name` and `arguments`.
const DECIDED_PARAMS: [&str; 5] = ["name", "arguments", "_meta", "requestState", "uri"];

/// What the strict reading found in the envelope.
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    pub(crate) jsonrpc: Option<String>,
    /// The `id` member, whatever its value: its raw text and its byte range in the message.
    pub(crate) id: Option<(String, Range<usize>)>,
    pub(crate) method: Option<String>,
    pub(crate) params: Option<Shape>,
    /// `result` present (even `null`: a method may return null).
    pub(crate) has_result: bool,
    /// `error` present and not `null` (some libraries send `"error": null` beside a result).
    pub(crate) has_error: bool,
    /// What `params` holds of the `tools/call` members.
    pub(crate) params_info: ParamsInfo,
}

/// The JSON type of a value, as far as the envelope rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Object,
    Null,
    String,
    Other,
}

/// The top level of `params`, as far as a `tools/call` is concerned.
#[derive(Debug, Default)]
pub(crate) struct ParamsInfo {
    /// Keys that are near-misses of a member the gate reads (`"Name"` …), each with the member
    /// it shadows.
    pub(crate) near_misses: Vec<(String, &'static str)>,
    pub(crate) name: Option<Shape>,
    pub(crate) uri: Option<Shape>,
    pub(crate) arguments: Option<Shape>,
    pub(crate) meta: Option<Shape>,
}

/// Reads `raw` strictly. Errors say what was ambiguous.
pub(crate) fn read(raw: &[u8]) -> Result<Envelope, ParseError> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let envelope = de
        .deserialize_map(EnvelopeVisitor {
            base: raw.as_ptr() as usize,
        })
        .map_err(into_parse_error)?;
    de.end().map_err(|e| ParseError::Json(e.to_string()))?;
    Ok(envelope)
}

/// Our own refusals travel through serde's error as a tagged message; turn them back.
const AMBIGUOUS_TAG: &str = "portcullis-ambiguous:";

fn into_parse_error(e: serde_json::Error) -> ParseError {
    let text = e.to_string();
    match text.strip_prefix(AMBIGUOUS_TAG) {
        Some(rest) => ParseError::Ambiguous(strip_position(rest).to_owned()),
        None => ParseError::Json(text),
    }
}

/// serde_json appends " at line L column C" to custom errors; the position of the end of the
/// object is not where the problem is, so it goes.
fn strip_position(text: &str) -> &str {
    text.rfind(" at line ").map_or(text, |at| &text[..at])
}

fn ambiguous<E: de::Error>(why: fmt::Arguments<'_>) -> E {
    E::custom(format!("{AMBIGUOUS_TAG}{why}"))
}

/// The keys of one object seen so far, checked as each arrives.
#[derive(Default)]
struct KeySet<'de> {
    keys: Vec<Cow<'de, str>>,
    /// Folded keys, once the object is too large to compare pairwise.
    folded: Option<std::collections::HashSet<String>>,
}

/// Past this many keys, compare through a set of folded keys instead of pairwise.
const PAIRWISE_MAX: usize = 16;

impl<'de> KeySet<'de> {
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        if let Some(folded) = &mut self.folded {
            if !folded.insert(key.chars().map(fold).collect()) {
                return Err(collision(&key));
            }
            return Ok(());
        }
        if let Some(other) = self.keys.iter().find(|k| same_under_folding(k, &key)) {
            return Err(if **other == *key {
                ambiguous(format_args!("duplicate key {key:?}"))
            } else {
                ambiguous(format_args!(
                    "keys {other:?} and {key:?} differ only by case; readers disagree on which one counts"
                ))
            });
        }
        self.keys.push(key);
        if self.keys.len() > PAIRWISE_MAX {
            self.folded = Some(self.keys.iter().map(|k| k.chars().map(fold).collect()).collect());
            self.keys.clear();
        }
        Ok(())
    }
}

fn collision<E: de::Error>(key: &str) -> E {
    ambiguous(format_args!(
        "key {key:?} is a duplicate of another key, or differs from one only by case"
    ))
}

/// A key, borrowed from the input when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// In a response's `result` or `error`, keys are checked this many levels deep and deeper values
/// are skipped unread: a server's deep answer is passed on as it came (a server's answer is
/// policed only as `tools/list`, which is read whole). Everything else — every request and
/// notification — must fit serde_json's limit of 128 levels, or it is refused.
const CHECK_DEPTH: usize = 120;

/// Walks any value `depth` levels down, checking the keys of every object in it; yields its
/// [`Shape`]. `skip_deep`: past [`CHECK_DEPTH`], skip instead of refusing.
struct Walk {
    depth: usize,
    skip_deep: bool,
}

impl Walk {
    fn top() -> Self {
        Walk {
            depth: 1,
            skip_deep: false,
        }
    }
    fn below(&self) -> Self {
        Walk {
            depth: self.depth + 1,
            skip_deep: self.skip_deep,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        if self.skip_deep && self.depth >= CHECK_DEPTH {
            de::IgnoredAny::deserialize(d)?;
            return Ok(Shape::Other);
        }
        d.deserialize_any(WalkVisitor {
            params: None,
            walk: self,
        })
    }
}

/// `params`: note this object's `tools/call` members and the keys that shadow them.
struct WalkVisitor<'a> {
    params: Option<&'a mut ParamsInfo>,
    walk: Walk,
}

impl<'de> Visitor<'de> for WalkVisitor<'_> {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Shape, A::Error> {
        let mut keys = KeySet::default();
        while let Some(key) = map.next_key_seed(Key)? {
            let Some(info) = self.params.as_deref_mut() else {
                keys.insert(key)?;
                map.next_value_seed(self.walk.below())?;
                continue;
            };
            if let Some(member) = near_miss_of(&key, &DECIDED_PARAMS) {
                info.near_misses.push((key.to_string(), member));
            }
            let member = match &*key {
                "name" => Some(&mut info.name),
                "uri" => Some(&mut info.uri),
                "arguments" => Some(&mut info.arguments),
                "_meta" => Some(&mut info.meta),
                _ => None,
            };
            keys.insert(key)?;
            let shape = map.next_value_seed(self.walk.below())?;
            if let Some(slot) = member {
                *slot = Some(shape);
            }
        }
        Ok(Shape::Object)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element_seed(self.walk.below())?.is_some() {}
        Ok(Shape::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::String)
    }
}

/// `params`: walked like any value, noting its `tools/call` members.
struct Params<'a>(&'a mut ParamsInfo);

impl<'de> DeserializeSeed<'de> for Params<'_> {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(WalkVisitor {
            params: Some(self.0),
            walk: Walk::top(),
        })
    }
}

/// `key` folds to one of `members` without being it.
fn is_near_miss(key: &str, members: &[&str]) -> bool {
    members.iter().any(|m| *m != key && same_under_folding(m, key))
}

/// The member of `members` that `key` folds to without being it.
fn near_miss_of(key: &str, members: &[&'static str]) -> Option<&'static str> {
    members
        .iter()
        .copied()
        .find(|m| *m != key && same_under_folding(m, key))
}

/// How a response's `result` / `error` is walked.
const ANSWER: Walk = Walk {
    depth: 1,
    skip_deep: true,
};

struct EnvelopeVisitor {
    base: usize,
}

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut env = Envelope::default();
        let mut keys = KeySet::default();
        while let Some(key) = map.next_key_seed(Key)? {
            if is_near_miss(&key, &ENVELOPE) {
                return Err(ambiguous(format_args!(
                    "envelope key {key:?} differs only by case from a JSON-RPC member; some readers take it for that member"
                )));
            }
            keys.insert(key.clone())?;
            match &*key {
                "jsonrpc" => env.jsonrpc = map.next_value::<Option<String>>()?.or(Some(String::new())),
                "id" => {
                    let raw: &RawValue = map.next_value()?;
                    let text = raw.get();
                    let start = text.as_ptr() as usize - self.base;
                    env.id = Some((text.to_owned(), start..start + text.len()));
                }
                "method" => env.method = Some(map.next_value()?),
                "params" => env.params = Some(map.next_value_seed(Params(&mut env.params_info))?),
                "result" => {
                    map.next_value_seed(ANSWER)?;
                    env.has_result = true;
                }
                "error" => env.has_error = map.next_value_seed(ANSWER)? != Shape::Null,
                _ => {
                    map.next_value_seed(Walk::top())?;
                }
            }
        }
        Ok(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_joins_what_case_insensitive_readers_join() {
        for (a, b) in [
            ("name", "Name"),
            ("name", "NAME"),
            ("arguments", "argumentſ"),
            ("kind", "\u{212a}ind"),
            ("straße", "STRAẞE"),
            ("σ", "ς"),
        ] {
            assert!(same_under_folding(a, b), "{a} ~ {b}");
        }
        for (a, b) in [("name", "names"), ("path", "paths"), ("a", "b"), ("i", "İ")] {
            assert!(!same_under_folding(a, b), "{a} !~ {b}");
        }
    }

    #[test]
    fn a_server_answer_nested_past_the_check_depth_is_read_and_its_top_is_checked() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(read(deep.as_bytes()).is_ok());
        let colliding = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":1,"A":{}{}}}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(matches!(read(colliding.as_bytes()), Err(ParseError::Ambiguous(_))));
    }
}
