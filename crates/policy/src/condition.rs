//! Conditions on a call's arguments: the `when` of a rule.
//!
//! A condition names a path into the arguments and a list of operator tests, all of which
//! must hold. Values are compared without type conversion: an operator that meets a value of
//! the wrong type does not hold (the string `"5"` is not greater than 3), because guessing
//! at conversions would make a security decision depend on how a number happened to be
//! spelled. Numbers are the one exception: they compare by value, so `1` equals `1.0`.

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Map, Number, Value};

/// Prefix every condition path starts with; the rest addresses into the call's arguments.
pub(crate) const ARGUMENTS_PREFIX: &str = "arguments.";

/// Operator names in documentation order, as written in a policy file.
pub(crate) const OPERATORS: [&str; 11] = [
    "eq", "ne", "in", "not_in", "regex", "contains", "gt", "gte", "lt", "lte", "exists",
];

/// One `"arguments.x.y": { ...operators }` pair of a rule's `when`, compiled.
#[derive(Debug)]
pub(crate) struct Condition {
    path: ArgumentPath,
    tests: Vec<Test>,
}

impl Condition {
    pub(crate) fn new(path: ArgumentPath, tests: Vec<Test>) -> Self {
        Condition { path, tests }
    }

    /// Whether every test holds for the value at this condition's path.
    pub(crate) fn holds(&self, arguments: &Value) -> bool {
        let value = self.path.resolve(arguments);
        self.tests.iter().all(|test| test.holds(value))
    }

    /// A key on this condition's path that a case-insensitive reader would take for the one the
    /// condition reads: `(found, read)`.
    pub(crate) fn shadowed_key(&self, arguments: &Value) -> Option<(String, String)> {
        self.path.shadowed_key(arguments)
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
        let expectation =
            || format!("expected a path like \"arguments.query\" or \"arguments.files.0.path\", found {text:?}");
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
