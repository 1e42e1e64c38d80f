//! The readings of a value: what mainstream server SDKs may make of the JSON they are sent.
//!
//! A server does not run the JSON; it runs what its SDK makes of it. Python's FastMCP validates
//! arguments with pydantic in lax mode (the string `"500"` is the int 500, `"yes"` is `True`,
//! and a string holding JSON is parsed first when the parameter is not a string); TypeScript
//! servers using zod's `z.coerce` apply `Number()`, `String()` and `Boolean()`; a JavaScript
//! server holds every number as an `f64`; Go and Rust SDKs are strict. So a value has a small
//! set of readings, and a condition decides over all of them ([`Verdict`]): a deny rule matches
//! when some reading matches, an allow rule only when every reading does.
//!
//! Readings are produced one at a time into a callback, so a value with no other reading (a
//! plain word or path, an object) costs one call and no allocation.

use std::ops::ControlFlow;

use serde_json::{Map, Value};

use crate::number::{self, Num};

/// How a condition's tests fared over the readings of a value: `some` — at least one reading
/// satisfies them (or the set of readings is open); `every` — every reading does (and the set is
/// known). Deny, require_approval and hide read `some`; allow reads `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) some: bool,
    pub(crate) every: bool,
}

impl Verdict {
    pub(crate) const TRUE: Verdict = Verdict {
        some: true,
        every: true,
    };
    pub(crate) const FALSE: Verdict = Verdict {
        some: false,
        every: false,
    };
    /// The readings are not all known: counts as matching for deny and as not for allow.
    pub(crate) const OPEN: Verdict = Verdict {
        some: true,
        every: false,
    };

    pub(crate) fn of(holds: bool) -> Verdict {
        Verdict {
            some: holds,
            every: holds,
        }
    }

    /// Both hold on the same reading.
    pub(crate) fn and(self, other: Verdict) -> Verdict {
        Verdict {
            some: self.some && other.some,
            every: self.every && other.every,
        }
    }

    /// Either holds (an `in` list, a disjunction of readings of one test).
    pub(crate) fn or(self, other: Verdict) -> Verdict {
        Verdict {
            some: self.some || other.some,
            every: self.every || other.every,
        }
    }

    /// The negation: "some reading does not" is "not every reading does".
    pub(crate) fn not(self) -> Verdict {
        Verdict {
            some: !self.every,
            every: !self.some,
        }
    }

    /// The verdict over the readings so far and one more reading.
    pub(crate) fn add_reading(self, other: Verdict) -> Verdict {
        Verdict {
            some: self.some || other.some,
            every: self.every && other.every,
        }
    }

    /// Nothing more can change: one reading matched and another did not.
    pub(crate) fn settled(self) -> bool {
        self.some && !self.every
    }

    /// The verdict over no readings yet.
    pub(crate) const EMPTY: Verdict = Verdict {
        some: false,
        every: true,
    };
}

/// One reading of a value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reading<'a> {
    /// The path is not there (for this reading).
    Missing,
    Null,
    Bool(bool),
    Num(Num),
    Text(&'a str),
    Array(&'a [Value]),
    Object(&'a Map<String, Value>),
}

/// Which server behaviour produced a reading; explanations name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// The value as sent.
    AsSent,
    /// A string read as a number (`Number()`, `int()`, `float()`).
    TextAsNumber,
    /// A string read as a boolean word (`"yes"`, `"off"`).
    TextAsBool,
    /// A value as JavaScript's `Boolean()` reads it (zod's `z.coerce.boolean()`): `"false"`,
    /// `"no"`, 2 and `[]` are `true`, `""` is `false`.
    JsBoolean,
    /// A string holding JSON, parsed (FastMCP does this for non-string parameters).
    TextAsJson,
    /// An integer beyond 2^53 as a JavaScript server rounds it.
    JsRounded,
    /// A number or boolean turned into text (`String(n)`, `str(n)`).
    Spelled,
    /// A boolean as 0/1, or 0/1 as a boolean.
    Converted,
    /// `null` as JavaScript's `Number()`, `String()`, `Boolean()` read it.
    NullConverted,
    /// An array as JavaScript's `Number()` reads it (zod's `z.coerce.number()`): `[]` is 0,
    /// `[x]` is `Number(x)`.
    JsNumber,
}

/// What readings to produce.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Want {
    /// Numbers and booleans also as their spellings: only text operators can tell them apart.
    pub(crate) spellings: bool,
    /// Readings that merge many values into one (JavaScript's `Boolean("no")` is `true`): a sent
    /// value has them, an operand does not (else `eq "no"` would equal `"yes"`).
    pub(crate) lossy: bool,
    /// A string's conversions (numbers, booleans, JSON): not needed when only text operators
    /// read it, since they decide a converted reading on the string as sent anyway.
    pub(crate) conversions: bool,
}

/// Calls `f` with every reading of `value` (itself first) until it breaks.
pub(crate) fn each<'v>(
    value: &'v Value,
    want: Want,
    f: &mut dyn FnMut(Reading<'_>, How) -> ControlFlow<()>,
) -> ControlFlow<()> {
    match value {
        Value::Null => {
            f(Reading::Null, How::AsSent)?;
            if want.lossy {
                f(Reading::Num(Num::Int(0)), How::NullConverted)?;
                f(Reading::Bool(false), How::NullConverted)?;
                if want.spellings {
                    f(Reading::Text("null"), How::NullConverted)?;
                }
            }
            ControlFlow::Continue(())
        }
        Value::Bool(b) => {
            f(Reading::Bool(*b), How::AsSent)?;
            f(Reading::Num(Num::Int(i128::from(*b))), How::Converted)?;
            if want.spellings {
                let (lower, upper) = if *b { ("true", "True") } else { ("false", "False") };
                f(Reading::Text(lower), How::Spelled)?;
                f(Reading::Text(upper), How::Spelled)?;
            }
            ControlFlow::Continue(())
        }
        Value::Number(n) => match Num::from_json(n) {
            Some(num) => each_number(num, want, f),
            None => f(Reading::Null, How::AsSent),
        },
        Value::String(s) => each_text(s, want, f),
        Value::Array(items) => {
            f(Reading::Array(items), How::AsSent)?;
            if want.lossy {
                // `Boolean([])` is true; `Number([])` is 0 and `Number([x])` is `Number(x)`:
                // zod's `z.coerce` turns `[500]` into 500.
                f(Reading::Bool(true), How::JsBoolean)?;
                match items.as_slice() {
                    [] => f(Reading::Num(Num::Int(0)), How::JsNumber)?,
                    [only] => each_js_number(only, f)?,
                    _ => {}
                }
            }
            ControlFlow::Continue(())
        }
        Value::Object(map) => {
            f(Reading::Object(map), How::AsSent)?;
            if want.lossy {
                f(Reading::Bool(true), How::JsBoolean)?;
            }
            ControlFlow::Continue(())
        }
    }
}

/// The numbers JavaScript's `Number()` makes of the one member of an array: a number itself, a
/// string as it reads text, `null` and `""` as 0, an array of one member again; else `NaN`.
fn each_js_number(member: &Value, f: &mut dyn FnMut(Reading<'_>, How) -> ControlFlow<()>) -> ControlFlow<()> {
    match member {
        Value::Number(n) => match Num::from_json(n) {
            Some(num) => f(Reading::Num(num), How::JsNumber),
            None => ControlFlow::Continue(()),
        },
        Value::String(text) => {
            for n in number::read_text(text).iter() {
                f(Reading::Num(n), How::JsNumber)?;
            }
            if text.trim().is_empty() {
                f(Reading::Num(Num::Int(0)), How::JsNumber)?;
            }
            ControlFlow::Continue(())
        }
        Value::Null => f(Reading::Num(Num::Int(0)), How::JsNumber),
        Value::Array(items) => match items.as_slice() {
            [] => f(Reading::Num(Num::Int(0)), How::JsNumber),
            [only] => each_js_number(only, f),
            _ => ControlFlow::Continue(()),
        },
        Value::Bool(_) | Value::Object(_) => ControlFlow::Continue(()),
    }
}

fn each_number(num: Num, want: Want, f: &mut dyn FnMut(Reading<'_>, How) -> ControlFlow<()>) -> ControlFlow<()> {
    f(Reading::Num(num), How::AsSent)?;
    if let Some(rounded) = num.js_rounded() {
        f(Reading::Num(rounded), How::JsRounded)?;
    }
    match num.as_bool() {
        Some(b) => f(Reading::Bool(b), How::Converted)?,
        // `Boolean(n)`: every number but 0 (and NaN) is true to zod's `z.coerce.boolean()`.
        None if want.lossy => f(Reading::Bool(true), How::JsBoolean)?,
        None => {}
    }
    if want.spellings {
        let mut flow = ControlFlow::Continue(());
        number::spellings(num, |text| {
            if flow.is_continue() {
                flow = f(Reading::Text(text), How::Spelled);
            }
        });
        flow?;
    }
    ControlFlow::Continue(())
}

fn each_text(text: &str, want: Want, f: &mut dyn FnMut(Reading<'_>, How) -> ControlFlow<()>) -> ControlFlow<()> {
    f(Reading::Text(text), How::AsSent)?;
    if !want.conversions {
        return ControlFlow::Continue(());
    }
    let numbers = number::read_text(text);
    let exact = numbers.iter().find(|n| matches!(n, Num::Int(_)));
    for n in numbers.iter() {
        // The float of a long integer is the value as JavaScript's `Number()` rounds it.
        let rounded = matches!(n, Num::Float(_)) && exact.is_some_and(|i| !i.same(n));
        f(
            Reading::Num(n),
            if rounded { How::JsRounded } else { How::TextAsNumber },
        )?;
    }
    let word = bool_word(text);
    if let Some(b) = word {
        f(Reading::Bool(b), How::TextAsBool)?;
    }
    // `Boolean(s)`: zod's `z.coerce.boolean()` reads every non-empty string as true ("false",
    // "no", "x"), and only "" as false.
    let js = !text.is_empty();
    if want.lossy && word != Some(js) {
        f(Reading::Bool(js), How::JsBoolean)?;
    }
    match json_in_text(text) {
        Some(Value::Array(items)) => f(Reading::Array(&items), How::TextAsJson),
        Some(Value::Object(map)) => f(Reading::Object(&map), How::TextAsJson),
        Some(Value::Null) => f(Reading::Null, How::TextAsJson),
        _ => ControlFlow::Continue(()),
    }
}

/// A boolean word as pydantic or zod's `z.stringbool()` reads it (case-insensitive, surrounding
/// whitespace ignored).
pub(crate) fn bool_word(text: &str) -> Option<bool> {
    const TRUE: [&str; 7] = ["1", "on", "t", "true", "y", "yes", "enabled"];
    const FALSE: [&str; 7] = ["0", "off", "f", "false", "n", "no", "disabled"];
    let t = text.trim();
    if t.len() > "disabled".len() {
        return None;
    }
    if TRUE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(true)
    } else if FALSE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(false)
    } else {
        None
    }
}

/// The object, array or `null` a string holds as JSON, as FastMCP parses it before validation.
/// Numbers and booleans in a string are read by [`number::read_text`] and [`bool_word`].
pub(crate) fn json_in_text(text: &str) -> Option<Value> {
    let t = text.trim_start();
    match t.as_bytes().first() {
        Some(b'{' | b'[') => serde_json::from_str(text).ok(),
        Some(b'n') if text.trim() == "null" => Some(Value::Null),
        _ => None,
    }
}

/// How a reading is named in an explanation: `the number 500`.
pub(crate) fn describe(reading: Reading<'_>) -> String {
    match reading {
        Reading::Missing => "missing".to_owned(),
        Reading::Null => "null".to_owned(),
        Reading::Bool(b) => format!("the boolean {b}"),
        Reading::Num(Num::Int(i)) => format!("the number {i}"),
        Reading::Num(Num::Float(x)) => format!("the number {x}"),
        Reading::Text(t) => format!("the string {t:?}"),
        Reading::Array(_) => "an array".to_owned(),
        Reading::Object(_) => "an object".to_owned(),
    }
}

impl How {
    /// A reading that merges many values into one (see [`Want::lossy`]): an operand has it too,
    /// but it never makes two different values equal.
    pub(crate) fn is_lossy(self) -> bool {
        matches!(self, How::JsBoolean | How::NullConverted | How::JsNumber)
    }

    /// Why the value has this reading, for explanations.
    pub(crate) fn why(self) -> &'static str {
        match self {
            How::AsSent => "as sent",
            How::TextAsNumber => "a string lenient servers read as a number",
            How::TextAsBool => "a string lenient servers read as a boolean",
            How::JsBoolean => "a value JavaScript's Boolean() reads so",
            How::JsNumber => "an array JavaScript's Number() reads as its one member",
            How::TextAsJson => "a string holding JSON, which FastMCP parses",
            How::JsRounded => "an integer a JavaScript server rounds to the nearest double",
            How::Spelled => "a value servers that want text turn into this string",
            How::Converted => "a value lenient servers convert between booleans and 0/1",
            How::NullConverted => "null as JavaScript's Number(), String() or Boolean() reads it",
        }
    }
}
