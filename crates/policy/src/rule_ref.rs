//! Which part of a policy decided a call ([`RuleRef`]), and the stable text that names it in the
//! audit log's `rule` column, the prompt, `policy explain` and the logs.
//!
//! The evaluator hands the reference out typed, so a caller that needs the entry or the rule
//! behind a decision (the "always" write keeps the entry that asked and changes the rule that
//! asked) reads the fields; nothing parses the text back.

use std::fmt;

/// Which part of a policy decided a call. Displays (and serializes) as its stable name:
/// `hide: <pattern>`, `tools.<key>`, `tools.<key>.rules[<index>]`, `default`, `no policy file`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RuleRef {
    /// The first `hide` pattern, in file order, that matches the tool.
    Hide { pattern: String },
    /// The `tools` entry with this key (as written), by its own `action`: no rule of it held, or
    /// the call was refused before any rule (an argument key shadowing one the rules read).
    Entry { key: String },
    /// The argument rule at `index` (from 0) in the `rules` of the entry with this key.
    Rule { key: String, index: usize },
    /// The file's `default`: no entry matches the tool.
    Default,
    /// The server has no policy file: every call requires approval.
    NoPolicyFile,
}

impl RuleRef {
    /// The `tools` key of the entry that decided, itself or by one of its rules (the key rate
    /// limits count by); `None` for hide, default and no policy file.
    pub fn entry_key(&self) -> Option<&str> {
        match self {
            Self::Entry { key } | Self::Rule { key, .. } => Some(key),
            Self::Hide { .. } | Self::Default | Self::NoPolicyFile => None,
        }
    }

    /// The index of the argument rule that decided, if one did.
    pub fn rule_index(&self) -> Option<usize> {
        match self {
            Self::Rule { index, .. } => Some(*index),
            _ => None,
        }
    }
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hide { pattern } => write!(f, "hide: {pattern}"),
            Self::Entry { key } => write!(f, "tools.{key}"),
            Self::Rule { key, index } => write!(f, "tools.{key}.rules[{index}]"),
            Self::Default => f.write_str("default"),
            Self::NoPolicyFile => f.write_str("no policy file"),
        }
    }
}

/// As its text: the JSON that `policy explain --json` and the app show has always carried it so.
impl serde::Serialize for RuleRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn rule(key: &str, index: usize) -> RuleRef {
        RuleRef::Rule { key: key.into(), index }
    }

    /// The text is what the audit log's `rule` column has always held: every kind, including
    /// keys with dots, brackets and glob characters, which no one needs to parse any more.
    #[rstest]
    #[case::hide(RuleRef::Hide { pattern: "*_secret".into() }, "hide: *_secret")]
    #[case::entry(RuleRef::Entry { key: "vm_start".into() }, "tools.vm_start")]
    #[case::glob_entry(RuleRef::Entry { key: "pve_*".into() }, "tools.pve_*")]
    #[case::dotted_entry(RuleRef::Entry { key: "a.b".into() }, "tools.a.b")]
    #[case::rule(rule("write", 0), "tools.write.rules[0]")]
    #[case::dotted_rule(rule("a.b", 12), "tools.a.b.rules[12]")]
    #[case::escaped_key_rule(rule("get_\\*[x]", 1), "tools.get_\\*[x].rules[1]")]
    #[case::default(RuleRef::Default, "default")]
    #[case::no_policy_file(RuleRef::NoPolicyFile, "no policy file")]
    fn each_kind_displays_and_serializes_as_its_stable_text(#[case] rule: RuleRef, #[case] text: &str) {
        assert_eq!(rule.to_string(), text);
        assert_eq!(serde_json::to_value(&rule).unwrap(), serde_json::json!(text));
    }

    #[rstest]
    #[case::hide(RuleRef::Hide { pattern: "x".into() }, None, None)]
    #[case::entry(RuleRef::Entry { key: "a.b".into() }, Some("a.b"), None)]
    #[case::rule(rule("a.rules[1]", 2), Some("a.rules[1]"), Some(2))]
    #[case::default(RuleRef::Default, None, None)]
    #[case::no_policy_file(RuleRef::NoPolicyFile, None, None)]
    fn the_entry_and_rule_are_read_from_the_fields(
        #[case] rule: RuleRef,
        #[case] key: Option<&str>,
        #[case] index: Option<usize>,
    ) {
        assert_eq!((rule.entry_key(), rule.rule_index()), (key, index));
    }
}
