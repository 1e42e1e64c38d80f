//! What came back for a forwarded request (issue 33): a bounded, redacted excerpt of the answer
//! and what the gate found in it, in the `answers` table beside the decision row (same `id`).

use serde::{Deserialize, Serialize};

/// What the gate kept of one answer. Everything in it is already redacted: the gate builds it
/// from the inspected answer, and nothing of an answer is written before that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnswerRecord {
    /// The size of the answer as the server sent it, in bytes.
    pub bytes: i64,
    /// The first texts of the answer, secrets replaced by `[redacted]`, hidden characters and
    /// escapes written out (`\u{200B}`), cut at the configured size.
    pub excerpt: String,
    /// Each finding, in the order of the answer.
    pub findings: Vec<AnswerFinding>,
}

/// One thing found in an answer, and what was done with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnswerFinding {
    /// `invisible`, `escape`, `secret` or `instruction`.
    pub kind: String,
    /// `strip`, `redact`, `flag` or `hold` (what the policy said), or, for a held answer, what
    /// the person chose: `passed` or `refused`.
    pub action: String,
    pub location: FindingLocation,
    /// The rule that fired: "tag characters", "bidi override", "AWS access key", …
    pub what: String,
    /// The text around it, neutralized and redacted.
    pub excerpt: String,
    /// Where it sits in [`AnswerRecord::excerpt`] (byte offset and length), when it is within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub mark: Option<(usize, usize)>,
}

/// Where in the answer: the JSON pointer of the text (`/content/0/text`), and the byte range in
/// that text as the server sent it (what a strip took out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingLocation {
    pub path: String,
    pub offset: usize,
    #[serde(default)]
    pub len: usize,
}
