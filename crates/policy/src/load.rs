//! Reading a policy file into a [`Compiled`] policy, reporting every problem in it.
//!
//! `portcullis policy check` shows an author all of a file's mistakes at once, so the loader
//! does not stop at the first. It parses the text to a `serde_json::Value` (a syntax error is
//! the one case that ends the reading: nothing after it can be trusted), then walks the
//! value field by field in the shape of [`crate::model::RawPolicy`]: each field is checked on
//! its own, a bad field is reported with its JSON path and what was expected, and the walk
//! goes on with the next. Semantic checks (globs, regular expressions, ranges) happen in the
//! same walk, where the path of the offending piece is at hand.
//!
//! Serde's derived `Deserialize` for the raw types would stop at the first error. Tests keep
//! both readings of the format in step: `loader_fields_match_schema` (below) and
//! `raw_types_agree_with_loader_*` in `tests/schema.rs`.

use std::cmp::Reverse;
use std::fmt;
use std::num::{NonZeroU32, NonZeroU64};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::condition::{describe, quoted_list, Condition, Subject, Test};
use crate::eval::{Compiled, Entry, HideList, Rule, ServerRequests, Table};
use crate::model::{RawAction, RawSectionAction, Risk, ToolClass};
use crate::pattern::{Pattern, PatternSet};
use crate::results::{PartialResults, RESULTS_FIELDS};
use crate::uri::normalize_uri;
use crate::{Action, Door, Problem, RateLimit, RuleRef};

/// Top-level fields of a policy file, in documentation order.
pub(crate) const POLICY_FIELDS: [&str; 10] = [
    "version",
    "default",
    "hide",
    "approval_timeout",
    "redact",
    "results",
    "tools",
    "resources",
    "prompts",
    "server_requests",
];
/// Fields of `server_requests`, one entry each.
pub(crate) const SERVER_REQUEST_FIELDS: [&str; 3] = ["sampling", "elicitation", "roots"];
/// Fields of an entry, in every section.
pub(crate) const ENTRY_FIELDS: [&str; 8] = [
    "action",
    "reason",
    "rate_limit",
    "approval_timeout",
    "rules",
    "class",
    "risk",
    "results",
];
/// Fields of a `rate_limit`.
pub(crate) const RATE_LIMIT_FIELDS: [&str; 2] = ["max", "window"];
/// Fields of a rule.
pub(crate) const RULE_FIELDS: [&str; 3] = ["when", "action", "reason"];

/// Parses and validates `text`; `file` names it in problems.
pub(crate) fn compile(text: &str, file: &str) -> Result<Compiled, Vec<Problem>> {
    let value = match parse_document(text) {
        Ok(value) => value,
        Err(err) => {
            return Err(vec![Problem {
                file: file.to_owned(),
                path: "$".to_owned(),
                message: format!("invalid JSON: {err}"),
            }])
        }
    };
    let mut loader = Loader {
        file,
        problems: Vec::new(),
    };
    let compiled = loader.policy(&value);
    if loader.problems.is_empty() {
        Ok(compiled)
    } else {
        Err(loader.problems)
    }
}

/// Compiles a `when` object on its own (a grant's condition, a rule about to be written);
/// problems name `source`.
pub(crate) fn compile_when(value: &Value, source: &str) -> Result<Vec<Condition>, Vec<Problem>> {
    let mut loader = Loader {
        file: source,
        problems: Vec::new(),
    };
    let conditions = loader.when(value, "$", Door::Tools);
    if loader.problems.is_empty() {
        Ok(conditions)
    } else {
        Err(loader.problems)
    }
}

/// Parses JSON text like `serde_json::from_str`, except that a key repeated within one object
/// is an error: serde_json would keep the last one silently, and a policy entry overwritten by
/// a later copy is exactly the kind of mistake the author needs to see.
pub(crate) fn parse_document(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<StrictValue>(text).map(|strict| strict.0)
}

/// A `Value` whose deserialization refuses duplicate object keys.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // JSON text cannot spell NaN or infinity, so this is always a number.
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        StrictValue::deserialize(deserializer).map(|strict| strict.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// `path.name`, or `path["name"]` when `name` is not a plain identifier.
fn field(path: &str, name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{name}")
    } else {
        key(path, name)
    }
}

/// `path["name"]`, always bracketed (tool keys, condition paths).
fn key(path: &str, name: &str) -> String {
    format!("{path}[{}]", Value::String(name.to_owned()))
}

fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// Walks one document, collecting problems.
struct Loader<'f> {
    file: &'f str,
    problems: Vec<Problem>,
}

impl Loader<'_> {
    fn report(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            file: self.file.to_owned(),
            path: path.to_owned(),
            message: message.into(),
        });
    }

    /// Runs `check` and tells whether it reported nothing.
    fn clean<T>(&mut self, check: impl FnOnce(&mut Self) -> T) -> (T, bool) {
        let before = self.problems.len();
        let result = check(self);
        (result, self.problems.len() == before)
    }

    fn object<'v>(&mut self, value: &'v Value, path: &str, what: &str) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            other => {
                self.report(path, format!("expected {what}, found {}", describe(other)));
                None
            }
        }
    }

    /// Reports a field not in `known` (the fields of the object at `path`).
    fn unknown_field(&mut self, path: &str, name: &str, known: &[&str]) {
        self.report(
            &field(path, name),
            format!("unknown field {name:?}, expected one of {}", quoted_list(known)),
        );
    }

    fn string(&mut self, value: &Value, path: &str) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            other => {
                self.report(path, format!("expected a string, found {}", describe(other)));
                None
            }
        }
    }

    /// An array of strings; each good item with its index.
    fn strings(&mut self, value: &Value, path: &str) -> Vec<(usize, String)> {
        let Value::Array(items) = value else {
            self.report(path, format!("expected an array of strings, found {}", describe(value)));
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.string(item, &index(path, i)).map(|s| (i, s)))
            .collect()
    }

    /// A whole number from 1 to `max`, named `unit` in the message.
    fn positive(&mut self, value: &Value, path: &str, unit: &str, max: u64) -> Option<u64> {
        match value.as_u64() {
            Some(n) if (1..=max).contains(&n) => Some(n),
            _ => {
                let range = if max == u64::MAX {
                    "(at least 1)".to_owned()
                } else {
                    format!("from 1 to {max}")
                };
                self.report(
                    path,
                    format!("expected a whole number of {unit} {range}, found {}", describe(value)),
                );
                None
            }
        }
    }

    fn seconds(&mut self, value: &Value, path: &str) -> Option<u64> {
        self.positive(value, path, "seconds", u64::MAX)
    }

    /// One of the named `choices`.
    fn choice<T: Copy>(&mut self, value: &Value, path: &str, choices: &[(&str, T)]) -> Option<T> {
        let found = value.as_str().and_then(|s| choices.iter().find(|(name, _)| *name == s));
        if let Some(&(_, choice)) = found {
            return Some(choice);
        }
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        self.report(
            path,
            format!("expected one of {}, found {}", quoted_list(&names), describe(value)),
        );
        None
    }

    fn action(&mut self, value: &Value, path: &str) -> Option<Action> {
        self.choice(value, path, &RawAction::ALL).map(Action::from)
    }

    /// An entry's own action: "hide" too, outside `tools` (where the top-level `hide` list hides).
    fn entry_action(&mut self, value: &Value, path: &str, door: Door) -> Option<Action> {
        match door {
            Door::Tools => self.action(value, path),
            _ => self.choice(value, path, &RawSectionAction::ALL).map(Action::from),
        }
    }

    fn policy(&mut self, value: &Value) -> Compiled {
        let mut compiled = Compiled::only_default(Action::RequireApproval, RuleRef::Default);
        let Some(map) = self.object(value, "$", "a policy object") else {
            return compiled;
        };
        // Fields in document order, so problems come out in the order an author reads.
        for (name, value) in map {
            let path = field("$", name);
            match name.as_str() {
                "version" => match value {
                    Value::String(v) if v == "1" => {}
                    other => self.report(&path, format!(r#"expected "1" (a string), found {}"#, describe(other))),
                },
                "default" => {
                    if let Some(action) = self.action(value, &path) {
                        compiled.default = action;
                    }
                }
                "hide" => compiled.hide = self.hide(value),
                "approval_timeout" => compiled.approval_timeout = self.seconds(value, &path),
                "redact" => compiled.redact = self.redact(value),
                "results" => compiled.results = self.results(value, &path),
                "tools" => compiled.tools = self.table(value, Door::Tools),
                "resources" => compiled.resources = self.table(value, Door::Resources),
                "prompts" => compiled.prompts = self.table(value, Door::Prompts),
                "server_requests" => compiled.server_requests = self.server_requests(value),
                _ => self.unknown_field("$", name, &POLICY_FIELDS),
            }
        }
        if !map.contains_key("version") {
            self.report("$", r#"missing field "version", expected "version": "1""#);
        }
        compiled
    }

    fn hide(&mut self, value: &Value) -> HideList {
        let mut patterns = Vec::new();
        let mut written = Vec::new();
        for (i, text) in self.strings(value, "$.hide") {
            match Pattern::parse(&text) {
                Ok(pattern) => {
                    patterns.push(pattern);
                    written.push(text);
                }
                Err(message) => self.report(&index("$.hide", i), message),
            }
        }
        HideList {
            set: PatternSet::new(patterns),
            patterns: written,
        }
    }

    fn redact(&mut self, value: &Value) -> Vec<String> {
        let mut keys = Vec::new();
        for (i, text) in self.strings(value, "$.redact") {
            if text.trim().is_empty() {
                self.report(
                    &index("$.redact", i),
                    "expected an argument key name, found an empty string",
                );
            } else {
                keys.push(text.to_lowercase());
            }
        }
        keys
    }

    /// A keyed section: `tools`, `resources` or `prompts`.
    fn table(&mut self, value: &Value, door: Door) -> Table {
        let mut table = Table::empty();
        let root = format!("$.{}", door.section());
        let noun = noun(door);
        let Some(map) = self.object(value, &root, &format!("an object of {noun} entries")) else {
            return table;
        };
        let mut globs: Vec<(Pattern, usize)> = Vec::new();
        for (name, value) in map {
            let path = key(&root, name);
            let pattern = Pattern::parse(name).map_err(|message| self.report(&path, message));
            let entry = self.entry(name, value, &path, door);
            let (Ok(pattern), Some(entry)) = (pattern, entry) else {
                continue;
            };
            let exact = pattern.exact_name().filter(|_| pattern.is_exact());
            let Some(exact) = self.key_name(door, name, exact, &path) else {
                continue;
            };
            let at = table.entries.len();
            table.entries.push(entry);
            if let Some(exact) = exact {
                if let Some(&earlier) = table.exact.get(&exact) {
                    let other = &table.entries[earlier].key;
                    self.report(&path, format!("names the same {noun} {exact:?} as the key {other:?}"));
                    continue;
                }
                table.exact.insert(exact, at);
            } else {
                globs.push((pattern, at));
            }
        }
        // Precedence among globs: more literal characters, then fewer wildcards, then file
        // order (the stable sort keeps it, and entries are numbered in file order).
        globs.sort_by_key(|(pattern, at)| (Reverse(pattern.literals), pattern.wildcards, *at));
        table.glob_entries = globs.iter().map(|(_, at)| *at).collect();
        table.globs = PatternSet::new(globs.into_iter().map(|(pattern, _)| pattern).collect());
        table
    }

    /// What a key names: `Some(Some(name))` for an exact key (a resource's in normal form),
    /// `Some(None)` for a glob; `None` after reporting a key that cannot name anything.
    ///
    /// Resource URIs are compared in normal form, so an exact resource key is normalized here,
    /// and a glob key must already be written in normal form where it parses as a URI (a glob
    /// `FILE:///tmp/*` would never meet the lowercase scheme of a normalized URI).
    #[allow(clippy::option_option)]
    fn key_name(&mut self, door: Door, name: &str, exact: Option<String>, path: &str) -> Option<Option<String>> {
        if door != Door::Resources {
            return Some(exact);
        }
        match (exact, normalize_uri(name)) {
            (Some(exact), _) => match normalize_uri(&exact) {
                Ok(uri) => Some(Some(uri.as_str().to_owned())),
                Err(problem) => {
                    self.report(
                        path,
                        format!("expected a resource URI every server reads alike, but it {problem}"),
                    );
                    None
                }
            },
            (None, Ok(uri)) if uri.as_str() != name => {
                self.report(
                    path,
                    format!(
                        "resource keys are matched against URIs in normal form; write this glob as {:?}",
                        uri.as_str()
                    ),
                );
                None
            }
            (None, _) => Some(None),
        }
    }

    /// `server_requests`: one entry per field.
    fn server_requests(&mut self, value: &Value) -> ServerRequests {
        let mut requests = ServerRequests::default();
        let path = "$.server_requests";
        let Some(map) = self.object(value, path, "an object with \"sampling\", \"elicitation\" or \"roots\"") else {
            return requests;
        };
        for (name, value) in map {
            let field_path = field(path, name);
            let door = match name.as_str() {
                "sampling" => Door::Sampling,
                "elicitation" => Door::Elicitation,
                "roots" => Door::Roots,
                _ => {
                    self.unknown_field(path, name, &SERVER_REQUEST_FIELDS);
                    continue;
                }
            };
            let entry = self.entry(name, value, &field_path, door);
            match door {
                Door::Sampling => requests.sampling = entry,
                Door::Elicitation => requests.elicitation = entry,
                _ => requests.roots = entry,
            }
        }
        requests
    }

    fn entry(&mut self, name: &str, value: &Value, path: &str, door: Door) -> Option<Entry> {
        let what = match door {
            Door::Tools => "a tool entry object (use {} to allow the tool)",
            _ => "an entry object (use {} to allow)",
        };
        let (entry, clean) = self.clean(|this| {
            let map = this.object(value, path, what)?;
            let mut entry = Entry {
                door,
                key: name.to_owned(),
                // `{}` allows: the meaning of the seed policy files.
                action: Action::Allow,
                reason: None,
                rate_limit: None,
                approval_timeout: None,
                rules: Vec::new(),
                class: None,
                risk: None,
                results: PartialResults::default(),
            };
            for (field_name, value) in map {
                let field_path = field(path, field_name);
                match field_name.as_str() {
                    "action" => {
                        if let Some(action) = this.entry_action(value, &field_path, door) {
                            entry.action = action;
                        }
                    }
                    "reason" => entry.reason = this.string(value, &field_path),
                    "rate_limit" => entry.rate_limit = this.rate_limit(value, &field_path),
                    "approval_timeout" => entry.approval_timeout = this.seconds(value, &field_path),
                    "rules" => entry.rules = this.rules(value, &field_path, name, door),
                    "class" => entry.class = this.choice(value, &field_path, &ToolClass::ALL),
                    "risk" => entry.risk = this.choice(value, &field_path, &Risk::ALL),
                    "results" => entry.results = this.results(value, &field_path),
                    _ => this.unknown_field(path, field_name, &ENTRY_FIELDS),
                }
            }
            let has_rules = map.get("rules").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
            if entry.action == Action::Hide && has_rules {
                // Lists carry no arguments to try rules on, and a hidden entry is refused whatever
                // they say.
                this.report(
                    &field(path, "rules"),
                    "an entry whose action is \"hide\" is hidden whatever its rules say; remove the rules or choose another action",
                );
            }
            Some(entry)
        });
        entry.filter(|_| clean)
    }

    /// A `results` object: each field one of its own choices ([`RESULTS_FIELDS`]).
    fn results(&mut self, value: &Value, path: &str) -> PartialResults {
        let mut results = PartialResults::default();
        let Some(map) = self.object(value, path, r#"an object like {"secrets": "redact"}"#) else {
            return results;
        };
        let names: Vec<&str> = RESULTS_FIELDS.iter().map(|(name, _)| *name).collect();
        for (name, value) in map {
            match RESULTS_FIELDS.iter().find(|(field_name, _)| field_name == name) {
                Some((_, choices)) => {
                    if let Some(treatment) = self.choice(value, &field(path, name), choices) {
                        results.set(name, treatment);
                    }
                }
                None => self.unknown_field(path, name, &names),
            }
        }
        results
    }

    fn rate_limit(&mut self, value: &Value, path: &str) -> Option<RateLimit> {
        let map = self.object(value, path, "an object like {\"max\": 10, \"window\": 60}")?;
        let mut max = None;
        let mut window = None;
        for (name, value) in map {
            let field_path = field(path, name);
            match name.as_str() {
                "max" => max = Some(self.positive(value, &field_path, "calls", u64::from(u32::MAX))),
                "window" => window = Some(self.positive(value, &field_path, "seconds", u64::MAX)),
                _ => self.unknown_field(path, name, &RATE_LIMIT_FIELDS),
            }
        }
        if max.is_none() {
            self.report(path, r#"missing field "max" (calls per window)"#);
        }
        if window.is_none() {
            self.report(path, r#"missing field "window" (seconds)"#);
        }
        Some(RateLimit {
            max: NonZeroU32::new(u32::try_from(max??).ok()?)?,
            window_secs: NonZeroU64::new(window??)?,
        })
    }

    fn rules(&mut self, value: &Value, path: &str, key: &str, door: Door) -> Vec<Rule> {
        let Value::Array(items) = value else {
            self.report(path, format!("expected an array of rules, found {}", describe(value)));
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let name = RuleRef::rule(door, key.to_owned(), i);
            if let (Some(rule), true) = self.clean(|this| this.rule(item, &index(path, i), name, door)) {
                rules.push(rule);
            }
        }
        rules
    }

    fn rule(&mut self, value: &Value, path: &str, name: RuleRef, door: Door) -> Option<Rule> {
        let map = self.object(
            value,
            path,
            "a rule object like {\"when\": {...}, \"action\": \"allow\"}",
        )?;
        let mut conditions = None;
        let mut action = None;
        let mut reason = None;
        for (field_name, value) in map {
            let field_path = field(path, field_name);
            match field_name.as_str() {
                "when" => conditions = Some(self.when(value, &field_path, door)),
                "action" => action = Some(self.action(value, &field_path)),
                "reason" => reason = self.string(value, &field_path),
                _ => self.unknown_field(path, field_name, &RULE_FIELDS),
            }
        }
        if conditions.is_none() {
            self.report(path, r#"missing field "when" (conditions on the arguments)"#);
        }
        if action.is_none() {
            self.report(
                path,
                format!(
                    r#"missing field "action", expected one of {}"#,
                    quoted_list(&RawAction::ALL.map(|(name, _)| name))
                ),
            );
        }
        Some(Rule {
            name,
            when: map.get("when").cloned().unwrap_or_default(),
            conditions: conditions?,
            action: action??,
            reason,
        })
    }

    fn when(&mut self, value: &Value, path: &str, door: Door) -> Vec<Condition> {
        let Some(map) = self.object(
            value,
            path,
            "an object of conditions like {\"arguments.query\": {\"eq\": \"x\"}}",
        ) else {
            return Vec::new();
        };
        if map.is_empty() {
            self.report(path, "expected at least one condition, found an empty object");
        }
        let mut conditions = Vec::new();
        for (text, value) in map {
            let cpath = key(path, text);
            let subject = Subject::parse(text, door).map_err(|message| self.report(&cpath, message));
            let tests = self.tests(value, &cpath);
            if let (Ok(subject), Some(tests)) = (subject, tests) {
                conditions.push(Condition::new(subject, tests));
            }
        }
        conditions
    }

    fn tests(&mut self, value: &Value, path: &str) -> Option<Vec<Test>> {
        let map = self.object(value, path, "an object of operators like {\"eq\": \"x\"}")?;
        if map.is_empty() {
            self.report(
                path,
                format!(
                    "expected at least one operator ({}), found an empty object",
                    quoted_list(&crate::condition::OPERATORS)
                ),
            );
            return None;
        }
        let mut tests = Vec::new();
        let mut ok = true;
        for (operator, operand) in map {
            match Test::compile(operator, operand) {
                Ok(test) => tests.push(test),
                Err(message) => {
                    self.report(&field(path, operator), message);
                    ok = false;
                }
            }
        }
        ok.then_some(tests)
    }
}

/// What one entry of `door`'s section decides about, for messages.
fn noun(door: Door) -> &'static str {
    match door {
        Door::Tools => "tool",
        Door::Resources => "resource",
        Door::Prompts => "prompt",
        Door::Sampling | Door::Elicitation | Door::Roots => "server request",
    }
}

impl From<RawSectionAction> for Action {
    fn from(action: RawSectionAction) -> Action {
        match action {
            RawSectionAction::Allow => Action::Allow,
            RawSectionAction::Deny => Action::Deny,
            RawSectionAction::RequireApproval => Action::RequireApproval,
            RawSectionAction::Hide => Action::Hide,
        }
    }
}

impl From<RawAction> for Action {
    fn from(action: RawAction) -> Action {
        match action {
            RawAction::Allow => Action::Allow,
            RawAction::Deny => Action::Deny,
            RawAction::RequireApproval => Action::RequireApproval,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::{ENTRY_FIELDS, POLICY_FIELDS, RATE_LIMIT_FIELDS, RULE_FIELDS, SERVER_REQUEST_FIELDS};
    use crate::condition::OPERATORS;

    fn schema_properties(pointer: &str) -> Vec<String> {
        crate::json_schema()
            .pointer(&format!("{pointer}/properties"))
            .and_then(Value::as_object)
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The loader's field lists and the raw types (hence the schema) name the same fields.
    #[test]
    fn loader_fields_match_schema() {
        for (pointer, fields) in [
            ("", &POLICY_FIELDS[..]),
            ("/$defs/RawToolEntry", &ENTRY_FIELDS[..]),
            ("/$defs/RawRateLimit", &RATE_LIMIT_FIELDS[..]),
            ("/$defs/RawRule", &RULE_FIELDS[..]),
            ("/$defs/RawCondition", &OPERATORS[..]),
            ("/$defs/RawServerRequests", &SERVER_REQUEST_FIELDS[..]),
        ] {
            assert_eq!(schema_properties(pointer), fields, "fields of {pointer:?}");
        }
        // Every section's entry and rule have the shape of a tool entry and rule.
        for section in ["Resource", "Prompt", "Sampling", "Elicitation", "Roots"] {
            for (kind, fields) in [("Entry", &ENTRY_FIELDS[..]), ("Rule", &RULE_FIELDS[..])] {
                let pointer = format!("/$defs/Raw{section}{kind}");
                assert_eq!(schema_properties(&pointer), fields, "fields of {pointer:?}");
            }
        }
    }
}
