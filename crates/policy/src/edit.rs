//! Changing a policy file's text: what "always allow" and "deny always" write ([`add_entry`]),
//! with or without a condition ([`add_rule`]), in the section of the request's [`Door`]:
//! `tools[key]`, `resources[key]`, `prompts[key]`, or `server_requests.<kind>` (one entry, no
//! key). [`exact_entry_key`] is the key that names one tool, resource or prompt and nothing else.
//!
//! The edit is a splice: only the bytes of the one entry change (or, when it is new, the lines
//! that add it), so a hand-formatted file keeps its indentation, key order, line endings and
//! layout, and the diff a person reviews is exactly the entry. The scanner ([`scan`]) finds the
//! spans; the new text is parsed again and must equal the expected document, or nothing is
//! written.

mod rule;
mod scan;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::load::parse_document;
use crate::{exact_key, normalize_uri, Door, Policy, PolicyError, Problem};

pub use rule::{add_rule, add_tool_rule, RuleWrite};
use scan::{object_at, Object};

/// Source name used in problems about the text passed to [`add_entry`].
const EDITED_SOURCE: &str = "policy";

/// The key of `door`'s section that names exactly `name` and nothing else, as "always" writes it:
///
/// - a tool or a prompt: its name with the glob characters escaped ([`exact_key`]: a tool called
///   `get_*` must not become a pattern);
/// - a resource: its URI in normal form ([`normalize_uri`]; the loader compares exact resource keys
///   so), escaped the same way (`?` starts a URI's query and `[` an IPv6 host, and both would be
///   glob syntax in a key). A URI that cannot be normalized has no key: the problem says why;
/// - a server request: its field in `server_requests` (`sampling`, `elicitation`, `roots`);
///   `name` is not read.
pub fn exact_entry_key(door: Door, name: &str) -> Result<String, PolicyError> {
    if let Some(kind) = door.server_request() {
        return Ok(kind.to_owned());
    }
    if door == Door::Resources {
        let uri = normalize_uri(name).map_err(|problem| {
            fail(
                "$.resources",
                format!("cannot name the resource {name:?} in a policy: it {problem}"),
            )
        })?;
        return Ok(exact_key(uri.as_str()));
    }
    Ok(exact_key(name))
}

/// Returns `policy_text` with `tools[key]` set to `entry`: [`add_entry`] at [`Door::Tools`].
pub fn add_tool_entry(policy_text: &str, key: &str, entry: Value) -> Result<String, PolicyError> {
    add_entry(policy_text, Door::Tools, key, entry)
}

/// Returns `policy_text` with the entry `key` of `door`'s section set to `entry` (for a server
/// request, `server_requests.<kind>`; `key` is not read): an existing entry of that key is
/// replaced in place, a new one goes last (and a missing section object is added last). Every
/// other byte of the text stays as it was; the new lines follow the file's indentation and line
/// endings (a one-line file stays on one line). `key` is written as given: pass
/// [`exact_entry_key`] to name one tool, resource or prompt.
///
/// The result is validated before it is returned, so a caller never writes a file the
/// gateway would refuse: a text that was already invalid, an `entry` that is not a valid
/// entry, or a text the splice could not edit safely gives the problems instead.
pub fn add_entry(policy_text: &str, door: Door, key: &str, entry: Value) -> Result<String, PolicyError> {
    let section = door.section();
    let key = door.server_request().unwrap_or(key);
    let mut document = parse_document(policy_text).map_err(|err| fail("$", format!("invalid JSON: {err}")))?;
    let Value::Object(root) = &mut document else {
        return Err(fail("$", "expected a policy object".to_owned()));
    };
    let entries = root.entry(section).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(entries) = entries else {
        return Err(fail(
            &format!("$.{section}"),
            format!("expected an object of {section} entries"),
        ));
    };
    entries.insert(key.to_owned(), entry.clone());
    // The expected document must be a valid policy before any text is made.
    let expected = serde_json::to_string(&document).map_err(|err| fail("$", format!("cannot write: {err}")))?;
    Policy::from_json_str(&expected, EDITED_SOURCE)?;

    let text = splice(policy_text, section, key, &entry).map_err(|err| {
        fail(
            "$",
            format!("cannot edit this file's text safely ({err}); it was not changed"),
        )
    })?;
    let reread = parse_document(&text).map_err(|err| fail("$", format!("the edit made invalid JSON ({err})")))?;
    if reread != document {
        return Err(fail(
            "$",
            "cannot edit this file's text safely; it was not changed".to_owned(),
        ));
    }
    Ok(text)
}

fn fail(path: &str, message: String) -> PolicyError {
    PolicyError {
        problems: vec![Problem {
            file: EDITED_SOURCE.to_owned(),
            path: path.to_owned(),
            message,
        }],
    }
}

/// The layout the file already uses.
struct Style {
    /// `"\r\n"` when the file uses CRLF line endings.
    newline: &'static str,
    /// One level of indentation (the root's first member's), `None` for a one-line file.
    unit: Option<String>,
}

impl Style {
    fn of(text: &str, root: &Object) -> Self {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let unit = root
            .members
            .first()
            .and_then(|m| line_indent(text, m.key_span.start))
            .filter(|indent| !indent.is_empty())
            .map(str::to_owned);
        Self { newline, unit }
    }

    /// `value` as text for a member whose line starts with `indent` (`None`: one line).
    fn value(&self, value: &Value, indent: Option<&str>) -> Result<String, String> {
        let (Some(unit), Some(indent)) = (&self.unit, indent) else {
            return serde_json::to_string(value).map_err(|e| e.to_string());
        };
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        value
            .serialize(&mut serde_json::Serializer::with_formatter(&mut out, formatter))
            .map_err(|e| e.to_string())?;
        let pretty = String::from_utf8(out).map_err(|e| e.to_string())?;
        Ok(pretty.replace('\n', &format!("{}{indent}", self.newline)))
    }
}

/// The whitespace from the start of the line to `at`, if only whitespace comes before `at` on
/// its line (`None`: something else shares the line).
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before.bytes().all(|b| b == b' ' || b == b'\t').then_some(before)
}

/// `text` with `section[key]` set to `entry`.
fn splice(text: &str, section: &str, key: &str, entry: &Value) -> Result<String, String> {
    let err = |e: scan::ScanError| e.to_string();
    let root = object_at(text, 0).map_err(err)?;
    let style = Style::of(text, &root);
    let key_text = serde_json::to_string(key).map_err(|e| e.to_string())?;
    let Some(section_member) = root.member(section) else {
        let mut entries = Map::new();
        entries.insert(key.to_owned(), entry.clone());
        let section_text = serde_json::to_string(section).map_err(|e| e.to_string())?;
        return insert_member(text, &root, &style, &section_text, &Value::Object(entries));
    };
    let entries = object_at(text, section_member.value.start).map_err(err)?;
    if let Some(existing) = entries.member(key) {
        let indent = line_indent(text, existing.key_span.start);
        let value = style.value(entry, indent)?;
        return Ok(replace(text, existing.value.clone(), &value));
    }
    insert_member(text, &entries, &style, &key_text, entry)
}

/// `text` with `key: value` added as the last member of `object`.
fn insert_member(text: &str, object: &Object, style: &Style, key: &str, value: &Value) -> Result<String, String> {
    if let Some(last) = object.members.last() {
        let indent = line_indent(text, last.key_span.start);
        // `:` and one space if the file spaces its colons (alignment padding is not copied).
        let spaced = text[last.key_span.end..last.value.start].ends_with([' ', '\t']);
        let colon = if spaced { ": " } else { ":" };
        let value = style.value(value, indent.filter(|_| style.unit.is_some()))?;
        let lead = match indent.filter(|_| style.unit.is_some()) {
            Some(indent) => format!("{}{indent}", style.newline),
            // One line: the space the file puts after its commas (if any).
            None => separator_before(text, object, last),
        };
        Ok(replace(
            text,
            last.value.end..last.value.end,
            &format!(",{lead}{key}{colon}{value}"),
        ))
    } else {
        // An empty object: `{}` becomes the object with one member, on its own line when
        // the file is indented.
        let outer = line_indent(text, object.open).or_else(|| enclosing_indent(text, object.open));
        if let (Some(unit), Some(outer)) = (&style.unit, outer) {
            let inner = format!("{outer}{unit}");
            let value = style.value(value, Some(&inner))?;
            let body = format!("{{{nl}{inner}{key}: {value}{nl}{outer}}}", nl = style.newline);
            Ok(replace(text, object.open..object.close + 1, &body))
        } else {
            let value = style.value(value, None)?;
            Ok(replace(
                text,
                object.open..object.close + 1,
                &format!("{{{key}:{value}}}"),
            ))
        }
    }
}

/// The indentation of the line `at` is on, whatever comes before `at` on it.
fn enclosing_indent(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..at];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    Some(&line[..width])
}

/// The whitespace between the comma before `last` and its key; `""` for a first member.
fn separator_before(text: &str, object: &Object, last: &scan::Member) -> String {
    let from = object
        .members
        .iter()
        .rev()
        .nth(1)
        .map_or(object.open + 1, |previous| previous.value.end);
    let between = &text[from..last.key_span.start];
    between
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .trim_start_matches(',')
        .to_owned()
}

fn replace(text: &str, span: std::ops::Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..span.start]);
    out.push_str(with);
    out.push_str(&text[span.end..]);
    out
}
