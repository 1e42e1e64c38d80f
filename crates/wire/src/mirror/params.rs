//! `Mcp-Param-{Name}` headers: tool arguments a tool's `inputSchema` mirrors into HTTP headers
//! (2026-07-28, the `x-mcp-header` property annotation).
//!
//! An intermediary may route or rate-limit on such a header without reading the body, so a header
//! that says something the body does not is a second reading of one call. On the way in every
//! `Mcp-Param-*` header must name an argument the tool declares and carry the body's value of it
//! ([`check`]); on the way out the headers are written from the body alone ([`write`]), never
//! copied from the client.
//!
//! What counts as a declaration follows the spec: `x-mcp-header` on a property reached from the
//! schema root through `properties` keys only, naming a non-empty HTTP token, unique ignoring
//! case, on an `integer`, `string` or `boolean` property. A schema with an annotation anywhere
//! else is invalid as a whole (a conforming client drops that tool), and it declares nothing.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::decode_header_value;

/// Header names are case-insensitive; this is the prefix as `HeaderMap` spells it.
pub const PARAM_PREFIX: &str = "mcp-param-";

const ANNOTATION: &str = "x-mcp-header";
const PRIMITIVE_TYPES: [&str; 3] = ["integer", "string", "boolean"];

/// One argument a tool mirrors into `Mcp-Param-{header}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The name part, as the schema spells it.
    pub header: String,
    /// The chain of `properties` keys from the root to the argument.
    pub path: Vec<String>,
}

impl Declared {
    fn argument(&self) -> String {
        self.path.join(".")
    }
}

/// A request's `Mcp-Param-*` header as received: the name after the prefix, and the value as
/// text (`None` when it holds bytes a header value may not).
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    pub name: &'a str,
    pub value: Option<&'a str>,
}

/// What `schema` declares, or why its annotations are invalid.
pub fn declared(schema: &Value) -> Result<Vec<Declared>, String> {
    let mut found = Vec::new();
    walk(schema, Some(&mut Vec::new()), &mut found)?;
    let mut seen = HashSet::new();
    for d in &found {
        if !seen.insert(d.header.to_ascii_lowercase()) {
            return Err(format!("{ANNOTATION} {:?} is declared twice", d.header));
        }
    }
    Ok(found)
}

/// Walks one schema position. `path` is `Some` while the position is reachable from the root
/// through `properties` keys alone (the root itself has an empty path).
fn walk(node: &Value, path: Option<&mut Vec<String>>, found: &mut Vec<Declared>) -> Result<(), String> {
    let Value::Object(schema) = node else {
        return Ok(());
    };
    let mut path = path;
    if let Some(name) = schema.get(ANNOTATION) {
        let at = path
            .as_deref()
            .filter(|p| !p.is_empty())
            .ok_or_else(|| format!("{ANNOTATION} on a schema position not reached through `properties` keys alone"))?;
        found.push(annotation(name, schema, at)?);
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (key, sub) in properties {
            match path.as_deref_mut() {
                Some(p) => {
                    p.push(key.clone());
                    let walked = walk(sub, Some(p), found);
                    p.pop();
                    walked?;
                }
                None => walk(sub, None, found)?,
            }
        }
    }
    for (keyword, value) in schema {
        if keyword == "properties" {
            continue;
        }
        for sub in subschemas(keyword, value) {
            walk(sub, None, found)?;
        }
    }
    Ok(())
}

/// The schemas a keyword other than `properties` holds (none for keywords that hold values, such
/// as `default`, `enum` or `const`, whose objects are data and not annotations).
fn subschemas<'a>(keyword: &str, value: &'a Value) -> Vec<&'a Value> {
    match (keyword, value) {
        (
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties",
            Value::Object(_),
        ) => vec![value],
        ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => list.iter().collect(),
        ("$defs" | "definitions" | "patternProperties" | "dependentSchemas", Value::Object(map)) => {
            map.values().collect()
        }
        _ => Vec::new(),
    }
}

fn annotation(name: &Value, schema: &Map<String, Value>, path: &[String]) -> Result<Declared, String> {
    let at = path.join(".");
    let Some(header) = name.as_str() else {
        return Err(format!("property {at:?}: {ANNOTATION} is not a string"));
    };
    if header.is_empty() || !header.bytes().all(is_tchar) {
        return Err(format!("property {at:?}: {ANNOTATION} {header:?} is not an HTTP token"));
    }
    let kind = schema.get("type").and_then(Value::as_str);
    if !kind.is_some_and(|k| PRIMITIVE_TYPES.contains(&k)) {
        return Err(format!(
            "property {at:?}: {ANNOTATION} is allowed on integer, string and boolean properties only"
        ));
    }
    Ok(Declared {
        header: header.to_owned(),
        path: path.to_vec(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Checks a request's `Mcp-Param-*` headers against its arguments. Every header must name an
/// argument the tool declares (`declared`), appear once, and carry the body's value of it; a
/// header whose argument the body leaves out (or sets to `null`) is refused. A declared argument
/// sent without its header is let through: the headers the upstream gets are written from the
/// body anyway ([`write`]). `Err` says what is wrong, for the client.
pub fn check(
    declared: &Result<Vec<Declared>, String>,
    arguments: Option<&Value>,
    received: &[Received<'_>],
) -> Result<(), String> {
    let mut seen = HashSet::new();
    for header in received {
        let shown = format!("Mcp-Param-{}", header.name);
        if !seen.insert(header.name.to_ascii_lowercase()) {
            return Err(format!("the {shown} header appears more than once"));
        }
        let decl = match declared {
            Ok(list) => list.iter().find(|d| d.header.eq_ignore_ascii_case(header.name)),
            Err(why) => {
                return Err(format!(
                    "the {shown} header mirrors no argument: the tool's inputSchema is invalid ({why})"
                ))
            }
        };
        let Some(decl) = decl else {
            return Err(format!(
                "the {shown} header mirrors no argument the tool's inputSchema declares"
            ));
        };
        let Some(text) = header.value else {
            return Err(format!("the {shown} header holds characters a header value may not"));
        };
        let Some(said) = decode_header_value(text.trim_matches([' ', '\t'])) else {
            return Err(format!("the {shown} header holds a malformed =?base64?…?= value"));
        };
        let argument = decl.argument();
        match arguments.and_then(|a| value_at(a, &decl.path)) {
            None => {
                return Err(format!(
                    "the {shown} header has a value but the body gives none for {argument:?}"
                ))
            }
            Some(body) if !matches(body, &said) => {
                return Err(format!(
                    "the {shown} header does not match the body's {argument:?} argument"
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers for `arguments`, written from the body: one per declared argument
/// the body gives a primitive value for, in the spec's text form (strings as they are, integers
/// and booleans as their JSON text), base64 in the sentinel where a header could not carry it.
pub fn write(declared: &[Declared], arguments: &Value) -> Vec<(String, String)> {
    declared
        .iter()
        .filter_map(|d| {
            let text = rendered(value_at(arguments, &d.path)?)?;
            Some((format!("{PARAM_PREFIX}{}", d.header), super::encode_header_value(&text)))
        })
        .collect()
}

/// The value at `path`; `None` for a missing key, a non-object on the way, or `null`.
fn value_at<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    let value = path
        .iter()
        .try_fold(arguments, |node, key| node.as_object()?.get(key))?;
    (!value.is_null()).then_some(value)
}

/// A primitive's header text (before encoding); `None` for objects and arrays, which have none.
fn rendered(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a decoded header value says what the body does. Strings compare exactly; booleans as
/// `true`/`false`; numbers as their JSON text, or, for a whole number, numerically against a
/// plain decimal (`42` and `42.0` agree, as the spec asks), exactly and without floating point.
fn matches(body: &Value, said: &str) -> bool {
    match body {
        Value::Number(n) => n.to_string() == said || whole(n).is_some_and(|n| Some(n) == whole_decimal(said)),
        Value::String(_) | Value::Bool(_) => rendered(body).as_deref() == Some(said),
        _ => false,
    }
}

/// `n` when it is a whole number an `i128` holds.
fn whole(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "whole and within ±1e36: the cast is exact"
    )]
    (f.fract() == 0.0 && f.abs() < 1e36).then_some(f as i128)
}

/// A plain decimal `-?[0-9]+(\.0+)?` as a whole number; `None` for anything else.
fn whole_decimal(text: &str) -> Option<i128> {
    let (int, fraction) = text.split_once('.').unwrap_or((text, ""));
    if text.contains('.') && (fraction.is_empty() || !fraction.bytes().all(|b| b == b'0')) {
        return None;
    }
    let digits = int.strip_prefix('-').unwrap_or(int);
    if digits.is_empty() || digits.len() > 36 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    int.parse().ok()
}

#[cfg(test)]
mod tests;
