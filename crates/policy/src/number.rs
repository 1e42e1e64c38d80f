//! Numbers as servers read them.
//!
//! A JSON number is held exactly by Python (`int`) and Go/Rust (`int64`/`u64`), but as the
//! nearest `f64` by JavaScript: `9007199254740993` arrives as `9007199254740992`. A string is
//! read as a number by lenient SDKs — JavaScript's `Number()` (zod's `z.coerce.number()`) and
//! Python's `int()`/`float()` (pydantic's lax mode) — each with its own grammar. This module
//! holds a number exactly enough to compare all of those ([`Num`]) and reads a string the way
//! any of them would ([`read_text`]): the union of their grammars, so no server reads a
//! number out of a string that the policy does not see too.

use std::cmp::Ordering;

/// A number as some server holds it: an exact integer, or a float (infinities included, which
/// JSON cannot carry but `Number("Infinity")` and `float("inf")` produce).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

/// Beyond this magnitude an integer may not survive a trip through an `f64`.
const EXACT_IN_F64: i128 = 1 << 53;

impl Num {
    /// A JSON number as sent.
    pub(crate) fn from_json(n: &serde_json::Number) -> Option<Num> {
        if let Some(i) = n.as_i64() {
            return Some(Num::Int(i.into()));
        }
        if let Some(u) = n.as_u64() {
            return Some(Num::Int(u.into()));
        }
        n.as_f64().map(Num::Float)
    }

    #[allow(clippy::cast_precision_loss)] // The loss is the point: it is what a JS server holds.
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// The value a JavaScript server holds instead, when it differs: an integer beyond 2^53
    /// rounded to the nearest `f64` (ties to even, as `as` and JS both round).
    pub(crate) fn js_rounded(self) -> Option<Num> {
        match self {
            Num::Int(i) if i.abs() > EXACT_IN_F64 => {
                let rounded = Num::Float(self.as_f64());
                (rounded.compare(self) != Some(Ordering::Equal)).then_some(rounded)
            }
            _ => None,
        }
    }

    /// Orders two numbers exactly: integers as integers, an integer against a float by value.
    pub(crate) fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b),
            (Num::Int(a), Num::Float(b)) => int_float(a, b),
            (Num::Float(a), Num::Int(b)) => int_float(b, a).map(Ordering::reverse),
        }
    }

    pub(crate) fn same(self, other: Num) -> bool {
        self.compare(other) == Some(Ordering::Equal)
    }

    /// 0 or 1, which lenient SDKs also read as a boolean.
    pub(crate) fn as_bool(self) -> Option<bool> {
        if self.same(Num::Int(0)) {
            Some(false)
        } else if self.same(Num::Int(1)) {
            Some(true)
        } else {
            None
        }
    }
}

/// `i` against `f` without losing either: an integral `f` is compared as an integer; a
/// fractional one is below 2^52 in magnitude, so `i as f64` orders correctly against it even
/// when it rounds.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    if f.fract() == 0.0 && f.abs() < 1e38 {
        return Some(i.cmp(&(f as i128)));
    }
    (i as f64).partial_cmp(&f)
}

/// The numbers lenient servers read out of `text`: at most one exact integer and the floats
/// JavaScript and Python make of it. Empty when no server reads a number there.
pub(crate) fn read_text(text: &str) -> Readings {
    let mut out = Readings::default();
    let trimmed = text.trim_matches(is_space);
    let Some(first) = trimmed.chars().next() else {
        // `Number("")` and `Number("  ")` are 0 (so is zod's `z.coerce.number()`).
        out.push(Num::Int(0));
        return out;
    };
    if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '.' | 'i' | 'I') || digit(first).is_some()) {
        return out; // the common case: a word, a path, a sentence.
    }
    let (negative, body) = match trimmed.as_bytes()[0] {
        b'-' => (true, &trimmed[1..]),
        b'+' => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let signed = body.len() != trimmed.len();
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        out.push(Num::Float(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
    } else if let Some(value) = radix(body).filter(|_| !signed) {
        out.push(value); // JavaScript's `0x1F`, `0o17`, `0b11` (unsigned only)
    } else if let Some(ascii) = decimal_ascii(body) {
        let sign = if negative { "-" } else { "" };
        let text = format!("{sign}{ascii}");
        if !ascii.contains(['.', 'e', 'E']) {
            if let Ok(i) = text.parse::<i128>() {
                out.push(Num::Int(i));
            }
        }
        if let Ok(f) = text.parse::<f64>() {
            out.push(Num::Float(f));
        }
    }
    out
}

/// Whitespace any of the servers trims: Unicode `White_Space` (Python, JS), the BOM (JS) and
/// the separators U+001C..U+001F (Python's `str.strip`).
fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{feff}' | '\u{1c}'..='\u{1f}')
}

/// `0x..`, `0o..`, `0b..` as JavaScript's `Number()` reads them, as the nearest `f64`.
fn radix(body: &str) -> Option<Num> {
    let bytes = body.as_bytes();
    if bytes.len() < 3 || bytes[0] != b'0' {
        return None;
    }
    let base = match bytes[1] {
        b'x' | b'X' => 16,
        b'o' | b'O' => 8,
        b'b' | b'B' => 2,
        _ => return None,
    };
    let mut value = 0.0_f64;
    for c in body[2..].chars() {
        value = value * f64::from(base) + f64::from(c.to_digit(base)?);
    }
    Some(Num::Float(value))
}

/// `body` (no sign) as an ASCII decimal literal, when Python's `float()`/`int()` or JS's
/// `Number()` reads it as one: digits of any script (Python reads `١٢٣` and `１２３`), single
/// underscores between digits (Python's `1_000`), an optional fraction and exponent.
fn decimal_ascii(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut previous_digit = false;
    let mut underscore = false;
    let mut digits = 0usize;
    let mut seen_dot = false;
    let mut seen_exp = false;
    let mut exp_digits = 0usize;
    let chars: Vec<char> = body.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if let Some(d) = digit(c) {
            out.push(char::from(b'0' + d));
            previous_digit = true;
            underscore = false;
            if seen_exp {
                exp_digits += 1;
            } else {
                digits += 1;
            }
            continue;
        }
        let next_is_digit = chars.get(i + 1).is_some_and(|&n| digit(n).is_some());
        match c {
            '_' if previous_digit && next_is_digit => underscore = true,
            '.' if !seen_dot && !seen_exp => {
                seen_dot = true;
                out.push('.');
            }
            'e' | 'E' if !seen_exp && digits > 0 => {
                seen_exp = true;
                out.push('e');
                if let Some(&sign @ ('+' | '-')) = chars.get(i + 1) {
                    out.push(sign);
                }
            }
            '+' | '-' if seen_exp && matches!(chars.get(i.wrapping_sub(1)), Some('e' | 'E')) => {}
            _ => return None,
        }
        previous_digit = false;
    }
    (digits > 0 && !underscore && (!seen_exp || exp_digits > 0)).then_some(out)
}

/// Code points of `0` in each Unicode `Nd` block (decimal digits), which Python's `int()` and
/// `float()` accept; each block holds ten digits from its zero.
const DIGIT_ZEROS: [u32; 64] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0,
    0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
    0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0,
    0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60,
    0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E950, 0x1FBF0,
];

/// The value of a decimal digit of any script.
fn digit(c: char) -> Option<u8> {
    let code = u32::from(c);
    if c.is_ascii() {
        return c.is_ascii_digit().then(|| u8::try_from(code - 0x30).unwrap_or(0));
    }
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|zero| u8::try_from(code - zero).ok())
}

/// Up to three numbers, without repeats and without allocating.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Readings {
    items: [Option<Num>; 3],
}

impl Readings {
    fn push(&mut self, n: Num) {
        if self.iter().any(|m| m.same(n)) {
            return;
        }
        if let Some(slot) = self.items.iter_mut().find(|slot| slot.is_none()) {
            *slot = Some(n);
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = Num> + '_ {
        self.items.iter().flatten().copied()
    }
}

/// The strings a number is written as by servers that turn it into text: JavaScript's
/// `String(n)` and Python's `str()` (`5` and, for a float, `5.0`). `integral_as_float`: also
/// Python's spelling of the float, for a JSON number written as a float.
pub(crate) fn spellings(n: Num, mut f: impl FnMut(&str)) {
    let js = js_string(n.as_f64());
    f(&js);
    let python = match n {
        Num::Int(i) => i.to_string(),
        Num::Float(x) => python_repr(x),
    };
    if python != js {
        f(&python);
    }
}

/// A finite, non-zero number as its shortest round-trip decimal digits and the position of the
/// decimal point: `value = 0.d1d2… × 10^point` in magnitude.
struct Decimal {
    digits: String,
    point: i32,
}

impl Decimal {
    fn of(value: f64) -> Decimal {
        let sci = format!("{:e}", value.abs());
        let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
        Decimal {
            digits: mantissa.chars().filter(char::is_ascii_digit).collect(),
            point: exponent.parse::<i32>().unwrap_or(0) + 1,
        }
    }

    fn len(&self) -> i32 {
        i32::try_from(self.digits.len()).unwrap_or(i32::MAX)
    }

    /// `ddd000` (the digits, then zeros up to the point).
    fn integer(&self) -> String {
        format!("{}{}", self.digits, zeros(self.point - self.len()))
    }

    /// `dd.ddd` (the point falls inside the digits).
    fn split(&self) -> String {
        let (whole, fraction) = self.digits.split_at(usize::try_from(self.point).unwrap_or(0));
        format!("{whole}.{fraction}")
    }

    /// `0.000ddd` (the point is before the digits).
    fn small(&self) -> String {
        format!("0.{}{}", zeros(-self.point), self.digits)
    }

    /// `d.dddE` with `exponent` the exponent's text.
    fn scientific(&self, exponent: &str) -> String {
        let (first, rest) = self.digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{first}{dot}{rest}e{exponent}")
    }
}

fn zeros(count: i32) -> String {
    "0".repeat(usize::try_from(count).unwrap_or(0))
}

/// JavaScript's `Number.prototype.toString()`.
fn js_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let decimal = Decimal::of(value);
    let point = decimal.point;
    let body = if decimal.len() <= point && point <= 21 {
        decimal.integer()
    } else if 0 < point && point <= 21 {
        decimal.split()
    } else if -6 < point && point <= 0 {
        decimal.small()
    } else {
        let exponent = point - 1;
        decimal.scientific(&format!("{}{}", if exponent >= 0 { "+" } else { "-" }, exponent.abs()))
    };
    format!("{sign}{body}")
}

/// Python's `repr(float)` (which `str()` is): fixed notation with at least one decimal while
/// the point is within -4..16, else `1e+16` / `1.5e-05`.
fn python_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let decimal = Decimal::of(value);
    let point = decimal.point;
    let body = if -4 < point && point <= 16 {
        if decimal.len() <= point {
            format!("{}.0", decimal.integer())
        } else if point > 0 {
            decimal.split()
        } else {
            decimal.small()
        }
    } else {
        let exponent = point - 1;
        decimal.scientific(&format!(
            "{}{:02}",
            if exponent >= 0 { "+" } else { "-" },
            exponent.abs()
        ))
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::{js_string, python_repr, read_text, Num};
    use rstest::rstest;

    fn read(text: &str) -> Vec<f64> {
        read_text(text).iter().map(Num::as_f64).collect()
    }

    #[rstest]
    #[case("500", 500.0)]
    #[case(" 5e2 ", 500.0)]
    #[case("+500", 500.0)]
    #[case("000500", 500.0)]
    #[case("500.0", 500.0)]
    #[case("0x1F4", 500.0)]
    #[case("0o764", 500.0)]
    #[case("0b111110100", 500.0)]
    #[case("5_00", 500.0)]
    #[case("５００", 500.0)]
    #[case("٥٠٠", 500.0)]
    #[case("\u{a0}500\u{2003}", 500.0)]
    #[case(".5e3", 500.0)]
    #[case("-1E-2", -0.01)]
    #[case("", 0.0)]
    #[case("  ", 0.0)]
    #[case("Infinity", f64::INFINITY)]
    #[case("-inf", f64::NEG_INFINITY)]
    fn strings_read_as_numbers(#[case] text: &str, #[case] want: f64) {
        let got = read(text);
        assert!(got.contains(&want), "{text:?} read as {got:?}, expected {want}");
    }

    #[rstest]
    #[case("abc")]
    #[case("/tmp/5")]
    #[case("5_")]
    #[case("_5")]
    #[case("5__0")]
    #[case("-0x10")]
    #[case("1e")]
    #[case("nan")]
    #[case("5 5")]
    #[case("²")]
    fn strings_no_server_reads_as_numbers(#[case] text: &str) {
        assert!(read(text).is_empty(), "{text:?} read as {:?}", read(text));
    }

    #[test]
    fn a_big_integer_is_read_exactly_and_as_javascript_rounds_it() {
        let got: Vec<Num> = read_text("9007199254740993").iter().collect();
        assert!(got.contains(&Num::Int(9_007_199_254_740_993)), "{got:?}");
        assert!(got.iter().any(|n| n.same(Num::Int(9_007_199_254_740_992))), "{got:?}");
        assert_eq!(
            Num::Int(9_007_199_254_740_993)
                .js_rounded()
                .map(|n| n.same(Num::Int(9_007_199_254_740_992))),
            Some(true)
        );
        assert_eq!(Num::Int(9_007_199_254_740_992).js_rounded(), None);
    }

    #[rstest]
    #[case(500.0, "500", "500.0")]
    #[case(0.1, "0.1", "0.1")]
    #[case(1e21, "1e+21", "1e+21")]
    #[case(1e16, "10000000000000000", "1e+16")]
    #[case(1e-7, "1e-7", "1e-07")]
    #[case(0.000_01, "0.00001", "1e-05")]
    #[case(-2.5, "-2.5", "-2.5")]
    #[case(123_456.789, "123456.789", "123456.789")]
    fn numbers_are_spelled_as_javascript_and_python_spell_them(#[case] x: f64, #[case] js: &str, #[case] python: &str) {
        assert_eq!(js_string(x), js);
        assert_eq!(python_repr(x), python);
    }

    #[test]
    fn integers_compare_exactly_against_floats() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        assert_eq!(Num::Int(5).compare(Num::Float(5.0)), Some(Equal));
        assert_eq!(
            Num::Int(9_007_199_254_740_993).compare(Num::Float(9_007_199_254_740_992.0)),
            Some(Greater)
        );
        assert_eq!(Num::Int(3).compare(Num::Float(3.5)), Some(Less));
        assert_eq!(
            Num::Int(i128::from(u64::MAX)).compare(Num::Float(f64::INFINITY)),
            Some(Less)
        );
    }
}
