//! Conditions on a call: the `when` of a rule.
//!
//! A condition names what it reads — a path into the arguments, the client's self-reported
//! `client.name` / `client.version`, or a fact of a request other than a tool call ([`Fact`]:
//! a resource's `uri`, a sampling request's `max_tokens`, …) — and a list of operator tests, all
//! of which must hold. Which keys a `when` may name depends on the section ([`Door`]).
//!
//! A condition decides on what the server will read, not on the JSON as sent (DESIGN §4): the
//! value at its path has the readings mainstream server SDKs make of it ([`crate::reading`]),
//! and every reading is tried against all the condition's tests. The result is a [`Verdict`]:
//! whether some reading satisfies them (what deny, require_approval and hide rules ask) and
//! whether every reading does (what allow rules ask). A path also reaches into a string that
//! holds a JSON object or array, as FastMCP parses it.
//!
//! Operators compare a reading with the operand's own readings: `eq 500` holds for the string
//! `"500"` read as the number 500, `eq "1"` for the number 1. An operator that meets a reading of
//! another type (`gt` on a string, `regex` on a number) is decided on the value as sent, without
//! conversion: the string `"5"` as sent is not greater than 3, so an allow rule `gt: 3` does not
//! allow it, while a deny rule `gt: 3` matches its reading as the number 5.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use regex::Regex;
use serde_json::Value;

use crate::number::Num;
use crate::path_under::Places;
use crate::reading::{self, How, Reading, Verdict, Want};
use crate::uri::{normalize_uri, NormalUri};
use crate::Door;

/// Prefix every condition path starts with; the rest addresses into the call's arguments.
pub(crate) const ARGUMENTS_PREFIX: &str = "arguments.";
/// The client's self-reported identity (MCP `clientInfo`), as condition keys.
pub(crate) const CLIENT_NAME: &str = "client.name";
pub(crate) const CLIENT_VERSION: &str = "client.version";

/// Operator names in documentation order, as written in a policy file.
pub(crate) const OPERATORS: [&str; 14] = [
    "eq",
    "ne",
    "in",
    "not_in",
    "regex",
    "contains",
    "prefix",
    "glob",
    "path_under",
    "gt",
    "gte",
    "lt",
    "lte",
    "exists",
];

/// Readings of a value as sent: with the conversions that merge values, and spellings only
/// when a text operator reads them.
const SENT: Want = Want {
    spellings: false,
    lossy: true,
    conversions: true,
};

/// What a decision may read about a call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The `tools/call` params' `arguments` (`Value::Null` when there are none).
    pub arguments: &'a Value,
    /// The agent's self-reported `clientInfo.name` / `.version`. Self-reported: good for
    /// treating Claude Code and Cursor differently, not for trusting one.
    pub client_name: Option<&'a str>,
    pub client_version: Option<&'a str>,
    /// What relative and `~` paths resolve against on the server's side, for `path_under`.
    /// [`Places::unknown`] decides such paths strictly.
    pub places: &'a Places,
}

impl<'a> CallFacts<'a> {
    /// The arguments alone, from a client that did not say who it is, to a server whose roots
    /// and home are unknown.
    pub fn arguments(arguments: &'a Value) -> Self {
        CallFacts {
            arguments,
            client_name: None,
            client_version: None,
            places: Places::unknown(),
        }
    }
}

/// A fact of a request other than its arguments and client, as a `when` key names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fact {
    /// A resource's URI in normal form.
    Uri,
    /// A sampling request's `systemPrompt`.
    SystemPrompt,
    /// A sampling request's `maxTokens`.
    MaxTokens,
    /// An elicitation's `mode`: "form" (also when absent) or "url".
    Mode,
    /// A URL-mode elicitation's `url`, in normal form.
    Url,
    /// That URL's host.
    UrlHost,
    /// The names of the fields a form-mode elicitation's `requestedSchema` asks for.
    SchemaFields,
    /// An elicitation's `message`.
    Message,
}

impl Fact {
    /// Every fact with its `when` key.
    const ALL: [(&'static str, Fact); 8] = [
        ("uri", Fact::Uri),
        ("system_prompt", Fact::SystemPrompt),
        ("max_tokens", Fact::MaxTokens),
        ("mode", Fact::Mode),
        ("url", Fact::Url),
        ("url.host", Fact::UrlHost),
        ("schema.fields", Fact::SchemaFields),
        ("message", Fact::Message),
    ];

    fn key(self) -> &'static str {
        Fact::ALL.iter().find(|(_, f)| *f == self).map_or("", |(k, _)| k)
    }

    /// The facts a `when` in `door`'s section may read (beyond `client.*`, which every section
    /// reads, and `arguments.*`, which tools and prompts read).
    fn of(door: Door) -> &'static [Fact] {
        match door {
            Door::Tools | Door::Prompts | Door::Roots => &[],
            Door::Resources => &[Fact::Uri],
            Door::Sampling => &[Fact::SystemPrompt, Fact::MaxTokens],
            Door::Elicitation => &[Fact::Mode, Fact::Url, Fact::UrlHost, Fact::SchemaFields, Fact::Message],
        }
    }
}

/// A fact's value for one request.
#[derive(Debug, Clone, PartialEq)]
enum FactValue {
    Known(Value),
    /// The request holds it, but not in a form every server reads alike (a URL that cannot be
    /// normalized): it matches every deny rule and no allow rule.
    Unknown,
}

/// What a decision may read about a request through any door: what a tool call offers
/// ([`CallFacts`]: arguments, client, places) and the request's own facts, looked up by their
/// `when` key ([`RequestFacts::subject`]). Build it with the constructor of the door.
#[derive(Debug, Clone)]
pub struct RequestFacts<'a> {
    /// Arguments (a prompt's; `Value::Null` for requests without), client identity, places.
    pub call: CallFacts<'a>,
    facts: Vec<(Fact, FactValue)>,
    /// For a `file:` resource URI, its decoded path: what `path_under` on `uri` reads.
    file_path: Option<String>,
}

impl<'a> RequestFacts<'a> {
    /// A request with nothing beyond `call`: a tool call, a `prompts/get` (its arguments in
    /// `call.arguments`), a `roots/list`.
    pub fn new(call: CallFacts<'a>) -> Self {
        RequestFacts {
            call,
            facts: Vec::new(),
            file_path: None,
        }
    }

    /// A `resources/read` or `resources/subscribe` of `uri`.
    pub fn resource(uri: &NormalUri, call: CallFacts<'a>) -> Self {
        RequestFacts {
            call,
            facts: vec![(Fact::Uri, FactValue::Known(Value::String(uri.as_str().to_owned())))],
            file_path: uri.file_path().map(str::to_owned),
        }
    }

    /// A `sampling/createMessage` with these `params` (`systemPrompt`, `maxTokens`).
    pub fn sampling(params: &Value, call: CallFacts<'a>) -> Self {
        let mut facts = RequestFacts::new(call);
        facts.copy(params, "systemPrompt", Fact::SystemPrompt);
        facts.copy(params, "maxTokens", Fact::MaxTokens);
        facts
    }

    /// An `elicitation/create` with these `params` (`mode`, `message`, `url`, `requestedSchema`).
    /// A `url` that cannot be normalized ([`normalize_uri`]) makes `url` and `url.host` unknown:
    /// they match every deny rule and no allow rule.
    pub fn elicitation(params: &Value, call: CallFacts<'a>) -> Self {
        let mut facts = RequestFacts::new(call);
        // The spec's default: an elicitation without `mode` is a form.
        let mode = params
            .get("mode")
            .cloned()
            .unwrap_or_else(|| Value::String("form".to_owned()));
        facts.facts.push((Fact::Mode, FactValue::Known(mode)));
        facts.copy(params, "message", Fact::Message);
        if let Some(url) = params.get("url") {
            facts.push_url(url);
        }
        let fields = params
            .pointer("/requestedSchema/properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().map(Value::String).collect());
        if let Some(fields) = fields {
            facts
                .facts
                .push((Fact::SchemaFields, FactValue::Known(Value::Array(fields))));
        }
        facts
    }

    /// The value a `when` key reads: `arguments.*` from the arguments, `client.*`, or a fact of
    /// the request; `None` when missing, or unknown (see [`RequestFacts::elicitation`]).
    pub fn subject(&self, key: &str) -> Option<Value> {
        if let Some(fact) = Fact::ALL.iter().find(|(k, _)| *k == key).map(|(_, f)| *f) {
            return match self.fact(fact)? {
                FactValue::Known(value) => Some(value.clone()),
                FactValue::Unknown => None,
            };
        }
        match key {
            CLIENT_NAME => self.call.client_name.map(|t| Value::String(t.to_owned())),
            CLIENT_VERSION => self.call.client_version.map(|t| Value::String(t.to_owned())),
            _ => {
                let path = ArgumentPath::parse(key).ok()?;
                let mut found = None;
                let _ = path.reach(self.call.arguments, 0, &mut |value| {
                    found = value.cloned();
                    ControlFlow::Break(())
                });
                found
            }
        }
    }

    fn fact(&self, fact: Fact) -> Option<&FactValue> {
        self.facts.iter().find(|(f, _)| *f == fact).map(|(_, v)| v)
    }

    /// `params[field]` as `fact`, when present.
    fn copy(&mut self, params: &Value, field: &str, fact: Fact) {
        if let Some(value) = params.get(field) {
            self.facts.push((fact, FactValue::Known(value.clone())));
        }
    }

    /// A URL and its host, in normal form; unknown when not normalizable.
    fn push_url(&mut self, url: &Value) {
        let normal = url.as_str().map(normalize_uri);
        let (url, host) = match normal {
            Some(Ok(uri)) => (
                FactValue::Known(Value::String(uri.as_str().to_owned())),
                uri.host()
                    .map_or(FactValue::Unknown, |h| FactValue::Known(Value::String(h.to_owned()))),
            ),
            _ => (FactValue::Unknown, FactValue::Unknown),
        };
        self.facts.push((Fact::Url, url));
        self.facts.push((Fact::UrlHost, host));
    }
}

/// Which readings a rule asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantifier {
    /// Some reading (or an unknown one) matches: deny, require_approval, hide.
    Some,
    /// Every reading matches, and all are known: allow.
    Every,
}

impl Quantifier {
    /// The quantifier of a rule deciding `action`: the stricter reading wins either way.
    pub(crate) fn for_action(action: crate::Action) -> Quantifier {
        if action == crate::Action::Allow {
            Quantifier::Every
        } else {
            Quantifier::Some
        }
    }

    pub(crate) fn pick(self, verdict: Verdict) -> bool {
        match self {
            Quantifier::Some => verdict.some,
            Quantifier::Every => verdict.every,
        }
    }

    /// Whether the verdict so far already answers this quantifier.
    fn answered(self, verdict: Verdict) -> bool {
        match self {
            Quantifier::Some => verdict.some,
            Quantifier::Every => !verdict.every,
        }
    }
}

/// One `"arguments.x.y": { ...operators }` pair of a rule's `when`, compiled.
#[derive(Debug)]
pub(crate) struct Condition {
    subject: Subject,
    tests: Vec<Test>,
    /// Readings to make of the value: spellings only when a text operator is among the tests.
    want: Want,
}

/// What a condition reads.
#[derive(Debug)]
pub(crate) enum Subject {
    Argument(ArgumentPath),
    ClientName,
    ClientVersion,
    Fact(Fact),
}

impl Subject {
    /// Parses a `when` key of `door`'s section; the message says what was expected.
    pub(crate) fn parse(text: &str, door: Door) -> Result<Subject, String> {
        match text {
            CLIENT_NAME => return Ok(Subject::ClientName),
            CLIENT_VERSION => return Ok(Subject::ClientVersion),
            _ => {}
        }
        if let Some(&fact) = Fact::of(door).iter().find(|f| f.key() == text) {
            return Ok(Subject::Fact(fact));
        }
        match door {
            // The tools message is the one authors have always seen.
            Door::Tools => ArgumentPath::parse(text).map(Subject::Argument),
            Door::Prompts if text.starts_with(ARGUMENTS_PREFIX) => ArgumentPath::parse(text).map(Subject::Argument),
            _ => Err(format!(
                "a rule in {door} cannot read {text:?}, expected one of {}",
                allowed_keys(door)
            )),
        }
    }
}

/// The `when` keys `door`'s section allows, for messages.
fn allowed_keys(door: Door) -> String {
    let mut keys: Vec<&str> = Vec::new();
    if matches!(door, Door::Tools | Door::Prompts) {
        keys.push("arguments.<path>");
    }
    keys.extend(Fact::of(door).iter().map(|f| f.key()));
    keys.extend([CLIENT_NAME, CLIENT_VERSION]);
    quoted_list(&keys)
}

impl Condition {
    pub(crate) fn new(subject: Subject, tests: Vec<Test>) -> Self {
        let spellings = tests.iter().any(Test::reads_text);
        let conversions = !tests.iter().all(Test::text_only);
        Condition {
            subject,
            tests,
            want: Want {
                spellings,
                conversions,
                ..SENT
            },
        }
    }

    /// Whether the condition holds for the request under `quantifier`.
    pub(crate) fn holds(&self, facts: &RequestFacts<'_>, quantifier: Quantifier) -> bool {
        quantifier.pick(self.verdict(facts, quantifier, &mut |_, _, _| {}))
    }

    /// The verdict over the readings of what this condition reads; each reading with its
    /// verdict is told to `seen`. Stops once `quantifier` is answered, so the other half of
    /// the verdict may be incomplete.
    pub(crate) fn verdict(
        &self,
        facts: &RequestFacts<'_>,
        quantifier: Quantifier,
        seen: &mut dyn FnMut(Reading<'_>, How, Verdict),
    ) -> Verdict {
        let mut total = Verdict::EMPTY;
        let mut one = |value: Option<&Value>| -> ControlFlow<()> {
            let Some(value) = value else {
                let verdict = self.on_reading(Reading::Missing, None, How::AsSent, facts);
                seen(Reading::Missing, How::AsSent, verdict);
                total = total.add_reading(verdict);
                return stop(quantifier, total);
            };
            reading::each(value, self.want, &mut |r, how| {
                let verdict = self.on_reading(r, Some(value), how, facts);
                seen(r, how, verdict);
                total = total.add_reading(verdict);
                stop(quantifier, total)
            })
        };
        let call = &facts.call;
        let _ = match &self.subject {
            Subject::Argument(path) => path.reach(call.arguments, 0, &mut one),
            Subject::ClientName => one(call.client_name.map(|t| Value::String(t.to_owned())).as_ref()),
            Subject::ClientVersion => one(call.client_version.map(|t| Value::String(t.to_owned())).as_ref()),
            Subject::Fact(fact) => match facts.fact(*fact) {
                Some(FactValue::Known(value)) => one(Some(value)),
                None => one(None),
                Some(FactValue::Unknown) => {
                    // Nothing every server reads alike: the stricter decision either way.
                    seen(Reading::Missing, How::AsSent, Verdict::OPEN);
                    total = total.add_reading(Verdict::OPEN);
                    ControlFlow::Continue(())
                }
            },
        };
        total
    }

    /// Every test on one reading of `origin` (the value reached; `None` when missing).
    fn on_reading(&self, r: Reading<'_>, origin: Option<&Value>, how: How, facts: &RequestFacts<'_>) -> Verdict {
        let mut verdict = Verdict::TRUE;
        for test in &self.tests {
            let one = match (test, &self.subject) {
                (Test::PathUnder(base), Subject::Fact(Fact::Uri)) => uri_under(base, facts),
                _ => test.verdict(r, origin, how, facts.call.places),
            };
            verdict = verdict.and(one);
            if verdict == Verdict::FALSE {
                break;
            }
        }
        verdict
    }

    /// A key on this condition's path that a case-insensitive reader would take for the one the
    /// condition reads: `(found, read)`.
    pub(crate) fn shadowed_key(&self, arguments: &Value) -> Option<(String, String)> {
        match &self.subject {
            Subject::Argument(path) => path.shadowed_key(arguments, 0),
            Subject::ClientName | Subject::ClientVersion | Subject::Fact(_) => None,
        }
    }

    /// What this condition reads, as written in the policy (`arguments.a.b`, `client.name`).
    pub(crate) fn name(&self) -> String {
        match &self.subject {
            Subject::Argument(path) => {
                let segments: Vec<&str> = path.segments.iter().map(|s| &*s.key).collect();
                format!("{ARGUMENTS_PREFIX}{}", segments.join("."))
            }
            Subject::ClientName => CLIENT_NAME.to_owned(),
            Subject::ClientVersion => CLIENT_VERSION.to_owned(),
            Subject::Fact(fact) => fact.key().to_owned(),
        }
    }

    /// When this condition's answer under `quantifier` rests on a reading other than the value
    /// as sent, which one: for `Some`, the reading that matched; for `Every`, the one that did
    /// not. `None` when the value as sent decides by itself.
    pub(crate) fn reading_note(&self, facts: &RequestFacts<'_>, quantifier: Quantifier) -> Option<String> {
        let mut note = None;
        let mut decided = false;
        self.verdict(facts, quantifier, &mut |r, how, verdict| {
            let deciding = match quantifier {
                Quantifier::Some => verdict.some,
                Quantifier::Every => !verdict.every,
            };
            if decided || !deciding {
                return;
            }
            decided = true;
            let partial = verdict.some != verdict.every;
            note = match (how, quantifier, partial) {
                (How::AsSent, _, false) => None,
                (How::AsSent, Quantifier::Some, true) => Some(format!(
                    "{} matched as a server may resolve the path (another spelling of it, or a root or home directory that is not known)",
                    self.name()
                )),
                (How::AsSent, Quantifier::Every, true) => Some(format!(
                    "{} does not hold for every way a server may resolve the path (another spelling of it, or a root or home directory that is not known)",
                    self.name()
                )),
                (_, Quantifier::Some, _) => Some(format!(
                    "{} matched as {} ({})",
                    self.name(),
                    reading::describe(r),
                    how.why()
                )),
                (_, Quantifier::Every, _) => Some(format!(
                    "{} does not hold for {} ({})",
                    self.name(),
                    reading::describe(r),
                    how.why()
                )),
            };
        });
        note
    }

    /// The argument path this condition reads, as segments (`None` for `client.*`).
    pub(crate) fn argument_segments(&self) -> Option<impl Iterator<Item = &str> + Clone> {
        match &self.subject {
            Subject::Argument(path) => Some(path.segments.iter().map(|s| &*s.key)),
            Subject::ClientName | Subject::ClientVersion | Subject::Fact(_) => None,
        }
    }
}

/// `path_under` on a resource URI reads the path a `file:` URI names, decoded; a URI of another
/// scheme names no path, so it is under no directory.
fn uri_under(base: &crate::path_under::BasePath, facts: &RequestFacts<'_>) -> Verdict {
    match &facts.file_path {
        Some(path) => base.verdict(path, facts.call.places),
        None => Verdict::FALSE,
    }
}

/// Stop reading once the quantifier is answered.
fn stop(quantifier: Quantifier, total: Verdict) -> ControlFlow<()> {
    if quantifier.answered(total) || total.settled() {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
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
    /// (`PATH` where the policy reads `path`), also inside a string holding JSON. The policy
    /// would decide on one value and a server built on Go's encoding/json could act on the
    /// other, so such a call is not decided here.
    fn shadowed_key(&self, current: &Value, depth: usize) -> Option<(String, String)> {
        let segment = self.segments.get(depth)?;
        match current {
            Value::Object(map) => {
                let read = &*segment.key;
                if let Some(found) = map
                    .keys()
                    .find(|k| k.as_str() != read && portcullis_wire::strict::same_under_folding(k, read))
                {
                    return Some((found.clone(), read.to_owned()));
                }
                self.shadowed_key(map.get(read)?, depth + 1)
            }
            Value::Array(items) => self.shadowed_key(items.get(segment.index?)?, depth + 1),
            Value::String(text) => self.shadowed_key(&reading::json_in_text(text)?, depth),
            _ => None,
        }
    }

    /// Calls `f` with every value this path reaches from segment `depth` on: the value as sent
    /// (`None` when some step is missing) and, where a step meets a string holding a JSON
    /// object or array, the value inside it as a server that parses such strings reads it.
    fn reach(
        &self,
        current: &Value,
        depth: usize,
        f: &mut dyn FnMut(Option<&Value>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Some(segment) = self.segments.get(depth) else {
            return f(Some(current));
        };
        let next = match current {
            Value::Object(map) => map.get(&*segment.key),
            Value::Array(items) => segment.index.and_then(|i| items.get(i)),
            Value::String(text) => {
                // A server that keeps the string finds nothing here; one that parses it goes on.
                f(None)?;
                return match reading::json_in_text(text) {
                    Some(parsed @ (Value::Object(_) | Value::Array(_))) => self.reach(&parsed, depth, f),
                    _ => ControlFlow::Continue(()),
                };
            }
            _ => None,
        };
        match next {
            Some(value) => self.reach(value, depth + 1, f),
            None => f(None),
        }
    }
}

/// One operator with its compiled operand.
#[derive(Debug)]
pub(crate) enum Test {
    Eq(Operand),
    Ne(Operand),
    In(Vec<Operand>),
    NotIn(Vec<Operand>),
    Regex(Regex),
    /// The needle, and its text when it is a string.
    Contains(Operand, Option<String>),
    Prefix(String),
    Glob(crate::pattern::Pattern),
    PathUnder(crate::path_under::BasePath),
    Gt(Num),
    Gte(Num),
    Lt(Num),
    Lte(Num),
    Exists(bool),
}

impl Test {
    /// Compiles operator `name` with `operand`; the message says what was expected.
    pub(crate) fn compile(name: &str, operand: &Value) -> Result<Test, String> {
        let number = |make: fn(Num) -> Test| match operand {
            Value::Number(n) => Num::from_json(n)
                .map(make)
                .ok_or_else(|| format!("expected a number, found {n}")),
            other => Err(format!("expected a number, found {}", describe(other))),
        };
        let list = |make: fn(Vec<Operand>) -> Test| match operand {
            Value::Array(items) => Ok(make(items.iter().map(Operand::compile).collect())),
            other => Err(format!("expected an array, found {}", describe(other))),
        };
        match name {
            "eq" => Ok(Test::Eq(Operand::compile(operand))),
            "ne" => Ok(Test::Ne(Operand::compile(operand))),
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
            "contains" => Ok(Test::Contains(
                Operand::compile(operand),
                operand.as_str().map(str::to_owned),
            )),
            "prefix" => string(operand).map(|p| Test::Prefix(p.to_owned())),
            "glob" => string(operand).and_then(crate::pattern::Pattern::parse).map(Test::Glob),
            "path_under" => string(operand)
                .and_then(crate::path_under::BasePath::parse)
                .map(Test::PathUnder),
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

    /// Whether this operator reads text, so numbers and booleans are also tried as the strings
    /// servers spell them as.
    fn reads_text(&self) -> bool {
        matches!(
            self,
            Test::Regex(_) | Test::Contains(..) | Test::Prefix(_) | Test::Glob(_) | Test::PathUnder(_)
        )
    }

    /// Whether this operator only reads text, so a string's conversions cannot change its
    /// answer (it decides them on the string as sent).
    fn text_only(&self) -> bool {
        matches!(
            self,
            Test::Regex(_) | Test::Prefix(_) | Test::Glob(_) | Test::PathUnder(_)
        )
    }

    /// This test on reading `r` of `origin` (the value reached; `None` when missing).
    fn verdict(&self, r: Reading<'_>, origin: Option<&Value>, how: How, places: &Places) -> Verdict {
        let Some(origin) = origin else {
            // A missing value equals nothing, so only the negative tests hold.
            return Verdict::of(matches!(self, Test::Ne(_) | Test::NotIn(_) | Test::Exists(false)));
        };
        let any = |operands: &[Operand]| operands.iter().fold(Verdict::FALSE, |v, o| v.or(o.matches(r, how)));
        let applicable = match (self, r) {
            (Test::Eq(o), _) => Some(o.matches(r, how)),
            (Test::Ne(o), _) => Some(o.matches(r, how).not()),
            (Test::In(os), _) => Some(any(os)),
            (Test::NotIn(os), _) => Some(any(os).not()),
            (Test::Exists(expected), _) => Some(Verdict::of(*expected)),
            (Test::Regex(regex), Reading::Text(s)) => Some(Verdict::of(regex.is_match(s))),
            (Test::Contains(_, Some(needle)), Reading::Text(s)) => Some(Verdict::of(s.contains(needle.as_str()))),
            (Test::Contains(needle, _), Reading::Array(items)) => Some(
                items
                    .iter()
                    .fold(Verdict::FALSE, |v, item| v.or(needle.matches_value(item))),
            ),
            (Test::Prefix(prefix), Reading::Text(s)) => Some(Verdict::of(s.starts_with(prefix.as_str()))),
            (Test::Glob(pattern), Reading::Text(s)) => Some(Verdict::of(pattern.matches(s))),
            (Test::PathUnder(base), Reading::Text(s)) => Some(base.verdict(s, places)),
            (Test::Gt(bound), Reading::Num(n)) => Some(Verdict::of(n.compare(*bound) == Some(Ordering::Greater))),
            (Test::Gte(bound), Reading::Num(n)) => Some(Verdict::of(matches!(
                n.compare(*bound),
                Some(Ordering::Greater | Ordering::Equal)
            ))),
            (Test::Lt(bound), Reading::Num(n)) => Some(Verdict::of(n.compare(*bound) == Some(Ordering::Less))),
            (Test::Lte(bound), Reading::Num(n)) => Some(Verdict::of(matches!(
                n.compare(*bound),
                Some(Ordering::Less | Ordering::Equal)
            ))),
            _ => None,
        };
        match applicable {
            Some(verdict) => verdict,
            // An operator of another type decides on the value as sent, without conversion.
            None if how == How::AsSent => Verdict::FALSE,
            None => self.verdict(as_sent(origin), Some(origin), How::AsSent, places),
        }
    }
}

/// The value as sent, as a reading.
fn as_sent(value: &Value) -> Reading<'_> {
    match value {
        Value::Null => Reading::Null,
        Value::Bool(b) => Reading::Bool(*b),
        Value::Number(n) => Num::from_json(n).map_or(Reading::Null, Reading::Num),
        Value::String(s) => Reading::Text(s),
        Value::Array(items) => Reading::Array(items),
        Value::Object(map) => Reading::Object(map),
    }
}

/// An `eq`/`in`/`contains` operand: the values it is equal to, as its own readings (`"500"` is
/// also 500, `true` also 1), and, when it is (or holds) an array or object, its members.
#[derive(Debug, Default)]
pub(crate) struct Operand {
    scalars: Vec<Scalar>,
    /// The operand as a JavaScript server rounds it (an integer beyond 2^53): a value equal to
    /// it is the same call to such a server (a deny rule matches), but not to others (an allow
    /// rule does not, unless the value's own reading is the rounded one).
    rounded: Vec<Scalar>,
    /// Readings that merge values (`Boolean("no")` is `true`): a lossy reading of a sent value
    /// found here does not make it equal (for a deny rule), nor stop it being equal (for allow).
    lossy: Vec<Scalar>,
    /// The operand as written. A lossy reading of a sent value is compared with this alone:
    /// `Boolean(2)` is `true`, which equals the operand `true`, but not the operand 1 (whose
    /// reading `true` is another server's conversion; chained, every number would equal 1).
    sent: Vec<Scalar>,
    array: Option<Vec<Operand>>,
    object: Option<Vec<(String, Operand)>>,
}

#[derive(Debug, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Num(Num),
    Text(String),
}

impl Scalar {
    fn of(r: Reading<'_>) -> Option<Scalar> {
        match r {
            Reading::Null => Some(Scalar::Null),
            Reading::Bool(b) => Some(Scalar::Bool(b)),
            Reading::Num(n) => Some(Scalar::Num(n)),
            Reading::Text(t) => Some(Scalar::Text(t.to_owned())),
            Reading::Missing | Reading::Array(_) | Reading::Object(_) => None,
        }
    }

    fn equals(&self, r: Reading<'_>) -> bool {
        match (self, r) {
            (Scalar::Null, Reading::Null) => true,
            (Scalar::Bool(a), Reading::Bool(b)) => *a == b,
            (Scalar::Num(a), Reading::Num(b)) => a.same(b),
            (Scalar::Text(a), Reading::Text(b)) => a == b,
            _ => false,
        }
    }
}

impl Operand {
    fn compile(value: &Value) -> Operand {
        let mut operand = Operand::default();
        let _ = reading::each(value, SENT, &mut |r, how| {
            match r {
                Reading::Array(items) => operand.array = Some(items.iter().map(Operand::compile).collect()),
                Reading::Object(map) => {
                    operand.object = Some(map.iter().map(|(k, v)| (k.clone(), Operand::compile(v))).collect());
                }
                _ => {
                    if how == How::AsSent {
                        operand.sent.extend(Scalar::of(r));
                    }
                    let list = match how {
                        How::JsRounded => &mut operand.rounded,
                        _ if how.is_lossy() => &mut operand.lossy,
                        _ => &mut operand.scalars,
                    };
                    list.extend(Scalar::of(r));
                }
            }
            ControlFlow::Continue(())
        });
        operand
    }

    /// Whether reading `r` (produced as `how`) equals this operand. Members of arrays and
    /// objects have readings of their own, so the answer for a container is a verdict over theirs.
    fn matches(&self, r: Reading<'_>, how: How) -> Verdict {
        match r {
            Reading::Array(items) => match &self.array {
                Some(members) if members.len() == items.len() => members
                    .iter()
                    .zip(items)
                    .fold(Verdict::TRUE, |v, (member, item)| v.and(member.matches_value(item))),
                _ => Verdict::FALSE,
            },
            Reading::Object(map) => match &self.object {
                Some(members) if members.len() == map.len() => {
                    members.iter().fold(Verdict::TRUE, |v, (key, member)| {
                        v.and(map.get(key).map_or(Verdict::FALSE, |item| member.matches_value(item)))
                    })
                }
                _ => Verdict::FALSE,
            },
            _ => {
                let among = |list: &[Scalar]| list.iter().any(|s| s.equals(r));
                let equal = if how.is_lossy() {
                    among(&self.sent)
                } else {
                    among(&self.scalars)
                };
                let rounded = among(&self.rounded);
                Verdict {
                    some: equal || rounded,
                    every: equal || (how == How::JsRounded && rounded) || (how.is_lossy() && among(&self.lossy)),
                }
            }
        }
    }

    /// Whether the readings of `value` equal this operand.
    fn matches_value(&self, value: &Value) -> Verdict {
        let mut total = Verdict::EMPTY;
        let _ = reading::each(value, SENT, &mut |r, how| {
            total = total.add_reading(self.matches(r, how));
            if total.settled() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        total
    }
}

/// The operand as a string; the message says what was found instead.
fn string(operand: &Value) -> Result<&str, String> {
    operand
        .as_str()
        .ok_or_else(|| format!("expected a string, found {}", describe(operand)))
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
