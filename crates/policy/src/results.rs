//! `results`: what the gate does with what it finds in an answer before the agent reads it
//! (issue 33). Written at the top level of a file and in any entry; the entry's fields win, field
//! by field, and a field neither names takes the gate's default:
//!
//! | finding        | default | choices               |
//! |----------------|---------|-----------------------|
//! | `invisible`    | strip   | strip, flag, hold     |
//! | `escapes`      | strip   | strip, flag, hold     |
//! | `secrets`      | flag    | redact, flag, hold    |
//! | `instructions` | flag    | flag, hold            |
//!
//! Stripping what hides text is safe by default (real text that needs those characters passes
//! the inspector's rules untouched); replacing a secret changes what a tool meant to return, so
//! it is flagged unless the person chose `redact`.

use serde::Serialize;

/// What is done with one kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Treatment {
    /// Removed from the answer (invisible characters, escapes).
    Strip,
    /// Replaced by `[redacted]` (secrets).
    Redact,
    /// Passed as it came, and recorded in the audit.
    Flag,
    /// The answer waits for a person, who passes it to the agent or refuses it.
    Hold,
}

impl Treatment {
    /// Its spelling in a policy file and the audit, as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            Treatment::Strip => "strip",
            Treatment::Redact => "redact",
            Treatment::Flag => "flag",
            Treatment::Hold => "hold",
        }
    }
}

/// What is done with each kind of finding, for one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResultActions {
    pub invisible: Treatment,
    pub escapes: Treatment,
    pub secrets: Treatment,
    pub instructions: Treatment,
}

impl Default for ResultActions {
    fn default() -> Self {
        ResultActions {
            invisible: Treatment::Strip,
            escapes: Treatment::Strip,
            secrets: Treatment::Flag,
            instructions: Treatment::Flag,
        }
    }
}

impl ResultActions {
    /// Whether any finding would make the answer wait for a person.
    pub fn may_hold(self) -> bool {
        [self.invisible, self.escapes, self.secrets, self.instructions].contains(&Treatment::Hold)
    }
}

/// A `results` object as written: the fields it names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PartialResults {
    pub(crate) invisible: Option<Treatment>,
    pub(crate) escapes: Option<Treatment>,
    pub(crate) secrets: Option<Treatment>,
    pub(crate) instructions: Option<Treatment>,
}

impl PartialResults {
    /// These fields where named, else `base`'s.
    pub(crate) fn over(self, base: PartialResults) -> PartialResults {
        PartialResults {
            invisible: self.invisible.or(base.invisible),
            escapes: self.escapes.or(base.escapes),
            secrets: self.secrets.or(base.secrets),
            instructions: self.instructions.or(base.instructions),
        }
    }

    /// With the defaults where nothing was named.
    pub(crate) fn resolved(self) -> ResultActions {
        let d = ResultActions::default();
        ResultActions {
            invisible: self.invisible.unwrap_or(d.invisible),
            escapes: self.escapes.unwrap_or(d.escapes),
            secrets: self.secrets.unwrap_or(d.secrets),
            instructions: self.instructions.unwrap_or(d.instructions),
        }
    }
}

/// The fields of `results`, in documentation order, with the choices each takes.
pub(crate) const RESULTS_FIELDS: [(&str, &[(&str, Treatment)]); 4] = [
    ("invisible", &STRIP_FLAG_HOLD),
    ("escapes", &STRIP_FLAG_HOLD),
    ("secrets", &REDACT_FLAG_HOLD),
    ("instructions", &FLAG_HOLD),
];

const STRIP_FLAG_HOLD: [(&str, Treatment); 3] = [
    ("strip", Treatment::Strip),
    ("flag", Treatment::Flag),
    ("hold", Treatment::Hold),
];
const REDACT_FLAG_HOLD: [(&str, Treatment); 3] = [
    ("redact", Treatment::Redact),
    ("flag", Treatment::Flag),
    ("hold", Treatment::Hold),
];
const FLAG_HOLD: [(&str, Treatment); 2] = [("flag", Treatment::Flag), ("hold", Treatment::Hold)];

impl PartialResults {
    /// Sets the field `name` (one of [`RESULTS_FIELDS`]).
    pub(crate) fn set(&mut self, name: &str, treatment: Treatment) {
        match name {
            "invisible" => self.invisible = Some(treatment),
            "escapes" => self.escapes = Some(treatment),
            "secrets" => self.secrets = Some(treatment),
            _ => self.instructions = Some(treatment),
        }
    }
}
