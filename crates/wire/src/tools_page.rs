//! A `tools/list` answer read for the one thing the gateway changes in it: which tools it lists,
//! under which names. Borrowed from the message's bytes (no JSON value of the page is built), so
//! the hidden-tool filter costs a scan of the page, and a page with nothing hidden goes on as the
//! very bytes that came.
//!
//! Read as a case-insensitive reader would: the member of `result` that folds to `tools`, and
//! for each tool every member that folds to `name` ([`crate::strict`] already refused a message
//! where two keys of one object collide that way, so there is at most one of each).

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::parse_error::ParseError;
use crate::strict::same_under_folding;

/// One listed tool: its exact JSON text and where it sits in the message.
pub struct ListedTool<'a> {
    raw: &'a str,
    span: Range<usize>,
}

impl<'a> ListedTool<'a> {
    /// The tool exactly as the server wrote it.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// The names a client could read for this tool: the string value of every member whose key
    /// folds to `name` (`"Name"` alone is `name` to Go's encoding/json), with whether the key is
    /// exactly `name`. None for a tool that is not an object.
    pub fn names(&self) -> Vec<(bool, Cow<'a, str>)> {
        self.names_of("name")
    }

    /// The string value of every member whose key folds to `key` (`uri` of a listed resource,
    /// `uriTemplate` of a template), with whether the key is exactly `key`.
    pub fn names_of(&self, key: &'static str) -> Vec<(bool, Cow<'a, str>)> {
        let mut de = serde_json::Deserializer::from_str(self.raw);
        de.deserialize_any(NamesVisitor(key)).unwrap_or_default()
    }

    /// The value of the exact `name` member, if it is a string.
    pub fn name(&self) -> Option<Cow<'a, str>> {
        self.names().into_iter().find_map(|(exact, name)| exact.then_some(name))
    }
}

/// The tools of a `tools/list` page.
pub struct ToolsPage<'a> {
    raw: &'a [u8],
    tools: Vec<ListedTool<'a>>,
    /// The array's brackets, `[` … `]` inclusive.
    array: Range<usize>,
}

impl<'a> ToolsPage<'a> {
    /// Reads the page in `raw` (a message [`crate::Message::parse`] accepted). `None` when the
    /// message has no `result` object with a `tools` array (an error, another shape): there is
    /// nothing to filter.
    pub fn read(raw: &'a [u8]) -> Result<Option<Self>, ParseError> {
        Self::read_list(raw, "tools")
    }

    /// Reads the list page in `raw` whose entries are `result[member]` (`resources`,
    /// `resourceTemplates`, `prompts`), as [`ToolsPage::read`] reads `tools`.
    pub fn read_list(raw: &'a [u8], member: &'static str) -> Result<Option<Self>, ParseError> {
        let base = raw.as_ptr() as usize;
        let mut de = serde_json::Deserializer::from_slice(raw);
        let found = de
            .deserialize_map(TopVisitor(member))
            .map_err(|e| ParseError::Json(e.to_string()))?;
        let Some(array) = found else {
            return Ok(None);
        };
        let array_start = array.get().as_ptr() as usize - base;
        let array_span = array_start..array_start + array.get().len();
        let entries: Vec<&'a RawValue> = match serde_json::from_str(array.get()) {
            Ok(entries) => entries,
            // `tools` is not an array: nothing a client would list.
            Err(_) => return Ok(None),
        };
        let tools = entries
            .into_iter()
            .map(|entry| {
                let start = entry.get().as_ptr() as usize - base;
                ListedTool {
                    raw: entry.get(),
                    span: start..start + entry.get().len(),
                }
            })
            .collect();
        Ok(Some(Self {
            raw,
            tools,
            array: array_span,
        }))
    }

    pub fn tools(&self) -> &[ListedTool<'a>] {
        &self.tools
    }

    /// The message with only the tools for which `keep` is true: every byte outside the array
    /// as it came, the kept tools as they came, joined by commas.
    pub fn keeping(&self, keep: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len());
        out.extend_from_slice(&self.raw[..self.array.start]);
        out.push(b'[');
        let mut first = true;
        for (i, tool) in self.tools.iter().enumerate() {
            if !keep(i) {
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(&self.raw[tool.span.clone()]);
        }
        out.push(b']');
        out.extend_from_slice(&self.raw[self.array.end..]);
        out
    }
}

/// The message: finds `result` and in it the list's array (`tools`), skipping everything else.
struct TopVisitor(&'static str);

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "result" {
                found = map.next_value_seed(ResultSeed(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

struct ResultSeed(&'static str);

impl<'de> DeserializeSeed<'de> for ResultSeed {
    type Value = Option<&'de RawValue>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ResultVisitor(self.0))
    }
}

struct ResultVisitor(&'static str);

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if same_under_folding(&key, self.0) {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// One entry: the string values of the members that fold to its key (`name`).
struct NamesVisitor(&'static str);

impl<'de> Visitor<'de> for NamesVisitor {
    type Value = Vec<(bool, Cow<'de, str>)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Vec::with_capacity(1);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if same_under_folding(&key, self.0) {
                if let NameValue(Some(name)) = map.next_value()? {
                    names.push((key == self.0, name));
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(names)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
}

/// A member's value: the string, borrowed when it has no escapes, or nothing for another type.
struct NameValue<'de>(Option<Cow<'de, str>>);

impl<'de> de::Deserialize<'de> for NameValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NameValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(NameValue(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NameValue(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NameValue(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(NameValue(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(NameValue(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(NameValue(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(NameValue(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(NameValue(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(NameValue(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<Vec<String>> {
        let page = ToolsPage::read(text.as_bytes()).unwrap().unwrap();
        page.tools()
            .iter()
            .map(|t| t.names().into_iter().map(|(_, n)| n.into_owned()).collect())
            .collect()
    }

    #[test]
    fn names_are_read_as_a_case_insensitive_reader_would() {
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"Tools":[{"name":"a"},{"Name":"b"},{"n\u0061me":"c\u0064"},{"name":5},7,{"title":"x"}]}}"#;
        assert_eq!(
            names(text),
            vec![vec!["a"], vec!["b"], vec!["cd"], vec![], vec![], Vec::<&str>::new()]
        );
    }

    #[test]
    fn keeping_splices_out_only_the_dropped_tools() {
        let text = r#"{"result":{"nextCursor":"c", "tools" : [ {"name":"a"} , {"name":"b","x":[1,2]},{"name":"c"} ],"z":1},"jsonrpc":"2.0","id":1}"#;
        let page = ToolsPage::read(text.as_bytes()).unwrap().unwrap();
        let out = page.keeping(|i| i != 0);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"result":{"nextCursor":"c", "tools" : [{"name":"b","x":[1,2]},{"name":"c"}],"z":1},"jsonrpc":"2.0","id":1}"#
        );
        let none = page.keeping(|_| false);
        assert!(std::str::from_utf8(&none).unwrap().contains(r#""tools" : [],"z""#));
    }

    #[test]
    fn a_page_without_a_tools_array_has_nothing_to_filter() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":{"name":"a"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
        ] {
            assert!(ToolsPage::read(text.as_bytes()).unwrap().is_none(), "{text}");
        }
    }
}
