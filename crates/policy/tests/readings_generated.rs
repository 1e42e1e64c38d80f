//! Generated spellings of denied values (issue 28): every spelling a lenient server reads as the
//! denied value must match the deny rule, and an allow rule on the same value must never let
//! through a spelling some server reads differently. Also, for every case, whatever an allow rule
//! lets through, the deny rule with the same `when` matches.
//!
//! The generator is a seeded xorshift (the workspace has no proptest): a failure prints the seed
//! and the spelling, and the run is the same every time.

use portcullis_policy::{Action, CallFacts, Places, Policy};
use serde_json::{json, Value};

const CASES: usize = 1500;

/// xorshift64*: small, deterministic, good enough to pick spellings.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn policy(when: &Value, action: &str) -> Policy {
    let otherwise = if action == "allow" { "deny" } else { "allow" };
    let text = json!({"version": "1", "tools": {"t": {"action": otherwise,
        "rules": [{"when": when, "action": action}]}}})
    .to_string();
    Policy::from_json_str(&text, "generated.json").expect("valid")
}

/// (deny rule matched, allow rule allowed) for the same `when`.
fn decide(when: &Value, arguments: &Value, places: &Places) -> (bool, bool) {
    let facts = CallFacts {
        places,
        ..CallFacts::arguments(arguments)
    };
    (
        policy(when, "deny").evaluate_call("t", &facts).action == Action::Deny,
        policy(when, "allow").evaluate_call("t", &facts).action == Action::Allow,
    )
}

const SPACES: [&str; 6] = [" ", "\t", "\n", "\u{a0}", "\u{3000}", "\u{2003}"];
/// Zeros of digit scripts Python's `int()` reads: ASCII, fullwidth, Arabic-Indic, Devanagari,
/// Extended Arabic-Indic.
const ZEROS: [u32; 5] = [0x30, 0xFF10, 0x660, 0x966, 0x6F0];

fn digits_in_script(text: &str, zero: u32) -> String {
    text.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_u32(zero + d).unwrap_or(c),
            None => c,
        })
        .collect()
}

fn with_underscores(rng: &mut Rng, digits: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = digits.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        out.push(*c);
        let between = i + 1 < chars.len() && c.is_ascii_digit() && chars[i + 1].is_ascii_digit();
        if between && rng.chance(3) {
            out.push('_');
        }
    }
    out
}

/// A string some lenient server reads as the integer `n`.
fn spell_number(rng: &mut Rng, n: i64) -> String {
    let magnitude = n.unsigned_abs();
    let sign = if n < 0 {
        "-"
    } else if rng.chance(3) {
        "+"
    } else {
        ""
    };
    let body = match rng.below(7) {
        0 if n >= 0 => format!("0x{magnitude:x}"),
        1 if n >= 0 => format!("0o{magnitude:o}"),
        2 if n >= 0 => format!("0b{magnitude:b}"),
        3 => format!("{magnitude}.0"),
        4 if magnitude % 10 == 0 && magnitude > 0 => format!("{}e1", magnitude / 10),
        5 => format!("{}{magnitude}", "0".repeat(rng.below(3))),
        _ => format!("{magnitude}e0"),
    };
    let radix = body.starts_with("0x") || body.starts_with("0o") || body.starts_with("0b");
    let sign = if radix { "" } else { sign };
    let mut text = format!("{sign}{body}");
    if !radix {
        if rng.chance(2) {
            text = with_underscores(rng, &text);
        }
        if rng.chance(2) {
            text = digits_in_script(&text, *rng.pick(&ZEROS));
        }
    }
    let left = if rng.chance(2) { *rng.pick(&SPACES) } else { "" };
    let right = if rng.chance(2) { *rng.pick(&SPACES) } else { "" };
    format!("{left}{text}{right}")
}

/// `value` at `arguments.opts.v`, as an object or as a string holding it as JSON.
fn nest(rng: &mut Rng, value: Value) -> Value {
    let inner = json!({ "v": value });
    if rng.chance(2) {
        json!({ "opts": inner.to_string() })
    } else {
        json!({ "opts": inner })
    }
}

#[test]
fn every_spelling_of_a_denied_number_is_denied_and_none_is_allowed_as_it() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..CASES {
        let n = match rng.below(3) {
            0 => i64::try_from(rng.below(1000)).unwrap_or(0),
            1 => i64::try_from(rng.below(2_000_000)).unwrap_or(0) - 1_000_000,
            _ => i64::try_from(rng.below(1 << 20)).unwrap_or(0) * 10,
        };
        let spelled = spell_number(&mut rng, n);
        let arguments = nest(&mut rng, Value::String(spelled.clone()));
        for op in ["eq", "gte", "lte"] {
            let when = json!({ "arguments.opts.v": { op: n } });
            let (denied, allowed) = decide(&when, &arguments, Places::unknown());
            assert!(
                denied,
                "case {case}: deny {op} {n} must match {spelled:?} in {arguments}"
            );
            assert!(
                !allowed,
                "case {case}: allow {op} {n} must not allow the string {spelled:?}"
            );
        }
    }
}

#[test]
fn every_spelling_of_true_is_denied_and_none_is_allowed_as_it() {
    let words = ["true", "yes", "on", "1", "t", "y", "false", "no", "off", "0", "f", "n"];
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for case in 0..CASES {
        let (value, is_string) = match rng.below(4) {
            0 => (json!(1), false),
            1 => (json!(1.0), false),
            _ => {
                let word: String = rng
                    .pick(&words)
                    .chars()
                    .map(|c| if rng.chance(2) { c.to_ascii_uppercase() } else { c })
                    .collect();
                let padded = if rng.chance(3) { format!(" {word}\t") } else { word };
                (Value::String(padded), true)
            }
        };
        let arguments = nest(&mut rng, value.clone());
        let when = json!({"arguments.opts.v": {"eq": true}});
        let (denied, allowed) = decide(&when, &arguments, Places::unknown());
        assert!(denied, "case {case}: deny eq true must match {value} in {arguments}");
        if is_string {
            assert!(!allowed, "case {case}: allow eq true must not allow {value}");
        }
    }
}

/// A spelling of `/home/u/.ssh/id_ed25519`, and whether only a Windows server reads it there.
fn spell_path(rng: &mut Rng) -> (String, bool) {
    let mut segments: Vec<String> = ["home", "u", ".ssh", "id_ed25519"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut windows_only = false;
    // Segment-level respellings a POSIX server reads the same way.
    let mut spelled: Vec<String> = Vec::new();
    for (i, segment) in segments.drain(..).enumerate() {
        if rng.chance(4) {
            spelled.push(".".to_owned());
        }
        if rng.chance(5) {
            spelled.push("x".to_owned());
            spelled.push("..".to_owned());
        }
        if rng.chance(6) {
            spelled.push(String::new()); // a doubled separator
        }
        let trailing = i < 3 && rng.chance(6);
        windows_only |= trailing;
        spelled.push(if trailing { format!("{segment}.") } else { segment });
    }
    let mut path = format!("/{}", spelled.join("/"));
    if rng.chance(5) {
        path = format!("/..{path}");
    }
    if rng.chance(4) {
        // Backslashes after /home/u: a Windows server splits there, a POSIX one does not.
        let cut = path.find("/u/").map_or(0, |i| i + 2);
        let (head, tail) = path.split_at(cut);
        path = format!("{head}{}", tail.replace('/', "\\"));
        windows_only = true;
    }
    match rng.below(4) {
        0 => (path.replacen("/home/u/", "~/", 1), windows_only),
        1 => (path.replacen("/home/u/", "", 1), windows_only),
        _ => (path, windows_only),
    }
}

#[test]
fn every_spelling_of_a_path_under_a_denied_directory_is_denied() {
    let places = Places {
        roots: vec!["/home/u".to_owned()],
        home: Some("/home/u".to_owned()),
    };
    let mut rng = Rng(0x94D0_49BB_1331_11EB);
    for case in 0..CASES {
        let (path, windows_only) = spell_path(&mut rng);
        if !path.contains("home/u") && !path.starts_with('~') && path.starts_with('/') {
            continue; // the prefix was respelled away by the generator's replacements
        }
        let arguments = nest(&mut rng, Value::String(path.clone()));
        let when = json!({"arguments.opts.v": {"path_under": "/home/u/.ssh"}});
        let (denied, allowed) = decide(&when, &arguments, &places);
        assert!(denied, "case {case}: deny path_under must match {path:?}");
        if windows_only {
            assert!(!allowed, "case {case}: allow path_under must not allow {path:?}");
        }
        let (_, unknown_allowed) = decide(&when, &arguments, Places::unknown());
        if !path.starts_with('/') {
            assert!(
                !unknown_allowed,
                "case {case}: {path:?} allowed without knowing the roots"
            );
        }
    }
}

#[test]
fn what_an_allow_rule_lets_through_the_same_deny_rule_matches() {
    let values = [
        json!(5),
        json!(5.5),
        json!("5"),
        json!(" 5 "),
        json!("0x5"),
        json!(true),
        json!("yes"),
        json!("no"),
        json!(""),
        json!(null),
        json!(0),
        json!(1),
        json!("abc"),
        json!([1, "2"]),
        json!("[1, 2]"),
        json!({"a": "1"}),
        json!("{\"a\": 1}"),
        json!("/tmp/x"),
        json!("tmp/x"),
        json!("/tmp\\x"),
        json!(9_007_199_254_740_993_u64),
    ];
    let operators = [
        json!({"eq": 5}),
        json!({"eq": "5"}),
        json!({"ne": 5}),
        json!({"in": [1, "yes", null]}),
        json!({"not_in": [0, "no"]}),
        json!({"eq": true}),
        json!({"ne": false}),
        json!({"eq": [1, 2]}),
        json!({"eq": {"a": 1}}),
        json!({"contains": 1}),
        json!({"contains": "1"}),
        json!({"regex": "^[0-9 ]+$"}),
        json!({"prefix": "/tmp"}),
        json!({"glob": "*"}),
        json!({"path_under": "/tmp"}),
        json!({"gt": 4}),
        json!({"lte": 5}),
        json!({"exists": true}),
        json!({"exists": false}),
        json!({"eq": 9_007_199_254_740_992_u64}),
    ];
    for value in &values {
        for operator in &operators {
            for wrapped in [json!({ "v": value }), Value::String(json!({ "v": value }).to_string())] {
                let arguments = json!({ "opts": wrapped });
                let when = json!({ "arguments.opts.v": operator });
                let (denied, allowed) = decide(&when, &arguments, Places::unknown());
                assert!(
                    !allowed || denied,
                    "{operator} on {arguments}: allowed but the deny rule does not match"
                );
            }
        }
    }
}
