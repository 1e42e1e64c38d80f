//! Which part of a policy decided a call ([`RuleRef`]), and the stable text that names it in the
//! audit log's `rule` column, the prompt, `policy explain` and the logs; which section of the
//! file decides a kind of request ([`Door`]).
//!
//! The evaluator hands the reference out typed, so a caller that needs the entry or the rule
//! behind a decision (the "always" write keeps the entry that asked and changes the rule that
//! asked) reads the fields; nothing parses the text back.

use std::fmt;

/// A kind of request a policy decides, and the section of the file that decides it.
// Deserialize too, so the gateway can carry a door over its own links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    /// `tools/call`, by the `tools` section (and `hide`).
    Tools,
    /// `resources/read` and `resources/subscribe`, by the `resources` section, keyed by URI.
    Resources,
    /// `prompts/get`, by the `prompts` section, keyed by prompt name.
    Prompts,
    /// The server's `sampling/createMessage`, by `server_requests.sampling`.
    Sampling,
    /// The server's `elicitation/create`, by `server_requests.elicitation`.
    Elicitation,
    /// The server's `roots/list`, by `server_requests.roots`.
    Roots,
}

impl Door {
    /// Every door, in the order the sections are documented.
    pub const ALL: [Door; 6] = [
        Door::Tools,
        Door::Resources,
        Door::Prompts,
        Door::Sampling,
        Door::Elicitation,
        Door::Roots,
    ];

    /// The top-level section of the file: `tools`, `resources`, `prompts` or `server_requests`.
    pub fn section(self) -> &'static str {
        match self {
            Door::Tools => "tools",
            Door::Resources => "resources",
            Door::Prompts => "prompts",
            Door::Sampling | Door::Elicitation | Door::Roots => "server_requests",
        }
    }

    /// For a server request, its one entry's field in `server_requests` (`sampling`, …); `None`
    /// for the keyed sections.
    pub fn server_request(self) -> Option<&'static str> {
        match self {
            Door::Sampling => Some("sampling"),
            Door::Elicitation => Some("elicitation"),
            Door::Roots => Some("roots"),
            Door::Tools | Door::Resources | Door::Prompts => None,
        }
    }

    /// Whether this is the `tools` door (kept out of serialized explanations, which predate doors).
    pub fn is_tools(&self) -> bool {
        *self == Door::Tools
    }
}

impl fmt::Display for Door {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.server_request() {
            Some(name) => write!(f, "server_requests.{name}"),
            None => f.write_str(self.section()),
        }
    }
}

/// Which part of a policy decided a call. Displays (and serializes) as its stable name:
/// `hide: <pattern>`, `tools.<key>`, `tools.<key>.rules[<index>]`, `default`, `no policy file`;
/// for the other sections `resources.<key>`, `prompts.<key>.rules[<index>]`,
/// `server_requests.sampling`, `server_requests.elicitation.rules[<index>]`.
///
/// The `tools` variants predate the other sections and keep their shape, so code that builds
/// or matches them is unchanged; the other sections have their own variants, with the [`Door`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RuleRef {
    /// The first `hide` pattern, in file order, that matches the tool.
    Hide { pattern: String },
    /// The `tools` entry with this key (as written), by its own `action`: no rule of it held, or
    /// the call was refused before any rule (an argument key shadowing one the rules read).
    Entry { key: String },
    /// The argument rule at `index` (from 0) in the `rules` of the entry with this key.
    Rule { key: String, index: usize },
    /// An entry of another section than `tools`, by its own `action` (`hide` included). `key` is
    /// the key as written (`resources`, `prompts`), or for a server request its field name
    /// (`sampling`, `elicitation`, `roots`). Built with [`RuleRef::entry`], which gives the
    /// `tools` door its own [`RuleRef::Entry`].
    SectionEntry { door: Door, key: String },
    /// The rule at `index` of the entry of another section than `tools`; see
    /// [`RuleRef::SectionEntry`].
    SectionRule { door: Door, key: String, index: usize },
    /// The file's `default`: no entry matches the tool (or the resource, prompt or server
    /// request: an absent section names nothing).
    Default,
    /// The server has no policy file: every call requires approval.
    NoPolicyFile,
}

impl RuleRef {
    /// The reference to the entry `key` of `door`'s section: [`RuleRef::Entry`] for tools.
    pub fn entry(door: Door, key: String) -> RuleRef {
        match door {
            Door::Tools => Self::Entry { key },
            door => Self::SectionEntry { door, key },
        }
    }

    /// The reference to rule `index` of the entry `key` of `door`'s section: [`RuleRef::Rule`]
    /// for tools.
    pub fn rule(door: Door, key: String, index: usize) -> RuleRef {
        match door {
            Door::Tools => Self::Rule { key, index },
            door => Self::SectionRule { door, key, index },
        }
    }

    /// The key of the entry that decided, itself or by one of its rules, within its section (see
    /// [`RuleRef::door`]; rate limits count by the two together); `None` for hide, default and
    /// no policy file.
    pub fn entry_key(&self) -> Option<&str> {
        match self {
            Self::Entry { key }
            | Self::Rule { key, .. }
            | Self::SectionEntry { key, .. }
            | Self::SectionRule { key, .. } => Some(key),
            Self::Hide { .. } | Self::Default | Self::NoPolicyFile => None,
        }
    }

    /// The index of the rule that decided, if one did.
    pub fn rule_index(&self) -> Option<usize> {
        match self {
            Self::Rule { index, .. } | Self::SectionRule { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// The section whose entry or hide pattern decided; `None` for default and no policy file
    /// (which decide in every section).
    pub fn door(&self) -> Option<Door> {
        match self {
            Self::Hide { .. } | Self::Entry { .. } | Self::Rule { .. } => Some(Door::Tools),
            Self::SectionEntry { door, .. } | Self::SectionRule { door, .. } => Some(*door),
            Self::Default | Self::NoPolicyFile => None,
        }
    }
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hide { pattern } => write!(f, "hide: {pattern}"),
            Self::Entry { key } => write!(f, "tools.{key}"),
            Self::Rule { key, index } => write!(f, "tools.{key}.rules[{index}]"),
            Self::SectionEntry { door, key } => write!(f, "{}.{key}", door.section()),
            Self::SectionRule { door, key, index } => write!(f, "{}.{key}.rules[{index}]", door.section()),
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
    #[case::resource(RuleRef::entry(Door::Resources, "file:///tmp/*".into()), "resources.file:///tmp/*")]
    #[case::resource_rule(RuleRef::rule(Door::Resources, "file:///x".into(), 1), "resources.file:///x.rules[1]")]
    #[case::prompt(RuleRef::entry(Door::Prompts, "review".into()), "prompts.review")]
    #[case::prompt_rule(RuleRef::rule(Door::Prompts, "a.b".into(), 0), "prompts.a.b.rules[0]")]
    #[case::sampling(RuleRef::entry(Door::Sampling, "sampling".into()), "server_requests.sampling")]
    #[case::sampling_rule(RuleRef::rule(Door::Sampling, "sampling".into(), 2), "server_requests.sampling.rules[2]")]
    #[case::elicitation(RuleRef::entry(Door::Elicitation, "elicitation".into()), "server_requests.elicitation")]
    #[case::roots_rule(RuleRef::rule(Door::Roots, "roots".into(), 0), "server_requests.roots.rules[0]")]
    #[case::tools_by_door(RuleRef::entry(Door::Tools, "vm_start".into()), "tools.vm_start")]
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
    #[case::section_entry(RuleRef::entry(Door::Prompts, "p".into()), Some("p"), None)]
    #[case::section_rule(RuleRef::rule(Door::Sampling, "sampling".into(), 3), Some("sampling"), Some(3))]
    fn the_entry_and_rule_are_read_from_the_fields(
        #[case] rule: RuleRef,
        #[case] key: Option<&str>,
        #[case] index: Option<usize>,
    ) {
        assert_eq!((rule.entry_key(), rule.rule_index()), (key, index));
    }
}

#[cfg(test)]
mod door_tests {
    use super::*;
    use rstest::rstest;

    /// `RuleRef::entry` and `RuleRef::rule` give tools the variants other crates build and match.
    #[test]
    fn tools_keep_their_variants() {
        assert_eq!(
            RuleRef::entry(Door::Tools, "a".into()),
            RuleRef::Entry { key: "a".into() }
        );
        assert_eq!(
            RuleRef::rule(Door::Tools, "a".into(), 1),
            RuleRef::Rule {
                key: "a".into(),
                index: 1
            }
        );
    }

    #[rstest]
    #[case::hide(RuleRef::Hide { pattern: "x".into() }, Some(Door::Tools))]
    #[case::tools(RuleRef::Entry { key: "x".into() }, Some(Door::Tools))]
    #[case::resources(RuleRef::rule(Door::Resources, "x".into(), 0), Some(Door::Resources))]
    #[case::roots(RuleRef::entry(Door::Roots, "roots".into()), Some(Door::Roots))]
    #[case::default(RuleRef::Default, None)]
    #[case::no_file(RuleRef::NoPolicyFile, None)]
    fn the_door_is_read_from_the_variant(#[case] rule: RuleRef, #[case] door: Option<Door>) {
        assert_eq!(rule.door(), door);
    }

    #[rstest]
    #[case(Door::Tools, "tools")]
    #[case(Door::Resources, "resources")]
    #[case(Door::Prompts, "prompts")]
    #[case(Door::Sampling, "server_requests.sampling")]
    #[case(Door::Elicitation, "server_requests.elicitation")]
    #[case(Door::Roots, "server_requests.roots")]
    fn doors_display_as_their_place_in_the_file(#[case] door: Door, #[case] text: &str) {
        assert_eq!(door.to_string(), text);
    }
}
