//! Portcullis policies: the per-server rules that decide every MCP `tools/call`, and the other
//! requests that pass through the gateway (resource reads, prompts, the server's own requests).
//!
//! This crate is pure data and pure functions — no I/O beyond [`Policy::load_file`], no async
//! runtime, no storage. The gateway loads a [`Policy`] per upstream server and asks it
//! [`Policy::evaluate`] for each call ([`Policy::evaluate_request`] for the other [`Door`]s); it
//! holds rate-limit counters, approvals and the audit log itself.
//!
//! # Main types
//!
//! - [`model::RawPolicy`] and friends: the file format as serde types. The JSON Schema
//!   ([`json_schema`], committed as `policies/policy.schema.json`) is generated from them.
//! - [`Policy`]: a validated, compiled policy (globs and regexes compiled, names indexed).
//!   Cloning is cheap (an `Arc`), and it is `Send + Sync`.
//! - [`Evaluation`]: the decision for one call — [`Action`], which part of the policy decided
//!   ([`RuleRef`]: the hide pattern, the `tools` entry or one of its rules, the default), the
//!   reason, the rate limit and the approval timeout that go with it.
//! - [`guess::tool_class`]: a tool's [`ToolClass`] guessed from its name, description and
//!   annotations, for tools the policy does not classify; [`starter::starter_policy_for`]: the
//!   file `portcullis policy init` writes from a server's lists, a section for every door.
//! - [`add_entry`] / [`add_rule`]: what "always" writes into a file's text, in the section of
//!   the request's [`Door`], changing only the entry's bytes.
//! - [`PolicyError`]: every [`Problem`] found in a file, each with file, JSON path and what
//!   was expected.
//!
//! # How a call is decided
//!
//! 1. **`hide`** wins over everything: a tool matching a `hide` pattern is [`Action::Hide`]
//!    ([`RuleRef::Hide`], `"hide: <pattern>"`, the first matching pattern in file order).
//! 2. **Entry lookup** in `tools`: the key equal to the tool name; else the most specific
//!    glob key that matches. Specificity: more literal (non-wildcard) characters wins; on a
//!    tie, fewer wildcards (a run of `*`, a `?`, a `[...]` each count one); on a tie, the key
//!    written first in the file. No entry: the file's `default` ([`RuleRef::Default`]), which
//!    itself defaults to `require_approval`.
//! 3. **Rules** of the entry are tried in order; the first whose `when` holds decides with its
//!    own action and reason ([`RuleRef::Rule`], `"tools.<key>.rules[<i>]"`). Otherwise the entry's
//!    `action` (default `allow`, so `{}` allows) and reason decide ([`RuleRef::Entry`],
//!    `"tools.<key>"`).
//! 4. **Rate limit**: the entry's `rate_limit` is reported only when the final action is
//!    `Allow`, whether the entry's action or a rule produced it. The gateway counts calls per
//!    session and [`Evaluation::entry`].
//! 5. **Approval timeout**: reported only when the final action is `RequireApproval`: the
//!    entry's `approval_timeout`, else the file's, else `None` (the gateway's default).
//!
//! # Other doors
//!
//! [`Policy::evaluate_request`] decides a request at a [`Door`] by the same steps, in its own
//! section of the file: `resources` (keyed by URI) for `resources/read` and `resources/subscribe`,
//! `prompts` (keyed by name) for `prompts/get`, and `server_requests.sampling`, `.elicitation`,
//! `.roots` (one entry each, no keys) for what the server asks of the client. The differences:
//!
//! - **No `hide` list**: an entry's own action may be `hide` ([`Action::Hide`]; such an entry has
//!   no rules, and no rule's action is `hide`). [`Policy::is_hidden_in`] filters the lists by it.
//!   The top-level `hide` list hides tools only.
//! - **Resource URIs are compared in normal form** ([`normalize_uri`]): exact keys are normalized
//!   at load (a key that cannot be is a problem), glob keys must be written in normal form, and a
//!   requested URI that cannot be normalized ([`UriProblem`]) is denied, by the default's name,
//!   with the problem as reason — and hidden from lists.
//! - **Conditions read the section's facts** ([`RequestFacts`]): `uri` in `resources`
//!   (`path_under` reads a `file:` URI's decoded path), `arguments.*` in `prompts`,
//!   `system_prompt` and `max_tokens` in `sampling`; `mode`, `url`, `url.host`, `schema.fields`
//!   and `message` in `elicitation`; `client.*` everywhere. A key a section does not read is a
//!   load problem. A fact present but not readable alike by every server (an elicitation URL that
//!   cannot be normalized) matches every deny rule and no allow rule.
//! - **Defaults**: a request a section does not name, or whose section is absent, gets the file's
//!   `default` ([`RuleRef::Default`]; itself `require_approval` when absent), in every section.
//!   A gate lets nothing through because a section was forgotten, and a tools-only file decides
//!   tools exactly as before.
//! - **Names**: [`RuleRef::SectionEntry`] / [`RuleRef::SectionRule`], whose text puts the section
//!   first (`resources.<key>`, `prompts.<key>.rules[<i>]`, `server_requests.sampling`); tools keep
//!   [`RuleRef::Entry`] / [`RuleRef::Rule`] and their texts. Rate limits count per session, door
//!   and entry key ([`Evaluation::door`], [`Evaluation::entry`]).
//!
//! # Conditions
//!
//! A rule's `when` maps argument paths (`arguments.a.b`, array elements by index:
//! `arguments.files.0.path`) to operator objects; every operator of every path must hold.
//! A condition decides on what the server will read, not on the JSON as sent (DESIGN §4,
//! [`reading`]): a value has the readings mainstream SDKs make of it (`"500"` is also 500, `"yes"`
//! also `true`, a string holding JSON also that JSON, an integer beyond 2^53 also as JavaScript
//! rounds it, a path as resolved against [`Places`]). A deny or require_approval rule holds when
//! some reading satisfies its `when`; an allow rule only when every reading does; a reading that
//! cannot be known (a relative path with no roots) counts as matching for the first and not for
//! the second. An operator meeting a reading of another type decides on the value as sent. A
//! missing path satisfies only `exists: false`, `ne` and `not_in`.
//! [`Policy::argument_type_problem`] refuses what the tool's pinned schema does not allow.
//!
//! # Invariants
//!
//! - A [`Policy`] only exists for a file with no problems: loading is all or nothing.
//! - Evaluation is deterministic and total: every tool name (and every request at every door)
//!   gets exactly one decision.
//! - Evaluation does not allocate beyond the strings it returns (and, for a tool name that is not
//!   ASCII, its characters for glob matching) for values with no other reading than as sent (a
//!   plain word or path, an object, a number read by a numeric operator). Values with other
//!   readings are read one reading at a time, never collected.

mod argument_type;
mod condition;
mod edit;
mod eval;
mod explain;
#[cfg(test)]
mod golden_tests;
pub mod guess;
mod load;
pub mod model;
mod number;
mod path_under;
mod pattern;
mod reading;
mod results;
mod rule_ref;
mod schema;
pub mod starter;
mod uri;

use std::fmt;
use std::num::{NonZeroU32, NonZeroU64};
use std::path::Path;
use std::sync::Arc;

pub use condition::{CallFacts, RequestFacts};
pub use edit::{add_entry, add_rule, add_tool_entry, add_tool_rule, exact_entry_key, RuleWrite};
pub use explain::{Explanation, GlobKey, Matched, RuleTried};
pub use model::{Risk, ToolClass};
pub use path_under::Places;
pub use pattern::exact_key;
pub use results::{ResultActions, Treatment};
pub use rule_ref::{Door, RuleRef};
pub use schema::json_schema;
pub use uri::{normalize_uri, NormalUri, UriProblem};

/// A validated, compiled policy for one server.
#[derive(Debug, Clone)]
pub struct Policy {
    compiled: Arc<eval::Compiled>,
}

impl Policy {
    /// Parses and validates a policy; `source` (usually the file path) names it in problems.
    pub fn from_json_str(text: &str, source: &str) -> Result<Policy, PolicyError> {
        load::compile(text, source)
            .map(|compiled| Policy {
                compiled: Arc::new(compiled),
            })
            .map_err(|problems| PolicyError { problems })
    }

    /// Reads and validates the policy file at `path`. A read failure is reported as a
    /// [`Problem`] too, so callers handle one error type.
    pub fn load_file(path: &Path) -> Result<Policy, PolicyError> {
        let source = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Policy::from_json_str(&text, &source),
            Err(err) => Err(PolicyError {
                problems: vec![Problem {
                    file: source,
                    path: "$".to_owned(),
                    message: format!("cannot read the policy file: {err}"),
                }],
            }),
        }
    }

    /// What is done with findings in the answer to a request for `name` at `door` (a tool, a
    /// resource URI, a prompt): the entry's `results` fields, then the file's, then the
    /// defaults ([`ResultActions::default`]).
    pub fn results_for(&self, door: Door, name: &str) -> ResultActions {
        self.compiled.results_in(door, name)
    }

    /// The policy for a server without a policy file: every call requires approval, reported
    /// as [`RuleRef::NoPolicyFile`].
    pub fn require_approval_for_all() -> Policy {
        Policy {
            compiled: Arc::new(eval::Compiled::only_default(
                Action::RequireApproval,
                RuleRef::NoPolicyFile,
            )),
        }
    }

    /// Decides a call of `tool` with `arguments` (the `tools/call` params' `arguments`;
    /// pass `Value::Null` when there are none).
    pub fn evaluate(&self, tool: &str, arguments: &serde_json::Value) -> Evaluation {
        self.evaluate_call(tool, &CallFacts::arguments(arguments))
    }

    /// Decides a call from everything a policy may read about it (arguments and the client's
    /// self-reported identity, for `client.name` / `client.version` conditions).
    pub fn evaluate_call(&self, tool: &str, facts: &CallFacts<'_>) -> Evaluation {
        self.compiled.evaluate(tool, &RequestFacts::new(*facts))
    }

    /// Decides a request at `door`: for [`Door::Tools`] as [`Policy::evaluate_call`]; for
    /// [`Door::Resources`] `name` is the resource URI (brought to its normal form here too; a
    /// URI that cannot be normalized is denied, reported as the default, with the
    /// [`UriProblem`] as reason); for [`Door::Prompts`] the prompt name; for a server request
    /// it is not read. `facts` carries what the section's rules read: build it with
    /// [`RequestFacts::resource`], [`RequestFacts::sampling`], [`RequestFacts::elicitation`] or
    /// [`RequestFacts::new`]. A section the file does not have, or an entry it does not name,
    /// gets the file's `default`.
    pub fn evaluate_request(&self, door: Door, name: &str, facts: &RequestFacts<'_>) -> Evaluation {
        self.compiled.evaluate_in(door, name, facts)
    }

    /// Decides a `resources/read` or `resources/subscribe` of `uri`, with the `uri` fact set
    /// from it: [`Policy::evaluate_request`] for [`Door::Resources`].
    pub fn evaluate_resource(&self, uri: &NormalUri, call: CallFacts<'_>) -> Evaluation {
        self.compiled
            .evaluate_in(Door::Resources, uri.as_str(), &RequestFacts::resource(uri, call))
    }

    /// Why a call is decided as [`Policy::evaluate_call`] decides it: the hide pattern, the
    /// exact key or the winning glob (and the globs it beat), each rule tried, or the default.
    /// The decision in it is the evaluator's own, made by the same code.
    pub fn explain(&self, tool: &str, facts: &CallFacts<'_>) -> Explanation {
        self.compiled.explain(Door::Tools, tool, &RequestFacts::new(*facts))
    }

    /// Why a request is decided as [`Policy::evaluate_request`] decides it.
    pub fn explain_request(&self, door: Door, name: &str, facts: &RequestFacts<'_>) -> Explanation {
        self.compiled.explain(door, name, facts)
    }

    /// Where `tool`'s pinned `input_schema` declares a `type` for an argument a rule of the
    /// tool's entry reads (following `properties` and `items` along the rule's path), and the
    /// call's value there (or on the way there) is of another type: a message for the agent,
    /// which the gateway refuses the call with. `None` when every such value has its declared
    /// type, when the schema declares none, and for tools decided without rules (hide, default).
    ///
    /// Lenient servers convert a value of the wrong type before the tool runs; the policy reads
    /// those conversions it knows ([`CallFacts`]), and this refusal covers the ones it does not.
    pub fn argument_type_problem(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
        input_schema: &serde_json::Value,
    ) -> Option<String> {
        self.compiled.argument_type_problem(tool, arguments, input_schema)
    }

    /// Whether `tool` matches a `hide` pattern: leave it out of `tools/list`.
    pub fn is_hidden(&self, tool: &str) -> bool {
        self.compiled.hidden_by(tool).is_some()
    }

    /// Whether `name` is left out of `door`'s list: for tools as [`Policy::is_hidden`]; for a
    /// resource (its `uri`, or a template's `uriTemplate`, matched as a URI in normal form) or a
    /// prompt, whether the entry that decides it has the action "hide" (lists carry no
    /// arguments, so rules are not tried). A resource URI that cannot be normalized is hidden
    /// too: reading it would be refused.
    pub fn is_hidden_in(&self, door: Door, name: &str) -> bool {
        self.compiled.is_hidden_in(door, name)
    }

    /// Argument key names to redact in the audit log in addition to the built-in ones,
    /// lowercased (the comparison is case-insensitive).
    pub fn redact_keys(&self) -> &[String] {
        &self.compiled.redact
    }

    /// The `class` and `risk` annotations of the `tools` entry whose key is `entry` (as in
    /// [`Evaluation::entry`]); empty for an unknown key.
    pub fn annotations(&self, entry: &str) -> Annotations {
        self.compiled
            .entry_by_key(entry)
            .map(eval::Entry::annotations)
            .unwrap_or_default()
    }

    /// The `class` and `risk` annotations of the entry of `door`'s section whose key is `entry`
    /// (as in [`Evaluation::entry`]); empty for an unknown key.
    pub fn annotations_in(&self, door: Door, entry: &str) -> Annotations {
        self.compiled
            .entry_in(door, entry)
            .map(eval::Entry::annotations)
            .unwrap_or_default()
    }
}

/// A `when` object compiled on its own: the condition of a grant a person scoped to some
/// arguments ("calls whose path is under /tmp/x"). The same operators and paths as a rule.
#[derive(Debug)]
pub struct When {
    conditions: Vec<condition::Condition>,
    source: serde_json::Value,
}

impl When {
    /// Compiles `value`, a `when` object (`{"arguments.path": {"path_under": "/tmp"}}`).
    pub fn parse(value: &serde_json::Value) -> Result<When, PolicyError> {
        let conditions = load::compile_when(value, "when").map_err(|problems| PolicyError { problems })?;
        Ok(When {
            conditions,
            source: value.clone(),
        })
    }

    /// Whether every condition holds for the call, on every reading a server may make of the
    /// values it reads (a grant allows calls, so it is read as an allow rule is).
    pub fn holds(&self, facts: &CallFacts<'_>) -> bool {
        let request = RequestFacts::new(*facts);
        self.conditions
            .iter()
            .all(|c| c.holds(&request, condition::Quantifier::Every) && c.shadowed_key(facts.arguments).is_none())
    }

    /// The object as written.
    pub fn as_json(&self) -> &serde_json::Value {
        &self.source
    }
}

/// A decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Forward the call.
    Allow,
    /// Refuse the call.
    Deny,
    /// The tool (resource, prompt) is hidden: leave it out of its list, refuse requests for it.
    Hide,
    /// Hold the call until a person decides.
    RequireApproval,
}

/// The decision for one call and what produced it. Serializes with `rule` as its text and the
/// matched `entry` beside it, as `policy explain --json` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub action: Action,
    /// What decided; its text (`"tools.<key>"`, `"tools.<key>.rules[<i>]"`, `"hide: <pattern>"`,
    /// `"default"`, `"no policy file"`, `"resources.<key>"`, `"prompts.<key>.rules[<i>]"`,
    /// `"server_requests.sampling"`, …) is stable for logs and the audit record.
    pub rule: RuleRef,
    /// The reason from the deciding rule or entry, for the agent.
    pub reason: Option<String>,
    /// The entry's rate limit; only when `action` is `Allow`.
    pub rate_limit: Option<RateLimit>,
    /// Seconds to wait for approval; only when `action` is `RequireApproval`: the entry's,
    /// else the file's, else `None` (use the gateway's configured default).
    pub approval_timeout_secs: Option<u64>,
}

impl Evaluation {
    /// The key that matched; `None` for hide and default. With [`Evaluation::door`], the
    /// rate-limit counter key (a tool entry and a resource entry may share a key text).
    pub fn entry(&self) -> Option<&str> {
        self.rule.entry_key()
    }

    /// The section whose entry (or hide pattern) decided; `None` for the default.
    pub fn door(&self) -> Option<Door> {
        self.rule.door()
    }
}

impl serde::Serialize for Evaluation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The fields as they were when the key sat beside the rule's text.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            action: Action,
            rule: &'a RuleRef,
            entry: Option<&'a str>,
            reason: &'a Option<String>,
            rate_limit: &'a Option<RateLimit>,
            approval_timeout_secs: Option<u64>,
        }
        Shown {
            action: self.action,
            rule: &self.rule,
            entry: self.entry(),
            reason: &self.reason,
            rate_limit: &self.rate_limit,
            approval_timeout_secs: self.approval_timeout_secs,
        }
        .serialize(serializer)
    }
}

/// At most `max` calls per `window_secs`, per session and entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RateLimit {
    pub max: NonZeroU32,
    pub window_secs: NonZeroU64,
}

/// Annotations of an entry, recorded with calls; they never change a decision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    pub class: Option<ToolClass>,
    pub risk: Option<Risk>,
}

/// Everything wrong with a policy file. Displays one problem per line.
#[derive(Debug, thiserror::Error)]
#[error("{}", Lines(&self.problems))]
pub struct PolicyError {
    pub problems: Vec<Problem>,
}

/// One thing wrong in a policy file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The file (or other source name) the problem is in.
    pub file: String,
    /// JSON path of the offending value, such as `$.tools["vm_start"].action`; `$` for the
    /// whole document (syntax errors carry their line and column in `message`).
    pub path: String,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.path, self.message)
    }
}

/// Displays problems one per line.
struct Lines<'a>(&'a [Problem]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}
