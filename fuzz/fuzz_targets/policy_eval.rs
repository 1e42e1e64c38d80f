//! The condition evaluator and decision order (`portcullis_policy::Policy::evaluate`).
//!
//! The fuzzer builds a structured policy (hide patterns, exact and glob keys, rules with every
//! operator, nested values) and calls with arguments, from a small alphabet so that names,
//! patterns, paths and values meet often. The policy is written as JSON and loaded; it must load,
//! and every call whose values have no reading other than as sent (strings without digits, bool
//! words or JSON; containers of them) must get exactly the decision of a plain reference
//! evaluator written here from the documented semantics (crates/policy/src/lib.rs),
//! deterministically.
//!
//! Values also come spelled the ways lenient servers read differently (numbers in strings, in
//! other scripts and radixes, boolean words, JSON held in strings, paths with `~`, `..`,
//! backslashes and trailing dots), against arbitrary roots and home directories. For those the
//! invariant of the reading model (DESIGN §4) is checked: for every rule, whatever the rule lets
//! through as an allow rule, the same `when` matches as a deny rule (every reading ⊆ any reading).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use portcullis_policy::{Action, CallFacts, Evaluation, Places, Policy, RateLimit, RuleRef};
use serde_json::{json, Map, Value};
use std::num::{NonZeroU32, NonZeroU64};

const REGEXES: [&str; 6] = ["^a", "b$", "a.*b", "^$", "[0-9]", "(?i)^A/"];
const CLASSES: [&str; 5] = ["read", "write", "execute", "delete", "unknown"];
const RISKS: [&str; 4] = ["low", "medium", "high", "critical"];
const BASES: [&str; 4] = ["/home/u", "/home/u/.ssh", "docs", "/"];
const ROOTS: [&str; 3] = ["/home/u", "/srv/data", "/"];
/// Spellings lenient servers read as 7 (or as a boolean): each has readings beside the string.
const NUMBER_TEXTS: [&str; 10] = ["7", " 7 ", "+07", "7.0", "7e0", "0x7", "0b111", "٧", "７", "7_0"];
const BOOL_WORDS: [&str; 8] = ["true", "False", "yes", "NO", "on", "off", "1", ""];
const PATH_SEGMENTS: [&str; 8] = ["home", "u", ".ssh", "..", ".", "~", "", "x."];

#[derive(Arbitrary, Debug)]
struct Input {
    /// Indexes into `ROOTS`, and whether `~` is `/home/u`.
    roots: Vec<u8>,
    home: bool,
    default: Option<Act>,
    approval_timeout: Option<u8>,
    hide: Vec<Pattern>,
    entries: Vec<EntryIn>,
    calls: Vec<Call>,
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum Act {
    Allow,
    Deny,
    RequireApproval,
}

#[derive(Arbitrary, Debug, Clone)]
struct Pattern(Vec<Token>);

#[derive(Arbitrary, Debug, Clone, PartialEq)]
enum Token {
    Lit(Letter),
    Star,
    Question,
    Class(Vec<ClassLetter>, bool),
}

/// Letters of names: alphanumeric ones and ones globset would read specially if unescaped.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum Letter {
    A,
    B,
    Underscore,
    Dash,
    Dot,
    Slash,
    Brace,
    Comma,
    Backslash,
    EAcute,
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum ClassLetter {
    A,
    B,
    Underscore,
    EAcute,
}

#[derive(Arbitrary, Debug)]
struct EntryIn {
    key: Pattern,
    action: Option<Act>,
    reason: Option<u8>,
    rate_limit: Option<(u8, u8)>,
    approval_timeout: Option<u8>,
    rules: Vec<RuleIn>,
    class: Option<u8>,
    risk: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct RuleIn {
    when: Vec<(Vec<Segment>, Vec<Op>)>,
    action: Act,
    reason: Option<u8>,
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum Segment {
    A,
    B,
    Zero,
    One,
    Path,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Eq(Val),
    Ne(Val),
    In(Vec<Val>),
    NotIn(Vec<Val>),
    Regex(u8),
    Contains(Val),
    Gt(Num),
    Gte(Num),
    Lt(Num),
    Lte(Num),
    Exists(bool),
    PathUnder(u8),
}

#[derive(Arbitrary, Debug)]
enum Val {
    Null,
    Bool(bool),
    Num(Num),
    Str(Vec<StrLetter>),
    Arr(Vec<Val>),
    Obj(Vec<(Segment, Val)>),
    /// A string a lenient server reads as a number.
    NumText(u8),
    /// A boolean word.
    BoolWord(u8),
    /// A string holding the value as JSON.
    JsonText(Box<Val>),
    /// A path: segments from `PATH_SEGMENTS`, `/` or `\` between them, absolute or not.
    Path(Vec<(u8, bool)>, bool),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Num {
    Int(i8),
    /// n + 0.5
    Half(i8),
    /// n written as a float (`3.0`): equal to the integer n.
    IntAsFloat(i8),
    Max,
    Min,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum StrLetter {
    A,
    B,
    Slash,
    Digit,
    Upper,
}

#[derive(Arbitrary, Debug)]
struct Call {
    name: CallName,
    arguments: Option<Vec<(Segment, Val)>>,
}

#[derive(Arbitrary, Debug)]
enum CallName {
    /// The text of an entry key (so exact keys and literal-looking globs are hit).
    Key(u8),
    /// The text of a hide pattern.
    Hidden(u8),
    Raw(Vec<NameLetter>),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum NameLetter {
    Letter(Letter),
    Star,
    Question,
    Bracket,
}

// ---- building the policy ----------------------------------------------------------------------

impl Act {
    fn text(self) -> &'static str {
        match self {
            Act::Allow => "allow",
            Act::Deny => "deny",
            Act::RequireApproval => "require_approval",
        }
    }

    fn action(self) -> Action {
        match self {
            Act::Allow => Action::Allow,
            Act::Deny => Action::Deny,
            Act::RequireApproval => Action::RequireApproval,
        }
    }
}

impl Letter {
    fn char(self) -> char {
        match self {
            Letter::A => 'a',
            Letter::B => 'b',
            Letter::Underscore => '_',
            Letter::Dash => '-',
            Letter::Dot => '.',
            Letter::Slash => '/',
            Letter::Brace => '{',
            Letter::Comma => ',',
            Letter::Backslash => '\\',
            Letter::EAcute => 'é',
        }
    }
}

impl ClassLetter {
    fn char(self) -> char {
        match self {
            ClassLetter::A => 'a',
            ClassLetter::B => 'b',
            ClassLetter::Underscore => '_',
            ClassLetter::EAcute => 'é',
        }
    }
}

impl Segment {
    fn text(self) -> &'static str {
        match self {
            Segment::A => "a",
            Segment::B => "b",
            Segment::Zero => "0",
            Segment::One => "1",
            Segment::Path => "path",
        }
    }
}

impl Num {
    fn value(self) -> Value {
        match self {
            Num::Int(n) => json!(n),
            Num::Half(n) => json!(f64::from(n) + 0.5),
            Num::IntAsFloat(n) => json!(f64::from(n)),
            Num::Max => json!(u64::MAX),
            Num::Min => json!(i64::MIN),
        }
    }
}

impl Val {
    /// The JSON value, nested at most `depth` deep (JSON readers limit nesting).
    fn value(&self, depth: usize) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) => n.value(),
            Val::Str(letters) => Value::String(
                letters
                    .iter()
                    .take(8)
                    .map(|l| match l {
                        StrLetter::A => 'a',
                        StrLetter::B => 'b',
                        StrLetter::Slash => '/',
                        StrLetter::Digit => '7',
                        StrLetter::Upper => 'A',
                    })
                    .collect(),
            ),
            Val::NumText(i) => json!(NUMBER_TEXTS[usize::from(*i) % NUMBER_TEXTS.len()]),
            Val::BoolWord(i) => json!(BOOL_WORDS[usize::from(*i) % BOOL_WORDS.len()]),
            Val::Path(segments, absolute) => {
                let mut text = String::from(if *absolute { "/" } else { "" });
                for (i, (segment, backslash)) in segments.iter().take(6).enumerate() {
                    if i > 0 {
                        text.push(if *backslash { '\\' } else { '/' });
                    }
                    text.push_str(PATH_SEGMENTS[usize::from(*segment) % PATH_SEGMENTS.len()]);
                }
                Value::String(text)
            }
            _ if depth == 0 => Value::Null,
            Val::JsonText(inner) => Value::String(inner.value(depth - 1).to_string()),
            Val::Arr(items) => Value::Array(items.iter().take(4).map(|v| v.value(depth - 1)).collect()),
            Val::Obj(fields) => object(fields, depth - 1),
        }
    }
}

/// An object; a repeated key keeps its first value (a policy file may not repeat keys).
fn object(fields: &[(Segment, Val)], depth: usize) -> Value {
    let mut map = Map::new();
    for (key, val) in fields.iter().take(5) {
        if !map.contains_key(key.text()) {
            map.insert(key.text().to_owned(), val.value(depth));
        }
    }
    Value::Object(map)
}

impl Pattern {
    /// Tokens with runs of `*` merged, at most 8, never empty.
    fn tokens(&self) -> Vec<Token> {
        let mut tokens: Vec<Token> = Vec::new();
        for token in self.0.iter().take(8) {
            let token = match token {
                Token::Class(letters, negated) if letters.is_empty() => Token::Class(vec![ClassLetter::A], *negated),
                Token::Class(letters, negated) => Token::Class(letters.iter().copied().take(3).collect(), *negated),
                other => other.clone(),
            };
            if !(token == Token::Star && tokens.last() == Some(&Token::Star)) {
                tokens.push(token);
            }
        }
        if tokens.is_empty() {
            tokens.push(Token::Lit(Letter::A));
        }
        tokens
    }

    fn text(&self) -> String {
        let mut text = String::new();
        for token in self.tokens() {
            match token {
                Token::Lit(l) => text.push(l.char()),
                Token::Star => text.push('*'),
                Token::Question => text.push('?'),
                Token::Class(letters, negated) => {
                    text.push('[');
                    if negated {
                        text.push('!');
                    }
                    text.extend(letters.iter().map(|l| l.char()));
                    text.push(']');
                }
            }
        }
        text
    }
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Eq(_) => "eq",
        Op::Ne(_) => "ne",
        Op::In(_) => "in",
        Op::NotIn(_) => "not_in",
        Op::Regex(_) => "regex",
        Op::Contains(_) => "contains",
        Op::Gt(_) => "gt",
        Op::Gte(_) => "gte",
        Op::Lt(_) => "lt",
        Op::Lte(_) => "lte",
        Op::Exists(_) => "exists",
        Op::PathUnder(_) => "path_under",
    }
}

/// A compiled-for-reference condition: path segments and (operator, operand) pairs.
struct Cond {
    path: Vec<&'static str>,
    ops: Vec<(&'static str, Value)>,
}

struct Rule {
    conds: Vec<Cond>,
    action: Act,
    reason: Option<String>,
}

struct Entry {
    key: String,
    tokens: Vec<Token>,
    /// As written; `None` leaves the entry's action to its default, allow.
    written_action: Option<Act>,
    action: Act,
    reason: Option<String>,
    rate_limit: Option<RateLimit>,
    approval_timeout: Option<u64>,
    rules: Vec<Rule>,
    class: Option<&'static str>,
    risk: Option<&'static str>,
}

struct Model {
    default: Act,
    approval_timeout: Option<u64>,
    hide: Vec<(String, Vec<Token>)>,
    entries: Vec<Entry>,
}

fn operand(op: &Op) -> Value {
    let list = |vals: &[Val]| Value::Array(vals.iter().take(4).map(|v| v.value(3)).collect());
    match op {
        Op::Eq(v) | Op::Ne(v) | Op::Contains(v) => v.value(3),
        Op::In(vs) | Op::NotIn(vs) => list(vs),
        Op::Regex(i) => json!(REGEXES[usize::from(*i) % REGEXES.len()]),
        Op::Gt(n) | Op::Gte(n) | Op::Lt(n) | Op::Lte(n) => n.value(),
        Op::Exists(b) => json!(b),
        Op::PathUnder(i) => json!(BASES[usize::from(*i) % BASES.len()]),
    }
}

fn rule(input: &RuleIn) -> Rule {
    let mut conds: Vec<Cond> = Vec::new();
    for (segments, ops) in input.when.iter().take(4) {
        let mut path: Vec<&'static str> = segments.iter().take(3).map(|s| s.text()).collect();
        if path.is_empty() {
            path.push("a");
        }
        if conds.iter().any(|c| c.path == path) {
            continue;
        }
        let mut compiled: Vec<(&'static str, Value)> = Vec::new();
        for op in ops.iter().take(4) {
            if !compiled.iter().any(|(name, _)| *name == op_name(op)) {
                compiled.push((op_name(op), operand(op)));
            }
        }
        if compiled.is_empty() {
            compiled.push(("exists", json!(true)));
        }
        conds.push(Cond { path, ops: compiled });
    }
    if conds.is_empty() {
        conds.push(Cond {
            path: vec!["a"],
            ops: vec![("exists", json!(true))],
        });
    }
    Rule {
        conds,
        action: input.action,
        reason: input.reason.map(|n| format!("reason {n}")),
    }
}

fn model(input: &Input) -> Model {
    let mut entries: Vec<Entry> = Vec::new();
    for e in input.entries.iter().take(8) {
        let key = e.key.text();
        // The same key twice is one entry; two keys naming the same tool (`a`, `[a]`) are refused
        // by the loader, so the generator keeps only the first.
        let exact = exact_name(&e.key.tokens());
        if entries
            .iter()
            .any(|x| x.key == key || (exact.is_some() && exact_name(&x.tokens) == exact))
        {
            continue;
        }
        entries.push(Entry {
            tokens: e.key.tokens(),
            key,
            written_action: e.action,
            action: e.action.unwrap_or(Act::Allow),
            reason: e.reason.map(|n| format!("entry {n}")),
            rate_limit: e.rate_limit.map(|(max, window)| RateLimit {
                max: NonZeroU32::MIN.saturating_add(u32::from(max)),
                window_secs: NonZeroU64::MIN.saturating_add(u64::from(window)),
            }),
            approval_timeout: e.approval_timeout.map(|s| 1 + u64::from(s)),
            rules: e.rules.iter().take(4).map(rule).collect(),
            class: e.class.map(|c| CLASSES[usize::from(c) % CLASSES.len()]),
            risk: e.risk.map(|r| RISKS[usize::from(r) % RISKS.len()]),
        });
    }
    Model {
        default: input.default.unwrap_or(Act::RequireApproval),
        approval_timeout: input.approval_timeout.map(|s| 1 + u64::from(s)),
        hide: input.hide.iter().take(4).map(|p| (p.text(), p.tokens())).collect(),
        entries,
    }
}

/// The policy file for the model, as an author would write it.
fn policy_json(input: &Input, model: &Model) -> Value {
    let mut file = Map::new();
    file.insert("version".into(), json!("1"));
    if let Some(default) = input.default {
        file.insert("default".into(), json!(default.text()));
    }
    if !model.hide.is_empty() {
        file.insert("hide".into(), model.hide.iter().map(|(text, _)| json!(text)).collect());
    }
    if let Some(timeout) = model.approval_timeout {
        file.insert("approval_timeout".into(), json!(timeout));
    }
    let mut tools = Map::new();
    for entry in &model.entries {
        let mut e = Map::new();
        if let Some(action) = entry.written_action {
            e.insert("action".into(), json!(action.text()));
        }
        if let Some(reason) = &entry.reason {
            e.insert("reason".into(), json!(reason));
        }
        if let Some(limit) = entry.rate_limit {
            e.insert(
                "rate_limit".into(),
                json!({"max": limit.max.get(), "window": limit.window_secs.get()}),
            );
        }
        if let Some(timeout) = entry.approval_timeout {
            e.insert("approval_timeout".into(), json!(timeout));
        }
        if !entry.rules.is_empty() {
            let rules: Vec<Value> = entry.rules.iter().map(rule_json).collect();
            e.insert("rules".into(), Value::Array(rules));
        }
        if let Some(class) = entry.class {
            e.insert("class".into(), json!(class));
        }
        if let Some(risk) = entry.risk {
            e.insert("risk".into(), json!(risk));
        }
        tools.insert(entry.key.clone(), Value::Object(e));
    }
    file.insert("tools".into(), Value::Object(tools));
    Value::Object(file)
}

fn rule_json(rule: &Rule) -> Value {
    let mut when = Map::new();
    for cond in &rule.conds {
        let ops: Map<String, Value> = cond.ops.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect();
        when.insert(format!("arguments.{}", cond.path.join(".")), Value::Object(ops));
    }
    let mut out = json!({"when": when, "action": rule.action.text()});
    if let Some(reason) = &rule.reason {
        out["reason"] = json!(reason);
    }
    out
}

// ---- the reference evaluator ------------------------------------------------------------------

/// Whether `tokens` match all of `name`.
fn glob_match(tokens: &[Token], name: &[char]) -> bool {
    match tokens.split_first() {
        None => name.is_empty(),
        Some((Token::Star, rest)) => (0..=name.len()).any(|k| glob_match(rest, &name[k..])),
        Some((token, rest)) => {
            let Some((c, name_rest)) = name.split_first() else {
                return false;
            };
            let one = match token {
                Token::Lit(l) => l.char() == *c,
                Token::Question => true,
                Token::Class(letters, negated) => letters.iter().any(|l| l.char() == *c) != *negated,
                Token::Star => unreachable!(),
            };
            one && glob_match(rest, name_rest)
        }
    }
}

/// A literal letter, or a class of one letter (how `*`, `?` and `[` are written literally).
fn literal_char(token: &Token) -> Option<char> {
    match token {
        Token::Lit(l) => Some(l.char()),
        Token::Class(letters, false) if letters.len() == 1 => Some(letters[0].char()),
        _ => None,
    }
}

/// The one name a pattern of literals names.
fn exact_name(tokens: &[Token]) -> Option<String> {
    tokens.iter().map(literal_char).collect()
}

fn specificity(tokens: &[Token]) -> (usize, usize) {
    let literals = tokens.iter().filter(|t| literal_char(t).is_some()).count();
    (literals, tokens.len() - literals)
}

fn resolve<'v>(arguments: &'v Value, path: &[&str]) -> Option<&'v Value> {
    let mut current = arguments;
    for segment in path {
        current = match current {
            Value::Object(map) => map.get(*segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => num(a) == num(b),
        (Value::Array(xs), Value::Array(ys)) => xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y)),
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len() && xs.iter().all(|(k, x)| ys.get(k).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

fn holds(op: &str, operand: &Value, value: Option<&Value>) -> bool {
    let Some(value) = value else {
        return matches!(op, "ne" | "not_in") || (op == "exists" && operand == &json!(false));
    };
    let list = || operand.as_array().map(Vec::as_slice).unwrap_or_default();
    let order = || match (value, num(operand)) {
        (Value::Number(_), Some(bound)) => num(value).and_then(|v| v.partial_cmp(&bound)),
        _ => None,
    };
    use std::cmp::Ordering::*;
    match op {
        "eq" => same(value, operand),
        "ne" => !same(value, operand),
        "in" => list().iter().any(|c| same(value, c)),
        "not_in" => !list().iter().any(|c| same(value, c)),
        "regex" => value
            .as_str()
            .is_some_and(|s| regex::Regex::new(operand.as_str().unwrap_or_default()).is_ok_and(|r| r.is_match(s))),
        "contains" => match (value, operand) {
            (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
            (Value::Array(items), _) => items.iter().any(|item| same(item, operand)),
            _ => false,
        },
        "gt" => order() == Some(Greater),
        "gte" => matches!(order(), Some(Greater | Equal)),
        "lt" => order() == Some(Less),
        "lte" => matches!(order(), Some(Less | Equal)),
        "exists" => operand == &json!(true),
        // Only met on values that hold no path spelling (see `reads_plainly`): lexical is enough.
        "path_under" => value.as_str().is_some_and(|s| plain_under(operand.as_str().unwrap_or("/"), s)),
        other => panic!("unknown operator {other}"),
    }
}

fn reference(model: &Model, name: &str, arguments: &Value) -> Evaluation {
    let chars: Vec<char> = name.chars().collect();
    let timeout = |action: Act, entry: Option<u64>| match action {
        Act::RequireApproval => entry.or(model.approval_timeout),
        _ => None,
    };
    if let Some((text, _)) = model.hide.iter().find(|(_, tokens)| glob_match(tokens, &chars)) {
        return Evaluation {
            action: Action::Hide,
            rule: RuleRef::Hide { pattern: text.clone() },
            reason: None,
            rate_limit: None,
            approval_timeout_secs: None,
        };
    }
    let exact = model
        .entries
        .iter()
        .find(|e| exact_name(&e.tokens).as_deref() == Some(name));
    let glob = || {
        model
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| specificity(&e.tokens).1 > 0 && glob_match(&e.tokens, &chars))
            .min_by_key(|(i, e)| {
                let (literals, wildcards) = specificity(&e.tokens);
                (std::cmp::Reverse(literals), wildcards, *i)
            })
            .map(|(_, e)| e)
    };
    let Some(entry) = exact.or_else(glob) else {
        return Evaluation {
            action: model.default.action(),
            rule: RuleRef::Default,
            reason: None,
            rate_limit: None,
            approval_timeout_secs: timeout(model.default, None),
        };
    };
    let matched = entry.rules.iter().enumerate().find(|(_, rule)| {
        rule.conds.iter().all(|c| {
            c.ops
                .iter()
                .all(|(op, operand)| holds(op, operand, resolve(arguments, &c.path)))
        })
    });
    let (action, rule, reason) = match matched {
        Some((i, rule)) => (
            rule.action,
            RuleRef::Rule {
                key: entry.key.clone(),
                index: i,
            },
            rule.reason.clone(),
        ),
        None => (
            entry.action,
            RuleRef::Entry { key: entry.key.clone() },
            entry.reason.clone(),
        ),
    };
    Evaluation {
        action: action.action(),
        rule,
        reason,
        rate_limit: entry.rate_limit.filter(|_| action == Act::Allow),
        approval_timeout_secs: timeout(action, entry.approval_timeout),
    }
}

fn call_name(call: &CallName, model: &Model) -> String {
    match call {
        CallName::Key(i) if !model.entries.is_empty() => {
            model.entries[usize::from(*i) % model.entries.len()].key.clone()
        }
        CallName::Hidden(i) if !model.hide.is_empty() => model.hide[usize::from(*i) % model.hide.len()].0.clone(),
        CallName::Raw(letters) if !letters.is_empty() => letters
            .iter()
            .take(12)
            .map(|l| match l {
                NameLetter::Letter(l) => l.char(),
                NameLetter::Star => '*',
                NameLetter::Question => '?',
                NameLetter::Bracket => '[',
            })
            .collect(),
        _ => "a".to_owned(),
    }
}

/// `path` under `base` for the plain values the reference meets (no `.`, `..`, `~`, `\\`):
/// segment by segment, both absolute or both relative.
fn plain_under(base: &str, path: &str) -> bool {
    let split = |p: &str| p.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect::<Vec<_>>();
    if base.starts_with('/') != path.starts_with('/') {
        return false;
    }
    let (b, p) = (split(base), split(path));
    p.len() >= b.len() && b.iter().zip(&p).all(|(x, y)| x == y)
}

/// Whether every value in `value` is read only as sent by every server the policy models: no
/// numbers, booleans or null (they convert), no string holding digits, a boolean word, JSON, a
/// backslash or a dot (paths), nor an empty string; with `paths` (the policy has `path_under`),
/// only absolute paths without empty segments, which every server resolves as written.
fn reads_plainly(value: &Value, paths: bool) -> bool {
    match value {
        Value::String(s) => {
            !s.is_empty()
                && !s.chars().any(|c| c.is_numeric() || matches!(c, '{' | '[' | '\\' | '.' | '~' | ' '))
                && !["t", "f", "y", "n", "on", "off", "no", "yes", "true", "false", "null", "inf", "infinity"]
                    .iter()
                    .any(|w| s.trim().eq_ignore_ascii_case(w))
                && (!paths || (s.starts_with('/') && !s.split('/').skip(1).any(str::is_empty)))
        }
        Value::Array(items) => items.iter().all(|v| reads_plainly(v, paths)),
        Value::Object(map) => map.values().all(|v| reads_plainly(v, paths)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// The reading model's invariant for one rule: what its `when` lets through as an allow rule,
/// it matches as a deny rule.
fn allow_within_deny(rule: &Rule, arguments: &Value, places: &Places) {
    let one = |action: &str| {
        let otherwise = if action == "allow" { "deny" } else { "allow" };
        let mut json = rule_json(rule);
        json["action"] = json!(action);
        let text = json!({"version": "1", "tools": {"t": {"action": otherwise, "rules": [json]}}}).to_string();
        let policy = Policy::from_json_str(&text, "one.json").expect("a rule that loaded in its entry");
        let facts = CallFacts { places, ..CallFacts::arguments(arguments) };
        policy.evaluate_call("t", &facts).action
    };
    if one("allow") == Action::Allow {
        assert_eq!(one("deny"), Action::Deny, "allowed but not denied: {} on {arguments}", rule_json(rule));
    }
}

fuzz_target!(|input: Input| {
    let model = model(&input);
    let text = policy_json(&input, &model).to_string();
    let policy = match Policy::from_json_str(&text, "fuzz.json") {
        Ok(policy) => policy,
        Err(err) => panic!("a well-formed policy was refused: {err}\n{text}"),
    };
    let paths = text.contains("path_under");
    let places = Places {
        roots: input.roots.iter().take(3).map(|i| ROOTS[usize::from(*i) % ROOTS.len()].to_owned()).collect(),
        home: input.home.then(|| "/home/u".to_owned()),
    };
    for call in input.calls.iter().take(8) {
        let name = call_name(&call.name, &model);
        let arguments = call.arguments.as_ref().map_or(Value::Null, |fields| object(fields, 3));
        let facts = CallFacts { places: &places, ..CallFacts::arguments(&arguments) };
        let got = policy.evaluate_call(&name, &facts);
        assert_eq!(got, policy.evaluate_call(&name, &facts), "deterministic");
        let plain = match &arguments {
            Value::Object(map) => map.values().all(|v| reads_plainly(v, paths)),
            _ => true,
        };
        if plain {
            let expected = reference(&model, &name, &arguments);
            assert_eq!(got, expected, "tool {name:?} arguments {arguments}\npolicy {text}");
        }
        for entry in &model.entries {
            for rule in &entry.rules {
                allow_within_deny(rule, &arguments, &places);
            }
        }
        assert_eq!(policy.is_hidden(&name), got.action == Action::Hide);
        if let Some(key) = got.entry() {
            let entry = model.entries.iter().find(|e| e.key == key).expect("a known key");
            let annotations = policy.annotations(key);
            assert_eq!(annotations.class.is_some(), entry.class.is_some());
            assert_eq!(annotations.risk.is_some(), entry.risk.is_some());
        }
    }
});
