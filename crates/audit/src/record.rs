//! Row types: what the gateway hands the writer ([`NewDecision`]), what readers get back
//! ([`AuditRow`]), and the closed vocabularies stored as text in the `decision`, `decided_by` and
//! `outcome` columns.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A stored text value that is not part of its vocabulary (a CLI filter typo, or a row written by a
/// newer build). The message lists the values that are accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; expected one of: {}", .expected.join(", "))]
pub struct UnknownValue {
    /// Which vocabulary was being parsed (`decision`, `decided_by`, `outcome`).
    pub what: &'static str,
    /// The text that did not match.
    pub value: String,
    /// Every accepted value, in declaration order.
    pub expected: &'static [&'static str],
}

/// Declares a closed vocabulary whose text form is the same in SQLite, in serde output and in
/// `FromStr`/`Display`. One table per enum keeps the three from drifting apart; the serde attribute
/// is checked against `as_str` by a test.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $name:ident as $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The text of every value, in declaration order (used in error messages and help).
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The text stored in SQLite and printed by the CLI.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( $text => Ok($name::$variant), )+
                    _ => Err(UnknownValue { what: $what, value: s.to_owned(), expected: $name::NAMES }),
                }
            }
        }
    };
}

vocabulary! {
    /// What happened to a `tools/call` (the `decision` column; DESIGN §5).
    Decision as "decision" {
        /// Forwarded because policy allowed it.
        Allowed => "allowed",
        /// Refused by policy.
        Denied => "denied",
        /// The tool is hidden by policy; the call was refused as if the tool did not exist.
        Hidden => "hidden",
        /// Refused by the per-session rate limit.
        RateLimited => "rate_limited",
        /// A person approved the held call; it was forwarded.
        Approved => "approved",
        /// A person rejected the held call.
        Rejected => "rejected",
        /// Nobody decided before the approval timeout; refused (fail closed).
        TimedOut => "timed_out",
        /// The client cancelled or disconnected while the call was held.
        Cancelled => "cancelled",
        /// The gateway could not forward the call (upstream unreachable).
        Failed => "failed",
    }
}

vocabulary! {
    /// Who made the decision (the `decided_by` column).
    DecidedBy as "decided_by" {
        /// The server's policy file.
        Policy => "policy",
        /// A person, through the prompt or the control API.
        User => "user",
        /// The approval timeout expired.
        Timeout => "timeout",
        /// The client, by cancelling or disconnecting.
        Client => "client",
        /// The gateway itself (e.g. the upstream is unreachable).
        Gateway => "gateway",
    }
}

vocabulary! {
    /// How a forwarded call ended upstream (the `outcome` column, filled by `complete`).
    Outcome as "outcome" {
        /// The upstream returned a result without `isError`.
        Ok => "ok",
        /// The upstream returned a tool result with `isError: true`.
        ToolError => "tool_error",
        /// The upstream was unreachable, crashed, or broke the protocol.
        Failure => "failure",
        /// The call was cancelled after it was forwarded.
        Cancelled => "cancelled",
    }
}

vocabulary! {
    /// Which kind of request was decided (the `method` column): the JSON-RPC method, a client's
    /// request or the server's own. Rows written before the column existed read `tools/call`.
    Method as "method" {
        /// A tool call (the `tool` column names the tool).
        #[serde(rename = "tools/call")]
        ToolsCall => "tools/call",
        /// A resource read (the `tool` column holds the URI).
        #[serde(rename = "resources/read")]
        ResourcesRead => "resources/read",
        /// A resource subscription (the `tool` column holds the URI).
        #[serde(rename = "resources/subscribe")]
        ResourcesSubscribe => "resources/subscribe",
        /// A prompt fetched (the `tool` column holds the prompt name).
        #[serde(rename = "prompts/get")]
        PromptsGet => "prompts/get",
        /// The server asks the client's model to answer (sampling).
        #[serde(rename = "sampling/createMessage")]
        SamplingCreateMessage => "sampling/createMessage",
        /// The server asks the person for data, or to open a URL.
        #[serde(rename = "elicitation/create")]
        ElicitationCreate => "elicitation/create",
        /// The server asks for the client's roots (its folders).
        #[serde(rename = "roots/list")]
        RootsList => "roots/list",
    }
}

/// A decision to record. Built by the gateway; the writer redacts `arguments` before anything
/// reaches the disk.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDecision {
    /// When the call was decided, in Unix milliseconds (the caller's clock, so tests control it).
    pub time_ms: i64,
    /// The downstream (agent) session id.
    pub session: String,
    /// `clientInfo.name` from `initialize`, if the client sent one.
    pub client_name: Option<String>,
    /// `clientInfo.version` from `initialize`, if the client sent one.
    pub client_version: Option<String>,
    /// The upstream server name from the config.
    pub server: String,
    /// Which kind of request this is.
    pub method: Method,
    /// The tool name from `tools/call`; for the other methods the URI, the prompt name or the
    /// kind of the server's request.
    pub tool: String,
    /// The call's arguments, UNREDACTED; the store redacts before writing.
    pub arguments: serde_json::Value,
    /// `arguments` exactly as the client wrote them, when the gateway has them (a slice of the
    /// message, no copy). Stored as they are when nothing in them is redacted, so a large call's
    /// arguments are not written out again; else the redacted `arguments` are encoded.
    pub arguments_text: Option<bytes::Bytes>,
    /// Keyed digest (`hmac-sha256:`) of the canonical, unredacted arguments, computed by the gateway
    /// with the install's key so a redacted value cannot be recovered by hashing guesses.
    pub arguments_digest: String,
    /// What was decided.
    pub decision: Decision,
    /// Who decided.
    pub decided_by: DecidedBy,
    /// Which policy key or rule matched, if any.
    pub rule: Option<String>,
    /// The reason shown to the agent, if any.
    pub reason: Option<String>,
    /// How long the call was held for approval, in milliseconds.
    pub wait_ms: Option<i64>,
    /// The JSON-RPC request id as JSON text (`7` or `"abc"`), so numbers and strings stay distinct.
    pub request_id: Option<String>,
    /// The arguments as the agent sent them, when a person approved the call with edits
    /// (`arguments` is then what ran). UNREDACTED; the store redacts them like `arguments`.
    pub original_arguments: Option<serde_json::Value>,
    /// Extra secret key names from the server's policy, added to the built-in rule ([`crate::is_secret_key`]).
    pub extra_redact_keys: Vec<String>,
}

/// One row of the `decisions` table as read back. Field names are the column names, so the serde
/// form is the `audit --format jsonl` contract (DESIGN §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuditRow {
    pub id: i64,
    pub time_ms: i64,
    pub session: String,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub server: String,
    pub tool: String,
    /// The redacted arguments as stored.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub arguments: serde_json::Value,
    pub arguments_digest: String,
    pub decision: Decision,
    pub decided_by: DecidedBy,
    pub rule: Option<String>,
    pub reason: Option<String>,
    pub wait_ms: Option<i64>,
    /// `None` until the forwarded call returns (and always `None` for calls that were not forwarded).
    pub outcome: Option<Outcome>,
    pub upstream_ms: Option<i64>,
    pub request_id: Option<String>,
    /// Redacted; set only for a call approved with edited arguments (`arguments` is what ran).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "unknown", optional))]
    pub original_arguments: Option<serde_json::Value>,
    /// The kind of request (`tools/call` for every row written before the column existed). After
    /// the older columns, so the CSV's earlier columns keep their places.
    pub method: Method,
    /// What came back, redacted and cut short; `None` for a request whose answer was not
    /// recorded (not forwarded, no answer yet, written before answers were kept).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub answer: Option<String>,
    /// What the gate found in the answer and what it did; `None` as for `answer`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub findings: Option<Vec<crate::AnswerFinding>>,
    /// The answer's size in bytes as the server sent it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub answer_bytes: Option<i64>,
}

impl AuditRow {
    /// The column names, in the order rows serialize (the `audit --format` output contract).
    pub const COLUMNS: &'static [&'static str] = &[
        "id",
        "time_ms",
        "session",
        "client_name",
        "client_version",
        "server",
        "tool",
        "arguments",
        "arguments_digest",
        "decision",
        "decided_by",
        "rule",
        "reason",
        "wait_ms",
        "outcome",
        "upstream_ms",
        "request_id",
        "original_arguments",
        "method",
        "answer",
        "findings",
        "answer_bytes",
    ];

    /// The keyset cursor for the page after this row: pass it as [`crate::AuditFilter::before`].
    pub fn cursor(&self) -> (i64, i64) {
        (self.time_ms, self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde text and the SQLite text must be the same string, or rows written by the store
    /// would not match JSON produced for the viewer.
    #[test]
    fn serde_text_matches_as_str_for_every_value() {
        for d in Decision::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), serde_json::json!(d.as_str()));
            assert_eq!(d.as_str().parse::<Decision>().unwrap(), *d);
        }
        for d in DecidedBy::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), serde_json::json!(d.as_str()));
            assert_eq!(d.as_str().parse::<DecidedBy>().unwrap(), *d);
        }
        for o in Outcome::ALL {
            assert_eq!(serde_json::to_value(o).unwrap(), serde_json::json!(o.as_str()));
            assert_eq!(o.as_str().parse::<Outcome>().unwrap(), *o);
        }
    }

    #[test]
    fn unknown_decision_lists_valid_values() {
        let err = "allow".parse::<Decision>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown decision `allow`; expected one of: allowed, denied, hidden, rate_limited, \
             approved, rejected, timed_out, cancelled, failed"
        );
    }

    #[test]
    fn vocabulary_is_the_design_vocabulary() {
        assert_eq!(
            Decision::NAMES,
            [
                "allowed",
                "denied",
                "hidden",
                "rate_limited",
                "approved",
                "rejected",
                "timed_out",
                "cancelled",
                "failed"
            ]
        );
        assert_eq!(DecidedBy::NAMES, ["policy", "user", "timeout", "client", "gateway"]);
        assert_eq!(Outcome::NAMES, ["ok", "tool_error", "failure", "cancelled"]);
    }
}
