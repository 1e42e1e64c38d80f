//! Conditions on a call: the `when` of a rule.
//!
//! A condition names what it reads — a path into the arguments, or the client's self-reported
//! `client.name` / `client.version` — and a list of operator tests, all of which must hold. Values are compared without type conversion: an operator that meets a value of
//! the wrong type does not hold (the string `"5"` is not greater than 3), because guessing
//! at conversions would make a security decision depend on how a number happened to be
//! spelled. Numbers are the one exception: they compare by value, so `1` equals `1.0`.

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Map, Number, Value};

/// Prefix every condition path starts with; the rest addresses into the call's arguments.
pub(crate) const ARGUMENTS_PREFIX: &str = "arguments.";
/// The client's self-reported identity (MCP `clientInfo`), as condition keys.
pub(crate) const CLIENT_NAME: &str = "client.name";
pub(crate) const CLIENT_VERSION: &str = "client.version";

/// Operator names in documentation order, as written in a policy file.
pub(crate) const OPERATORS: [&str; 14] = [
    "eq", "ne", "in", "not_in", "regex", "contains", "prefix", "glob", "path_under", "gt", "gte", "lt", "lte",
    "exists",
];

/// What a decision may read about a call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The `tools/call` params' `arguments` (`Value::Null` when there are none).
    pub arguments: &'a Value,
    /// The agent's self-reported `clientInfo.name` / `.version`. Self-reported: good for
    /// treating Claude Code and Cursor differently, not for trusting one.
    pub client_name: Option<&'a str>,
    pub client_version: Option<&'a str>,
}

impl<'a> CallFacts<'a> {
    /// The arguments alone, from a client that did not say who it is.
    pub fn arguments(arguments: &'a Value) -> Self {
        CallFacts {
            arguments,
            client_name: None,
            client_version: None,
        }
    }
}

/// One `"arguments.x.y": { ...operators }` pair of a rule's `when`, compiled.
#[derive(Debug)]
pub(crate) struct Condition {
    subject: Subject,
    tests: Vec<Test>,
}

/// What a condition reads.
#[derive(Debug)]
pub(crate) enum Subject {
    Argument(ArgumentPath),
    ClientName,
    ClientVersion,
}

impl Subject {
    /// Parses a `when` key; the message says what was expected.
    pub(crate) fn parse(text: &str) -> Result<Subject, String> {
        match text {
            CLIENT_NAME => Ok(Subject::ClientName),
            CLIENT_VERSION => Ok(Subject::ClientVersion),
            _ => ArgumentPath::parse(text).map(Subject::Argument),
        }
    }
}

impl Condition {
    pub(crate) fn new(subject: Subject, tests: Vec<Test>) -> Self {
        Condition { subject, tests }
    }

    /// Whether every test holds for what this condition reads.
    pub(crate) fn holds(&self, facts: &CallFacts<'_>) -> bool {
        let client = |text: Option<&str>| text.map(|t| Value::String(t.to_owned()));
        let owned;
        let value = match &self.subject {
            Subject::Argument(path) => path.resolve(facts.arguments),
            Subject::ClientName => {
                owned = client(facts.client_name);
                owned.as_ref()
            }
            Subject::ClientVersion => {
                owned = client(facts.client_version);
                owned.as_ref()
            }
        };
        self.tests.iter().all(|test| test.holds(value))
    }

    /// A key on this condition's path that a case-insensitive reader would take for the one the
    /// condition reads: `(found, read)`.
    pub(crate) fn shadowed_key(&self, arguments: &Value) -> Option<(String, String)> {
        match &self.subject {
            Subject::Argument(path) => path.shadowed_key(arguments),
            Subject::ClientName | Subject::ClientVersion => None,
        }
    }
}

/// A dotted path below `arguments`, split once at load so evaluation only walks it.
#[derive(Debug)]
pub(crate) struct ArgumentPath {
    segments: Vec<Segment>,
}

#[derive(Debug)]
struct Segment {
    /// The segment as written: an object key (digits are valid object keys too).
    key: Box<str>,
    /// The segment as an array index, when it is one.
    index: Option<usize>,
}

impl ArgumentPath {
    /// Parses `arguments.a.0.b`. The message says what was expected.
    pub(crate) fn parse(text: &str) -> Result<ArgumentPath, String> {
        let expectation = || {
            format!(
                "expected a path like \"arguments.query\" or \"arguments.files.0.path\", or \"client.name\" / \"client.version\", found {text:?}"
            )
        };
        let Some(rest) = text.strip_prefix(ARGUMENTS_PREFIX) else {
            return Err(expectation());
        };
        let mut segments = Vec::new();
        for part in rest.split('.') {
            if part.is_empty() {
                return Err(format!("{}: empty path segment", expectation()));
            }
            segments.push(Segment {
                key: part.into(),
                index: part.parse().ok(),
            });
        }
        Ok(ArgumentPath { segments })
    }

    /// The first key along this path that differs from the path's own key only by case
    /// (`PATH` where the policy reads `path`). The policy would decide on one value and a server
    /// built on Go's encoding/json could act on the other, so such a call is not decided here.
    fn shadowed_key(&self, arguments: &Value) -> Option<(String, String)> {
        let mut current = arguments;
        for segment in &self.segments {
            current = match current {
                Value::Object(map) => {
                    let read = &*segment.key;
                    if let Some(found) = map
                        .keys()
                        .find(|k| k.as_str() != read && portcullis_wire::strict::same_under_folding(k, read))
                    {
                        return Some((found.clone(), read.to_owned()));
                    }
                    map.get(read)?
                }
                Value::Array(items) => items.get(segment.index?)?,
                _ => return None,
            };
        }
        None
    }

    /// The value at this path, or `None` when some step is missing.
    fn resolve<'v>(&self, arguments: &'v Value) -> Option<&'v Value> {
        let mut current = arguments;
        for segment in &self.segments {
            current = match current {
                Value::Object(map) => map.get(&*segment.key)?,
                Value::Array(items) => items.get(segment.index?)?,
                _ => return None,
            };
        }
        Some(current)
    }
}

/// One operator with its compiled operand.
#[derive(Debug)]
pub(crate) enum Test {
    Eq(Value),
    Ne(Value),
    In(Vec<Value>),
    NotIn(Vec<Value>),
    Regex(Regex),
    Contains(Value),
    Prefix(String),
    Glob(crate::pattern::Pattern),
    PathUnder(crate::path_under::BasePath),
    Gt(Number),
    Gte(Number),
    Lt(Number),
    Lte(Number),
    Exists(bool),
}

impl Test {
    /// Compiles operator `name` with `operand`; the message says what was expected.
    pub(crate) fn compile(name: &str, operand: &Value) -> Result<Test, String> {
        let number = |make: fn(Number) -> Test| match operand {
            Value::Number(n) => Ok(make(n.clone())),
            other => Err(format!("expected a number, found {}", describe(other))),
        };
        let list = |make: fn(Vec<Value>) -> Test| match operand {
            Value::Array(items) => Ok(make(items.clone())),
            other => Err(format!("expected an array, found {}", describe(other))),
        };
        match name {
            "eq" => Ok(Test::Eq(operand.clone())),
            "ne" => Ok(Test::Ne(operand.clone())),
            "in" => list(Test::In),
            "not_in" => list(Test::NotIn),
            "regex" => match operand {
                Value::String(pattern) => Regex::new(pattern)
                    .map(Test::Regex)
                    .map_err(|err| format!("invalid regular expression: {}", regex_reason(&err))),
                other => Err(format!(
                    "expected a regular expression string, found {}",
                    describe(other)
                )),
            },
            "contains" => Ok(Test::Contains(operand.clone())),
            "prefix" => string(operand).map(|p| Test::Prefix(p.to_owned())),
            "glob" => string(operand).and_then(crate::pattern::Pattern::parse).map(Test::Glob),
            "path_under" => string(operand).and_then(crate::path_under::BasePath::parse).map(Test::PathUnder),
            "gt" => number(Test::Gt),
            "gte" => number(Test::Gte),
            "lt" => number(Test::Lt),
            "lte" => number(Test::Lte),
            "exists" => match operand {
                Value::Bool(b) => Ok(Test::Exists(*b)),
                other => Err(format!("expected true or false, found {}", describe(other))),
            },
            other => Err(format!(
                "unknown operator {other:?}, expected one of {}",
                quoted_list(&OPERATORS)
            )),
        }
    }

    /// Whether this test holds for `value` (`None` when the path is missing).
    fn holds(&self, value: Option<&Value>) -> bool {
        let Some(value) = value else {
            // A missing value equals nothing, so only the negative tests hold.
            return matches!(self, Test::Ne(_) | Test::NotIn(_) | Test::Exists(false));
        };
        match self {
            Test::Eq(expected) => json_eq(value, expected),
            Test::Ne(expected) => !json_eq(value, expected),
            Test::In(choices) => choices.iter().any(|c| json_eq(value, c)),
            Test::NotIn(choices) => !choices.iter().any(|c| json_eq(value, c)),
            Test::Regex(regex) => value.as_str().is_some_and(|s| regex.is_match(s)),
            Test::Contains(needle) => match (value, needle) {
                (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
                (Value::Array(items), _) => items.iter().any(|item| json_eq(item, needle)),
                _ => false,
            },
            Test::Prefix(prefix) => value.as_str().is_some_and(|s| s.starts_with(prefix.as_str())),
            Test::Glob(pattern) => value.as_str().is_some_and(|s| pattern.matches(s)),
            Test::PathUnder(base) => value.as_str().is_some_and(|s| base.contains(s)),
            Test::Gt(bound) => compare(value, bound) == Some(Ordering::Greater),
            Test::Gte(bound) => matches!(compare(value, bound), Some(Ordering::Greater | Ordering::Equal)),
            Test::Lt(bound) => compare(value, bound) == Some(Ordering::Less),
            Test::Lte(bound) => {
                matches!(compare(value, bound), Some(Ordering::Less | Ordering::Equal))
            }
            Test::Exists(expected) => *expected,
        }
    }
}

/// The operand as a string; the message says what was found instead.
fn string(operand: &Value) -> Result<&str, String> {
    operand
        .as_str()
        .ok_or_else(|| format!("expected a string, found {}", describe(operand)))
}

/// Orders `value` against `bound` when `value` is a number; `None` otherwise.
fn compare(value: &Value, bound: &Number) -> Option<Ordering> {
    match value {
        Value::Number(n) => compare_numbers(n, bound),
        _ => None,
    }
}

/// Compares two JSON numbers exactly where both are integers (an `f64` cannot hold every
/// `u64`), and as floats otherwise.
fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return Some(x.cmp(&y));
    }
    // One integer is above i64::MAX and the other negative.
    if a.is_u64() && b.is_i64() {
        return Some(Ordering::Greater);
    }
    if a.is_i64() && b.is_u64() {
        return Some(Ordering::Less);
    }
    a.as_f64()?.partial_cmp(&b.as_f64()?)
}

/// JSON equality in which numbers compare by value (`1 == 1.0`) at any depth.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Some(Ordering::Equal),
        (Value::Array(xs), Value::Array(ys)) => xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y)),
        (Value::Object(xs), Value::Object(ys)) => objects_eq(xs, ys),
        _ => a == b,
    }
}

fn objects_eq(xs: &Map<String, Value>, ys: &Map<String, Value>) -> bool {
    xs.len() == ys.len() && xs.iter().all(|(key, x)| ys.get(key).is_some_and(|y| json_eq(x, y)))
}

/// The one-line reason from a regex error; its `Display` draws a multi-line caret diagram,
/// which would break the one-problem-per-line output.
fn regex_reason(err: &regex::Error) -> String {
    let text = err.to_string();
    text.lines()
        .find_map(|line| line.strip_prefix("error: "))
        .map_or_else(|| text.split_whitespace().collect::<Vec<_>>().join(" "), str::to_owned)
}

/// How a found value is named in a message: scalars verbatim, containers by kind.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        scalar => scalar.to_string(),
    }
}

/// `"a", "b", "c"` for messages.
pub(crate) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
