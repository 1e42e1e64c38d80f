//! The strict reading of a JSON-RPC message (`portcullis_wire::Message::parse`), compared with an
//! independent reference model of the strictest reader (DESIGN.md §8; tests/differential/README.md).
//!
//! Input: the first byte chooses how the rest is read.
//! - `0`: the rest is the message itself (the seeds in `fuzz/corpus/strict_reader/` are the messages of
//!   `tests/differential/corpus.py`, written this way by `make_corpus.py`);
//! - anything else: the rest drives a generator (`arbitrary::Unstructured`) that writes an envelope
//!   whose keys are drawn from case, escape and Unicode-fold variants of `jsonrpc`, `id`, `method`,
//!   `params`, `name`, `arguments`, `path` and a few more, with repeated keys, id shapes (null,
//!   fractions, exponents, `-0`, beyond u64, escaped strings), nested arguments, and junk around the
//!   object (BOM, trailing bytes, a second object, a comment).
//!
//! The model (`model` below) is a small recursive-descent JSON reader written here that keeps every
//! key of every object in order, then applies the rules:
//! - one JSON object per RFC 8259 (UTF-8, whitespace around it only, no comments, no lone
//!   surrogates, numbers finite as f64, no control characters in strings);
//! - in every object at any depth no two keys equal after unescaping, nor under `fold` (simple
//!   lowercase of simple uppercase of simple lowercase, per char);
//! - `jsonrpc` is the string "2.0" on requests and notifications; `method` is a string;
//!   with an `id` member the message is a request and the id a string or an integer within
//!   i64/u64 (no fraction, no exponent); without one it is a notification only for a method starting
//!   `notifications/`; without `method` it is a response when `result` or a non-null `error` is there;
//! - `params` of a request or notification is an object or null; for `tools/call` it is an object,
//!   `name` a string, `arguments` and `_meta` absent, null or an object; a request or notification
//!   carries no `result` and no non-null `error`.
//!
//! Checked: whatever the model refuses, `Message::parse` refuses too; what both accept reads the same:
//! kind, method, the id's canonical JSON (`RequestId::as_json` is the id *value*: `"\u0061"` is `"a"`),
//! `is_error`, and for `tools/call` the tool name and arguments that `ToolCallParams` gives.
//! Left open (nothing checked): responses whose id is neither null, a string nor an integer (the
//! rules say nothing), requests with the id `-0` (an integer by its text, `0` or `-0.0` by value;
//! the gateway refuses it as a float), and responses nested deeper than 128 levels (a server's deep
//! answer is passed on; the gateway checks its keys 120 levels down).
#![no_main]

use arbitrary::{Result as AResult, Unstructured};
use libfuzzer_sys::fuzz_target;
use portcullis_wire::message::ToolCallParams;
use portcullis_wire::{method, Kind, Message};
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes: Vec<u8> = if mode == 0 {
        rest.to_vec()
    } else {
        let mut u = Unstructured::new(rest);
        match generate(&mut u) {
            Ok(text) => text,
            Err(_) => return,
        }
    };
    check(&bytes);
});

fn check(bytes: &[u8]) {
    let parsed = Message::parse(bytes.to_vec());
    let expected = model(bytes);
    let shown = String::from_utf8_lossy(bytes);
    match (&expected, &parsed) {
        // A server's answer nested past the limit is passed on as it came (its top is checked).
        (Model::Refuse(why), Ok(msg)) if why.contains("nested deeper") && msg.is_response() => {}
        (Model::Refuse(why), Ok(msg)) => {
            panic!(
                "the model refuses ({why}) but Message::parse accepted {:?}: {shown}",
                msg.kind()
            )
        }
        (Model::Accept(want), Ok(msg)) => {
            let got = read_gateway(msg);
            assert_eq!(
                &got, want,
                "the gateway reads {shown} differently from the strict reading"
            );
        }
        _ => {}
    }
}

// ------------------------------------------------------------------------------------------------
// What the gateway read, and what the model reads, in one shape.

#[derive(Debug, PartialEq)]
struct Reading {
    kind: RKind,
    /// For a `tools/call` request: the tool name and arguments (null and absent are both `None`).
    call: Option<(String, Option<Value>)>,
}

#[derive(Debug, PartialEq)]
enum RKind {
    Request { id: String, method: String },
    Notification { method: String },
    Response { id: Option<String>, is_error: bool },
}

fn read_gateway(msg: &Message) -> Reading {
    let kind = match msg.kind() {
        Kind::Request { id, method } => RKind::Request {
            id: id.as_json().to_owned(),
            method: method.to_string(),
        },
        Kind::Notification { method } => RKind::Notification {
            method: method.to_string(),
        },
        Kind::Response { id, is_error } => RKind::Response {
            id: id.as_ref().map(|i| i.as_json().to_owned()),
            is_error: *is_error,
        },
    };
    let call = match &kind {
        RKind::Request { method: m, .. } if m == method::TOOLS_CALL => match msg.params::<ToolCallParams>() {
            Ok(p) => Some((
                p.name,
                msg.arguments().and_then(|a| serde_json::from_slice::<serde_json::Value>(&a).ok()),
            )),
            Err(e) => Some((format!("<params refused: {e}>"), None)),
        },
        _ => None,
    };
    Reading { kind, call }
}

// ------------------------------------------------------------------------------------------------
// The reference model.

enum Model {
    Refuse(String),
    Accept(Reading),
    /// The rules leave it open; nothing is checked.
    Open,
}

#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    /// The number's text, already checked against the grammar and the range.
    Num(String),
    Str(String),
    Arr(Vec<J>),
    /// Every member in order, repeated keys kept.
    Obj(Vec<(String, J)>),
}

fn model(bytes: &[u8]) -> Model {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Model::Refuse("not UTF-8".into());
    };
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let value = match p.value() {
        Ok(v) => v,
        Err(e) => return Model::Refuse(format!("JSON: {e} at byte {}", p.i)),
    };
    p.ws();
    if p.i != p.s.len() {
        return Model::Refuse(format!("trailing data at byte {}", p.i));
    }
    if let Err(e) = no_colliding_keys(&value) {
        return Model::Refuse(e);
    }
    let J::Obj(members) = value else {
        return Model::Refuse("not an object".into());
    };
    let get = |k: &str| members.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let jsonrpc_ok = matches!(get("jsonrpc"), Some(J::Str(v)) if v == "2.0");
    let method = match get("method") {
        Some(J::Str(m)) => Some(m.clone()),
        Some(_) => return Model::Refuse("method is not a string".into()),
        None => None,
    };
    let kind = match (method, get("id")) {
        // `-0`: an integer by its text, but readers disagree on its value (0 or -0.0); left open.
        (Some(_), Some(J::Num(text))) if text == "-0" => return Model::Open,
        (Some(m), Some(id)) => match canonical_id(id) {
            Some(id) => RKind::Request { id, method: m },
            None => return Model::Refuse("request id is not a string or an integer".into()),
        },
        (Some(m), None) if m.starts_with("notifications/") => RKind::Notification { method: m },
        (Some(_), None) => return Model::Refuse("no id and not a notifications/ method".into()),
        (None, id) => {
            let is_error = matches!(get("error"), Some(e) if !matches!(e, J::Null));
            if get("result").is_none() && !is_error {
                return Model::Refuse("no method, result or error".into());
            }
            let id = match id {
                None | Some(J::Null) => None,
                Some(other) => match canonical_id(other) {
                    Some(id) => Some(id),
                    None => return Model::Open,
                },
            };
            return Model::Accept(Reading {
                kind: RKind::Response { id, is_error },
                call: None,
            });
        }
    };
    if !jsonrpc_ok {
        return Model::Refuse("jsonrpc is not \"2.0\"".into());
    }
    if get("result").is_some() || matches!(get("error"), Some(e) if !matches!(e, J::Null)) {
        return Model::Refuse("a request or notification carrying a result or an error".into());
    }
    let params = get("params");
    if !matches!(params, None | Some(J::Null | J::Obj(_))) {
        return Model::Refuse("params is neither an object nor null".into());
    }
    let mut call = None;
    if let RKind::Request { method: m, .. } = &kind {
        if m == method::TOOLS_CALL {
            let Some(J::Obj(p)) = params else {
                return Model::Refuse("tools/call params not an object".into());
            };
            let pget = |k: &str| p.iter().find(|(key, _)| key == k).map(|(_, v)| v);
            let Some(J::Str(name)) = pget("name") else {
                return Model::Refuse("tools/call name not a string".into());
            };
            if !matches!(pget("_meta"), None | Some(J::Null | J::Obj(_))) {
                return Model::Refuse("tools/call _meta not an object".into());
            }
            let arguments = match pget("arguments") {
                None | Some(J::Null) => None,
                Some(a @ J::Obj(_)) => Some(to_value(a)),
                Some(_) => return Model::Refuse("tools/call arguments not an object".into()),
            };
            call = Some((name.clone(), arguments));
        }
    }
    Model::Accept(Reading { kind, call })
}

/// The canonical JSON of a request id: a string as serde_json writes it, an integer in decimal.
fn canonical_id(id: &J) -> Option<String> {
    match id {
        J::Str(s) => Some(serde_json::to_string(s).expect("a string serializes")),
        J::Num(text) if !text.contains(['.', 'e', 'E']) => {
            if let Ok(n) = text.parse::<i64>() {
                Some(n.to_string())
            } else {
                text.parse::<u64>().ok().map(|n| n.to_string())
            }
        }
        _ => None,
    }
}

fn to_value(j: &J) -> Value {
    match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Num(text) => serde_json::from_str(text).expect("a number in range reads"),
        J::Str(s) => Value::String(s.clone()),
        J::Arr(items) => Value::Array(items.iter().map(to_value).collect()),
        J::Obj(members) => {
            let mut map = Map::new();
            for (k, v) in members {
                map.insert(k.clone(), to_value(v));
            }
            Value::Object(map)
        }
    }
}

/// Rust's simple case mapping: the mapping when it is one char, else the char itself.
fn simple(c: char, mut mapped: impl Iterator<Item = char>) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

fn fold_char(c: char) -> char {
    let l = simple(c, c.to_lowercase());
    let u = simple(l, l.to_uppercase());
    simple(u, u.to_lowercase())
}

fn fold(key: &str) -> String {
    key.chars().map(fold_char).collect()
}

fn no_colliding_keys(value: &J) -> Result<(), String> {
    match value {
        J::Arr(items) => items.iter().try_for_each(no_colliding_keys),
        J::Obj(members) => {
            for (i, (a, _)) in members.iter().enumerate() {
                for (b, _) in &members[..i] {
                    if a == b {
                        return Err(format!("repeated key {a:?}"));
                    }
                    if fold(a) == fold(b) {
                        return Err(format!("keys {b:?} and {a:?} are equal under case folding"));
                    }
                }
            }
            members.iter().try_for_each(|(_, v)| no_colliding_keys(v))
        }
        _ => Ok(()),
    }
}

/// RFC 8259 over bytes known to be UTF-8.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), String> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected {:?}", b as char))
        }
    }

    fn literal(&mut self, word: &str, value: J) -> Result<J, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(value)
        } else {
            Err(format!("expected {word}"))
        }
    }

    fn value(&mut self) -> Result<J, String> {
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => self.string().map(J::Str),
            Some(b't') => self.literal("true", J::Bool(true)),
            Some(b'f') => self.literal("false", J::Bool(false)),
            Some(b'n') => self.literal("null", J::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err("expected a value".into()),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<J, String>) -> Result<J, String> {
        self.depth += 1;
        if self.depth > 128 {
            return Err("nested deeper than 128".into());
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> Result<J, String> {
        self.eat(b'{')?;
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(J::Obj(members));
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let value = self.value()?;
            members.push((key, value));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(J::Obj(members));
                }
                _ => return Err("expected , or }".into()),
            }
        }
    }

    fn array(&mut self) -> Result<J, String> {
        self.eat(b'[')?;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(J::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(J::Arr(items));
                }
                _ => return Err("expected , or ]".into()),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "bad \\u escape")?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("bad \\u escape".into());
        }
        self.i += 4;
        Ok(u32::from_str_radix(text, 16).expect("four hex digits"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.eat(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = self.peek().ok_or("unterminated string")?;
            self.i += 1;
            match b {
                b'"' => return Ok(String::from_utf8(out).expect("UTF-8 in, UTF-8 out")),
                0x00..=0x1f => return Err("control character in string".into()),
                b'\\' => {
                    let e = self.peek().ok_or("unterminated escape")?;
                    self.i += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = match hi {
                                0xD800..=0xDBFF => {
                                    if !self.s[self.i..].starts_with(b"\\u") {
                                        return Err("lone leading surrogate".into());
                                    }
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..=0xDFFF).contains(&lo) {
                                        return Err("lone leading surrogate".into());
                                    }
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                }
                                0xDC00..=0xDFFF => return Err("lone trailing surrogate".into()),
                                c => c,
                            };
                            char::from_u32(code).ok_or("bad code point")?
                        }
                        _ => return Err("bad escape".into()),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                other => out.push(other),
            }
        }
    }

    fn number(&mut self) -> Result<J, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return Err("bad number".into()),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("bad fraction".into());
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("bad exponent".into());
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII").to_owned();
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(J::Num(text)),
            _ => Err("number out of range".into()),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// The generator.

const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "name",
    "arguments",
    "path",
    "result",
    "error",
    "_meta",
    "message",
    "kind",
    "ss",
];
const METHODS: &[&str] = &[
    "tools/call",
    "ping",
    "notifications/initialized",
    "notifications/cancelled",
    "tools/list",
    "Tools/Call",
    "tools/call ",
    "initialize",
];
const STRINGS: &[&str] = &[
    "2.0",
    "1.0",
    "echo",
    "wipe",
    "read_file",
    "/tmp/allowed/x",
    "/etc/passwd",
    "a",
    "\u{17f}",
    "\u{212a}",
    "\u{df}",
    "\u{1e9e}",
    "\u{3c3}",
    "\u{3c2}",
    "caf\u{e9}",
    "\u{2028}",
    "",
];
/// Characters for free keys: ones whose case folding is special.
const KEY_CHARS: &[char] = &[
    'a', 'A', 's', 'S', '\u{17f}', 'k', 'K', '\u{212a}', '\u{df}', '\u{1e9e}', '\u{3c3}', '\u{3c2}', '\u{3a3}', 'i',
    'I', '\u{130}', '\u{131}',
];

fn push_json_char(out: &mut String, c: char, escape: bool) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        c if (c as u32) < 0x20 || escape => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
        c => out.push(c),
    }
}

/// A key spelled one of many ways: as is, upper or capitalised, one letter's case flipped, one or
/// every char escaped, `s` as U+017F, `k` as U+212A, a NUL appended; or a short key of fold-special chars.
fn gen_key(u: &mut Unstructured<'_>, prefer: Option<&str>) -> AResult<String> {
    let base: String = match prefer {
        Some(k) if u.ratio(3, 4)? => k.to_owned(),
        _ if u.ratio(1, 6)? => {
            let n = u.int_in_range(1..=3)?;
            (0..n)
                .map(|_| u.choose(KEY_CHARS).copied())
                .collect::<AResult<String>>()?
        }
        _ => (*u.choose(KEYS)?).to_owned(),
    };
    let chars: Vec<char> = base.chars().collect();
    let pick = if chars.is_empty() {
        0
    } else {
        usize::from(u.arbitrary::<u8>()?) % chars.len()
    };
    let mut escape_at = None;
    let mut escape_all = false;
    let spelled: Vec<char> = match u.int_in_range(0..=9)? {
        0..=3 => chars,
        4 => base.to_uppercase().chars().collect(),
        5 => chars
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                if i == 0 {
                    c.to_uppercase().collect::<Vec<_>>()
                } else {
                    vec![*c]
                }
            })
            .collect(),
        6 => chars
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                if i == pick {
                    c.to_uppercase().collect::<Vec<_>>()
                } else {
                    vec![*c]
                }
            })
            .collect(),
        7 => {
            escape_at = Some(pick);
            escape_all = u.ratio(1, 3)?;
            chars
        }
        8 => chars
            .iter()
            .map(|&c| {
                if c == 's' {
                    '\u{17f}'
                } else if c == 'k' {
                    '\u{212a}'
                } else {
                    c
                }
            })
            .collect(),
        _ => chars.into_iter().chain(['\0']).collect(),
    };
    let mut out = String::from("\"");
    for (i, c) in spelled.into_iter().enumerate() {
        push_json_char(&mut out, c, escape_all || escape_at == Some(i));
    }
    out.push('"');
    Ok(out)
}

fn gen_string(u: &mut Unstructured<'_>, pool: &[&str]) -> AResult<String> {
    let s = *u.choose(pool)?;
    let escape = u.int_in_range(0..=3)?;
    let mut out = String::from("\"");
    if escape == 3 && u.ratio(1, 4)? {
        out.push_str(if u.arbitrary()? { "\\ud800" } else { "\\udc00" });
    }
    for (i, c) in s.chars().enumerate() {
        push_json_char(&mut out, c, escape == 1 || (escape == 2 && i == 0));
    }
    out.push('"');
    Ok(out)
}

fn gen_id(u: &mut Unstructured<'_>) -> AResult<String> {
    Ok(match u.int_in_range(0..=11)? {
        0 => "null".into(),
        1 => "1.0".into(),
        2 => "1e0".into(),
        3 => "-0".into(),
        4 => "18446744073709551616".into(),
        5 => "-9223372036854775809".into(),
        6 => "\"\\u0061\"".into(),
        7 => gen_string(u, STRINGS)?,
        8 => "true".into(),
        9 => "[1]".into(),
        _ => u.arbitrary::<i64>()?.to_string(),
    })
}

fn gen_number(u: &mut Unstructured<'_>) -> AResult<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 => "1e400".into(),
        1 => "-0".into(),
        2 => "0.5".into(),
        3 => "18446744073709551616".into(),
        4 => u.arbitrary::<u64>()?.to_string(),
        _ => u.arbitrary::<i32>()?.to_string(),
    })
}

fn gen_value(u: &mut Unstructured<'_>, depth: usize, key_hint: Option<&str>) -> AResult<String> {
    let hint = key_hint.map(fold);
    match hint.as_deref() {
        Some("method") if u.ratio(4, 5)? => return gen_string(u, METHODS),
        Some("id") if u.ratio(4, 5)? => return gen_id(u),
        Some("jsonrpc") if u.ratio(4, 5)? => return gen_string(u, &["2.0", "1.0", "2.0 "]),
        Some("name") if u.ratio(4, 5)? => return gen_string(u, &["echo", "wipe", "read_file", "wipe\u{0}", "Echo"]),
        Some("path") if u.ratio(4, 5)? => return gen_string(u, &["/tmp/allowed/x", "/etc/passwd"]),
        Some("params") if u.ratio(4, 5)? => return gen_object(u, depth + 1, &["name", "arguments", "_meta"]),
        Some("arguments") if u.ratio(4, 5)? => return gen_object(u, depth + 1, &["path", "message", "kind", "ss"]),
        _ => {}
    }
    let choice = if depth >= 5 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=6)?
    };
    match choice {
        0 => Ok("null".into()),
        1 => Ok(if u.arbitrary()? { "true" } else { "false" }.into()),
        2 => gen_number(u),
        3 | 4 => gen_string(u, STRINGS),
        5 => {
            let n = u.int_in_range(0..=3)?;
            let items = (0..n)
                .map(|_| gen_value(u, depth + 1, None))
                .collect::<AResult<Vec<_>>>()?;
            Ok(format!("[{}]", items.join(",")))
        }
        _ => gen_object(u, depth + 1, KEYS),
    }
}

/// An object whose keys prefer `keys` (in order, each maybe repeated or respelled), plus a few more.
fn gen_object(u: &mut Unstructured<'_>, depth: usize, keys: &[&str]) -> AResult<String> {
    let mut members = Vec::new();
    for &k in keys {
        if u.ratio(2, 3)? {
            members.push((gen_key(u, Some(k))?, k));
        }
    }
    let extra = u.int_in_range(0..=3)?;
    for _ in 0..extra {
        let k = *u.choose(keys)?;
        members.push((gen_key(u, Some(k))?, k));
    }
    if members.len() > 1 && u.arbitrary()? {
        let i = usize::from(u.arbitrary::<u8>()?) % members.len();
        let j = usize::from(u.arbitrary::<u8>()?) % members.len();
        members.swap(i, j);
    }
    let mut parts = Vec::new();
    for (key, hint) in members {
        let unescaped: String = serde_json::from_str(&key).unwrap_or_default();
        let hint_key = if fold(&unescaped).trim_end_matches('\0') == fold(hint) {
            hint
        } else {
            unescaped.as_str()
        };
        let value = gen_value(u, depth, Some(hint_key))?;
        let sep = if u.ratio(1, 8)? { " : " } else { ":" };
        parts.push(format!("{key}{sep}{value}"));
    }
    Ok(format!("{{{}}}", parts.join(",")))
}

fn generate(u: &mut Unstructured<'_>) -> AResult<Vec<u8>> {
    let body = gen_object(u, 0, &["jsonrpc", "id", "method", "params", "result", "error"])?;
    let mut out = Vec::new();
    match u.int_in_range(0..=15)? {
        0 => out.extend_from_slice("\u{feff}".as_bytes()),
        1 => out.extend_from_slice(b" \r\n\t"),
        _ => {}
    }
    out.extend_from_slice(body.as_bytes());
    match u.int_in_range(0..=15)? {
        0 => out.extend_from_slice(b"x"),
        1 => out.extend_from_slice(body.as_bytes()),
        2 => out.extend_from_slice(b"/* c */"),
        3 => out.extend_from_slice(b" \n"),
        4 => out.push(0xff),
        _ => {}
    }
    Ok(out)
}
