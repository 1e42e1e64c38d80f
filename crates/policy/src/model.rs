//! The policy file as written: serde types that mirror the JSON one to one.
//!
//! These types are the single description of the format. The JSON Schema in
//! `policies/policy.schema.json` is generated from them (their doc comments become the
//! schema's descriptions, so they are written for policy authors), and a valid policy file
//! deserializes into [`RawPolicy`]. The loader in `load.rs` reads the same shape field by field
//! so that it can report every mistake in a file instead of stopping at the first; a test keeps
//! the two readings in agreement.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// A Portcullis policy: decides every `tools/call` sent to one MCP server, and with the optional
/// `resources`, `prompts` and `server_requests` sections the other requests that reach through
/// it.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Portcullis policy, format version 1")]
pub struct RawPolicy {
    /// Format version. Must be the string "1".
    pub version: RawVersion,

    /// What a tool that matches no entry in `tools` gets: "allow", "deny" or
    /// "require_approval". Defaults to "require_approval", so a forgotten tool asks a person
    /// instead of running silently.
    #[serde(default)]
    #[schemars(extend("default" = "require_approval"))]
    pub default: Option<RawAction>,

    /// Tool names or glob patterns to hide. A hidden tool is removed from `tools/list` and
    /// denied if called anyway; hiding wins over every entry in `tools`.
    #[serde(default)]
    pub hide: Vec<String>,

    /// Seconds a call waits for the user's approval before it is denied, for every
    /// "require_approval" decision whose entry does not set its own `approval_timeout`.
    /// When absent, the gateway's configured default applies.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub approval_timeout: Option<u64>,

    /// Extra argument key names (compared case-insensitively) whose values are redacted in
    /// the audit log, in addition to the built-in list (password, token, ...).
    #[serde(default)]
    pub redact: Vec<String>,

    /// What is done with what the gate finds in an answer before the agent reads it (hidden
    /// characters, terminal escapes, secrets, instruction-like text), for every entry that does
    /// not say otherwise. Absent fields take the defaults: invisible and escapes "strip",
    /// secrets and instructions "flag".
    #[serde(default)]
    pub results: Option<RawResults>,

    /// Per-tool entries, keyed by exact tool name or by glob pattern (`*`, `?`, `[...]`).
    /// An exact name wins over any glob; among globs the most specific wins (see the policy
    /// README). A tool that matches no key gets `default`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawToolEntry>")]
    pub tools: OrderedMap<RawToolEntry>,

    /// Per-resource entries deciding `resources/read` and `resources/subscribe`, keyed by
    /// resource URI or glob pattern, matched against the URI in its normal form (scheme and host
    /// lowercase, dot segments removed; see the policy README). An entry with action "hide" is
    /// also left out of `resources/list` and `resources/templates/list`. A resource that matches
    /// no key gets `default`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawResourceEntry>")]
    pub resources: OrderedMap<RawResourceEntry>,

    /// Per-prompt entries deciding `prompts/get`, keyed by prompt name or glob pattern. An entry
    /// with action "hide" is also left out of `prompts/list`. A prompt that matches no key gets
    /// `default`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawPromptEntry>")]
    pub prompts: OrderedMap<RawPromptEntry>,

    /// What the server may ask of the client: `sampling`, `elicitation`, `roots`. A request with
    /// no entry here gets `default`.
    #[serde(default)]
    pub server_requests: Option<RawServerRequests>,
}

/// The only format version there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum RawVersion {
    /// Version 1.
    #[serde(rename = "1")]
    V1,
}

/// A decision a policy can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawAction {
    /// Forward the call to the server.
    Allow,
    /// Refuse the call; the agent is told `reason`.
    Deny,
    /// Hold the call until a person approves or denies it.
    RequireApproval,
}

impl RawAction {
    /// Every action with its spelling in a policy file, in documentation order.
    pub const ALL: [(&'static str, RawAction); 3] = [
        ("allow", RawAction::Allow),
        ("deny", RawAction::Deny),
        ("require_approval", RawAction::RequireApproval),
    ];
}

/// A decision an entry of `resources`, `prompts` or `server_requests` can ask for: the actions of
/// a tool entry, and "hide".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawSectionAction {
    /// Forward the request.
    Allow,
    /// Refuse the request; the agent is told `reason`.
    Deny,
    /// Hold the request until a person approves or denies it.
    RequireApproval,
    /// Leave the resource or prompt out of the server's lists, and refuse it if requested
    /// anyway (for a server request: refuse it, as "deny").
    Hide,
}

impl RawSectionAction {
    /// Every action with its spelling in a policy file, in documentation order.
    pub const ALL: [(&'static str, RawSectionAction); 4] = [
        ("allow", RawSectionAction::Allow),
        ("deny", RawSectionAction::Deny),
        ("require_approval", RawSectionAction::RequireApproval),
        ("hide", RawSectionAction::Hide),
    ];
}

/// What a tool does, recorded with each call. Does not affect decisions.
// No `Ord`: which class is "worse" is `guess`'s question (unknown counts least there), not the
// order of this list (which the schema and the starter policy keep, unknown last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Only reads state.
    Read,
    /// Changes state.
    Write,
    /// Runs code or commands.
    Execute,
    /// Destroys data or resources.
    Delete,
    /// Not known.
    Unknown,
}

impl ToolClass {
    /// Every class with its spelling in a policy file.
    pub const ALL: [(&'static str, ToolClass); 5] = [
        ("read", ToolClass::Read),
        ("write", ToolClass::Write),
        ("execute", ToolClass::Execute),
        ("delete", ToolClass::Delete),
        ("unknown", ToolClass::Unknown),
    ];
}

/// How much harm a call to the tool could do, recorded with each call. Does not affect decisions.
// Ordered from least to most harm: a prompt raises a level to at least `high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Harmless.
    Low,
    /// Limited, recoverable harm.
    Medium,
    /// Serious harm.
    High,
    /// Irreversible or wide harm.
    Critical,
}

impl Risk {
    /// Every risk level with its spelling in a policy file.
    pub const ALL: [(&'static str, Risk); 4] = [
        ("low", Risk::Low),
        ("medium", Risk::Medium),
        ("high", Risk::High),
        ("critical", Risk::Critical),
    ];
}

/// How calls to the matching tools are decided. `{}` allows them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawToolEntry {
    /// The decision when no rule in `rules` matches: "allow" (the default), "deny" or
    /// "require_approval".
    #[serde(default)]
    #[schemars(extend("default" = "allow"))]
    pub action: Option<RawAction>,

    /// Why; shown to the agent when the call is denied, and to the person asked to approve.
    #[serde(default)]
    pub reason: Option<String>,

    /// Allow at most `max` calls per `window` seconds, counted per agent session and per
    /// entry. Applies whenever the decision for this entry is "allow".
    #[serde(default)]
    pub rate_limit: Option<RawRateLimit>,

    /// Seconds a "require_approval" decision from this entry waits for a person before the
    /// call is denied. Overrides the file-level `approval_timeout`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub approval_timeout: Option<u64>,

    /// Argument-based rules, tried in order; the first whose `when` matches decides. When
    /// none matches, the entry's own `action` applies.
    #[serde(default)]
    pub rules: Vec<RawRule>,

    /// What the tool does: "read", "write", "execute", "delete" or "unknown". Recorded in
    /// the audit log; does not affect the decision.
    #[serde(default)]
    pub class: Option<ToolClass>,

    /// How much harm a call could do: "low", "medium", "high" or "critical". Recorded in
    /// the audit log; does not affect the decision.
    #[serde(default)]
    pub risk: Option<Risk>,

    /// What is done with findings in this tool's answers; each field named here wins over the
    /// file's `results`.
    #[serde(default)]
    pub results: Option<RawResults>,
}

/// What is done with each kind of finding in an answer. "strip" removes it, "redact" replaces
/// it with "[redacted]", "flag" passes it and records it in the audit log, "hold" keeps the
/// answer from the agent until a person decides.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawResults {
    /// Characters a person does not see (Unicode tag characters, zero-width and bidi controls)
    /// where real text does not need them: "strip" (the default), "flag" or "hold".
    #[serde(default)]
    #[schemars(extend("default" = "strip"))]
    pub invisible: Option<RawStripFlagHold>,
    /// Terminal escape sequences and control characters: "strip" (the default), "flag" or "hold".
    #[serde(default)]
    #[schemars(extend("default" = "strip"))]
    pub escapes: Option<RawStripFlagHold>,
    /// Private keys, cloud keys, tokens, passwords in URLs: "flag" (the default), "redact" or "hold".
    #[serde(default)]
    #[schemars(extend("default" = "flag"))]
    pub secrets: Option<RawRedactFlagHold>,
    /// Text shaped as instructions to the model ("ignore previous instructions", chat template
    /// tokens): "flag" (the default) or "hold".
    #[serde(default)]
    #[schemars(extend("default" = "flag"))]
    pub instructions: Option<RawFlagHold>,
}

/// "strip", "flag" or "hold".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawStripFlagHold {
    Strip,
    Flag,
    Hold,
}

/// "redact", "flag" or "hold".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawRedactFlagHold {
    Redact,
    Flag,
    Hold,
}

/// "flag" or "hold".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawFlagHold {
    Flag,
    Hold,
}

/// Defines the entry and rule types of a section other than `tools`: the shape of a tool entry,
/// with "hide" among the entry's actions and the section's own `when` keys.
macro_rules! section_types {
    (
        $(#[$entry_doc:meta])* $entry:ident,
        $(#[$rule_doc:meta])* $rule:ident,
        $(#[$when_doc:meta])* when = $pattern:literal
    ) => {
        $(#[$entry_doc])*
        #[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $entry {
            /// The decision when no rule in `rules` matches: "allow" (the default), "deny",
            /// "require_approval" or "hide".
            #[serde(default)]
            #[schemars(extend("default" = "allow"))]
            pub action: Option<RawSectionAction>,

            /// Why; shown to the agent when the request is refused, and to the person asked to
            /// approve.
            #[serde(default)]
            pub reason: Option<String>,

            /// Allow at most `max` requests per `window` seconds, counted per agent session and
            /// per entry. Applies whenever the decision for this entry is "allow".
            #[serde(default)]
            pub rate_limit: Option<RawRateLimit>,

            /// Seconds a "require_approval" decision from this entry waits for a person before
            /// the request is denied. Overrides the file-level `approval_timeout`.
            #[serde(default)]
            #[schemars(range(min = 1))]
            pub approval_timeout: Option<u64>,

            /// Rules, tried in order; the first whose `when` matches decides. When none matches,
            /// the entry's own `action` applies.
            #[serde(default)]
            pub rules: Vec<$rule>,

            /// What the request does: "read", "write", "execute", "delete" or "unknown".
            /// Recorded in the audit log; does not affect the decision.
            #[serde(default)]
            pub class: Option<ToolClass>,

            /// How much harm the request could do: "low", "medium", "high" or "critical".
            /// Recorded in the audit log; does not affect the decision.
            #[serde(default)]
            pub risk: Option<Risk>,

            /// What is done with findings in the answers to these requests; each field named
            /// here wins over the file's `results`.
            #[serde(default)]
            pub results: Option<RawResults>,
        }

        $(#[$rule_doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $rule {
            $(#[$when_doc])*
            #[schemars(with = "BTreeMap<String, RawCondition>")]
            #[schemars(extend("minProperties" = 1, "propertyNames" = { "pattern": $pattern }))]
            pub when: OrderedMap<RawCondition>,

            /// The decision when `when` matches: "allow", "deny" or "require_approval".
            pub action: RawAction,

            /// Why; shown to the agent when this rule refuses the request, and to the person
            /// asked to approve.
            #[serde(default)]
            pub reason: Option<String>,
        }
    };
}

section_types!(
    /// How reading or subscribing to the matching resources is decided. `{}` allows them.
    RawResourceEntry,
    /// A decision that applies when the request satisfies `when`.
    RawResourceRule,
    /// Conditions on the request, all of which must hold: `uri` (the resource URI in normal
    /// form; `path_under` reads the path of a `file:` URI) and `client.name` / `client.version`.
    when = "^(uri|client\\.(name|version))$"
);

section_types!(
    /// How getting the matching prompts is decided. `{}` allows them.
    RawPromptEntry,
    /// A decision that applies when the request satisfies `when`.
    RawPromptRule,
    /// Conditions on the request, all of which must hold: paths into the prompt's arguments
    /// (`arguments.topic`) and `client.name` / `client.version`.
    when = "^(arguments(\\.[^.]+)+|client\\.(name|version))$"
);

section_types!(
    /// How the server's `sampling/createMessage` requests are decided. `{}` allows them.
    RawSamplingEntry,
    /// A decision that applies when the request satisfies `when`.
    RawSamplingRule,
    /// Conditions on the request, all of which must hold: `system_prompt`, `max_tokens` and
    /// `client.name` / `client.version`.
    when = "^(system_prompt|max_tokens|client\\.(name|version))$"
);

section_types!(
    /// How the server's `elicitation/create` requests are decided. `{}` allows them.
    RawElicitationEntry,
    /// A decision that applies when the request satisfies `when`.
    RawElicitationRule,
    /// Conditions on the request, all of which must hold: `mode` ("form" or "url"), `url`,
    /// `url.host`, `schema.fields` (the names of the requested fields, an array), `message` and
    /// `client.name` / `client.version`.
    when = "^(mode|url|url\\.host|schema\\.fields|message|client\\.(name|version))$"
);

section_types!(
    /// How the server's `roots/list` requests are decided. `{}` allows them.
    RawRootsEntry,
    /// A decision that applies when the request satisfies `when`.
    RawRootsRule,
    /// Conditions on the request, all of which must hold: `client.name` / `client.version`.
    when = "^client\\.(name|version)$"
);

/// What the server may ask of the client (legacy-era server requests, and their 2026 MRTR
/// `inputRequests`). Each field is one entry; a request without one gets the file's `default`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawServerRequests {
    /// `sampling/createMessage`: the server asks the client's model to generate text.
    #[serde(default)]
    pub sampling: Option<RawSamplingEntry>,

    /// `elicitation/create`: the server asks the user for input, in a form or at a URL.
    #[serde(default)]
    pub elicitation: Option<RawElicitationEntry>,

    /// `roots/list`: the server asks which directories the client exposes.
    #[serde(default)]
    pub roots: Option<RawRootsEntry>,
}

/// A budget of calls per time window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimit {
    /// Calls allowed per window (at least 1).
    #[schemars(range(min = 1))]
    pub max: u32,

    /// Length of the window in seconds (at least 1).
    #[schemars(range(min = 1))]
    pub window: u64,
}

/// A decision that applies when the call's arguments satisfy `when`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// Conditions on the call, all of which must hold. Keys are paths into the arguments such as
    /// `arguments.query` or `arguments.files.0.path` (array elements by index), or
    /// `client.name` / `client.version` (the agent's self-reported identity); values are
    /// conditions.
    #[schemars(with = "BTreeMap<String, RawCondition>")]
    #[schemars(extend("minProperties" = 1, "propertyNames" = { "pattern": "^(arguments(\\.[^.]+)+|client\\.(name|version))$" }))]
    pub when: OrderedMap<RawCondition>,

    /// The decision when `when` matches: "allow", "deny" or "require_approval".
    pub action: RawAction,

    /// Why; shown to the agent when this rule denies the call, and to the person asked to
    /// approve.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Operators tested against the value at one argument path; all of them must hold. Values
/// are compared without type conversion: the string "5" is not the number 5. When the path
/// is missing, only `exists: false`, `ne` and `not_in` hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1))]
pub struct RawCondition {
    /// The value equals this JSON value (numbers compare by value: 1 equals 1.0).
    #[serde(default, deserialize_with = "present")]
    pub eq: Option<Value>,

    /// The value is missing or differs from this JSON value.
    #[serde(default, deserialize_with = "present")]
    pub ne: Option<Value>,

    /// The value equals one of these.
    #[serde(default, rename = "in")]
    pub in_: Option<Vec<Value>>,

    /// The value is missing or equals none of these.
    #[serde(default)]
    pub not_in: Option<Vec<Value>>,

    /// The value is a string that this regular expression (Rust `regex` syntax) matches
    /// somewhere; anchor with `^` and `$` to match the whole string.
    #[serde(default)]
    pub regex: Option<String>,

    /// The value is a string containing this string, or an array with an element equal to
    /// this value.
    #[serde(default, deserialize_with = "present")]
    pub contains: Option<Value>,

    /// The value is a string that starts with this string.
    #[serde(default)]
    pub prefix: Option<String>,

    /// The value is a string this pattern matches whole: `*` any run of characters (`/`
    /// included), `?` one character, `[a-z]` a class, as in tool-name keys.
    #[serde(default)]
    pub glob: Option<String>,

    /// The value is a path that is this directory or inside it, read lexically: `.` and `..`
    /// are resolved on the text; a path that climbs above its start with `..`, a relative path
    /// against an absolute directory (or the reverse), or a path with `\` or NUL never matches.
    #[serde(default)]
    pub path_under: Option<String>,

    /// The value is a number greater than this.
    #[serde(default)]
    pub gt: Option<Number>,

    /// The value is a number greater than or equal to this.
    #[serde(default)]
    pub gte: Option<Number>,

    /// The value is a number less than this.
    #[serde(default)]
    pub lt: Option<Number>,

    /// The value is a number less than or equal to this.
    #[serde(default)]
    pub lte: Option<Number>,

    /// true: the path is present (any value, including null); false: it is missing.
    #[serde(default)]
    pub exists: Option<bool>,
}

/// Keeps a present `null` as `Some(Value::Null)`: `"eq": null` means "equals null", which the
/// default `Option` handling would turn into "no `eq` operator".
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A JSON object read in file order. Order matters for `tools` (ties between equally specific
/// globs go to the earlier key) and keeps `when` in the author's order; a duplicate key is an
/// error rather than a silent overwrite.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<T>(pub Vec<(String, T)>);

impl<T> Default for OrderedMap<T> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrderedMap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedMapVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrderedMapVisitor<T> {
            type Value = OrderedMap<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
                    }
                    let value = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(OrderedMap(entries))
            }
        }

        deserializer.deserialize_map(OrderedMapVisitor(PhantomData))
    }
}
