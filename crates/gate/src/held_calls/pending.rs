//! What a held call shows its observers, and how far a person's decision reaches: the words
//! the broker, the events ([`crate::events`]), the control API and the app share.
//!
//! A leaf: it knows neither the broker nor the event channel, so the events can carry these types
//! while the broker announces on the channel, without either importing the other back.

use portcullis_audit::Method;
use portcullis_policy::{Risk, RuleRef, ToolClass};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This call only.
    Once,
    /// This tool, for the rest of this agent session.
    Session,
    /// Write an `allow` entry into the server's policy file.
    Always,
}

/// What a person is shown for a held call (and what `approvals list --json` prints).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PendingApproval {
    pub id: String,
    pub server: String,
    /// What is asked: a `tools/call`, a resource read, a prompt fetch, or one of the server's own
    /// requests (sampling, elicitation, roots). A peer that predates it sent only tool calls.
    #[serde(default = "tools_call")]
    pub method: Method,
    /// The tool; for the other methods the resource URI, the prompt name, or the server
    /// request's kind (`sampling`, `elicitation`, `roots`).
    pub tool: String,
    /// What is asked, in plain words, the same in the app, the notification and the CLI
    /// ([`crate::held_calls::asks`]). Empty from a peer that predates it.
    #[serde(default)]
    pub asks: crate::held_calls::Asks,
    pub title: Option<String>,
    pub description: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | null"))]
    pub annotations: Option<Value>,
    /// The tool's class (read, write, execute, delete, unknown): the policy entry's `class`
    /// when it sets one, else guessed from the name, description and annotations.
    pub risk: ToolClass,
    /// How much harm the call could do: the entry's `risk` when the policy sets one, else the
    /// class's level; at least `high` for a tool never listed or changed since pinned.
    pub risk_level: Risk,
    /// Why `risk_level` is what it is.
    pub risk_basis: RiskBasis,
    /// The policy's own reason for asking (the deciding rule's or entry's `reason`), if any.
    pub reason: Option<String>,
    /// Which part of the policy asked, in plain words: "the policy entry for write_file in
    /// fs.json", "argument rule 1 of the policy entry for write_file in fs.json: arguments.path
    /// path_under \"/etc\"", "the default of fs.json (no entry names write_file)", "no policy
    /// file …", "the tool's definition changed since it was pinned". `rule` keeps the stable name.
    pub asked_by: String,
    /// The tool's `inputSchema` as the server listed it (the prompt checks edits against it);
    /// `None` when the server never listed the tool.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | null"))]
    pub input_schema: Option<Value>,
    /// In full: redaction applies to the audit log, not to the person deciding.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub arguments: Value,
    /// `arguments` as JSON text. The desktop prompt renders from this, with a parse that keeps
    /// integers as their digits: JavaScript's own parse rounds those beyond 2^53, and the person
    /// would approve `12345678901234567000` while `12345678901234567890` is forwarded.
    pub arguments_json: String,
    pub session: String,
    pub client: ClientInfo,
    /// What held the call; its text is the audit's `rule` (`tools.write_file`, `pin:changed`).
    // Its text cannot be read back into its parts: on the keeper link it travels beside the
    // approval in its structured form (`held_calls/link.rs`), which sets it after reading.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    #[serde(skip_deserializing, default = "HeldBy::changed_tool")]
    pub rule: HeldBy,
    pub requested_at: String,
    pub requested_at_ms: i64,
    pub expires_at: String,
    pub expires_at_ms: i64,
    /// The JSON-RPC id of the held request, as JSON text.
    pub request_id: String,
    /// Set when the call is held because the server changed the tool since it was pinned
    /// (rule `pin:changed`): what changed, old and new definitions.
    pub pin_change: Option<crate::pins::PinChange>,
    /// Held before by a keeper that stopped, and asked again of this one (`held_calls/remote.rs`):
    /// the person already saw its prompt, so none is raised again; it waits in the lists.
    #[serde(default)]
    pub asked_before: bool,
    /// Set when what is held is the call's answer, not the call (rule `results:hold`): what came
    /// back, as the audit keeps it, with the findings that hold it marked. The call itself was
    /// already decided and ran; the person passes this answer to the agent or refuses it, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub answer: Option<portcullis_audit::AnswerRecord>,
}

fn tools_call() -> Method {
    Method::ToolsCall
}

/// What held a call for a person. Displays (and serializes) as the audit's `rule` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldBy {
    /// The part of the policy that requires approval.
    Policy(RuleRef),
    /// The server changed the tool since it was pinned ([`crate::pins::PIN_RULE`]), whatever
    /// the policy says of it.
    PinChanged,
    /// The call ran; its answer holds findings the policy's `results` keep for a person
    /// ([`ANSWER_RULE`]). No grant covers an answer: each is passed or refused once.
    Answer,
}

/// The rule text of a held answer.
pub const ANSWER_RULE: &str = "results:hold";

impl HeldBy {
    /// The strictest reading (no grant of the tool covers it), for an approval read without its rule.
    fn changed_tool() -> Self {
        Self::PinChanged
    }

    /// The part of the policy that asked; `None` for a changed tool.
    pub fn policy_rule(&self) -> Option<&RuleRef> {
        match self {
            Self::Policy(rule) => Some(rule),
            Self::PinChanged | Self::Answer => None,
        }
    }
}

impl std::fmt::Display for HeldBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Policy(rule) => rule.fmt(f),
            Self::PinChanged => f.write_str(crate::pins::PIN_RULE),
            Self::Answer => f.write_str(ANSWER_RULE),
        }
    }
}

impl Serialize for HeldBy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Where a held call's risk level comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RiskBasis {
    /// The policy entry's `class` or `risk`.
    Policy,
    /// The server never listed the tool: nothing it says of itself was seen (high at least).
    NeverListed,
    /// The tool's definition changed since it was pinned (high at least).
    DefinitionChanged,
    /// Guessed from the tool's name, description and annotations.
    Guessed,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientInfo {
    pub name: Option<String>,
    pub version: Option<String>,
}

impl ClientInfo {
    /// What a policy may read of this client's call with `arguments` to a server at `places`.
    pub fn facts<'a>(
        &'a self,
        arguments: &'a Value,
        places: &'a portcullis_policy::Places,
    ) -> portcullis_policy::CallFacts<'a> {
        portcullis_policy::CallFacts {
            arguments,
            client_name: self.name.as_deref(),
            client_version: self.version.as_deref(),
            places,
        }
    }
}
