//! Why a call is decided the way it is: `portcullis policy explain` and the policy editor.
//!
//! An explanation is not a second evaluator. [`Compiled::explain`] asks the same
//! [`Compiled::lookup`] that [`Compiled::evaluate`] asks what decides the tool, and lets the same
//! [`Compiled::conclude`] decide it while recording each step it takes; what it adds is only
//! context the decision does not need: the glob keys that matched too and lost, and the `when`
//! objects as written.

use serde::Serialize;
use serde_json::Value;

use crate::condition::RequestFacts;
use crate::eval::{Compiled, Entry, Lookup, Step, Table};
use crate::uri::normalize_uri;
use crate::{Action, Door, Evaluation};

/// How a call is decided, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The section asked about; left out of the JSON for tools, as explanations were before
    /// there were other sections.
    #[serde(skip_serializing_if = "Door::is_tools")]
    pub door: Door,
    /// The tool asked about (at other doors: the resource URI as asked, the prompt name, or for a
    /// server request the name the caller passed, which nothing reads).
    pub tool: String,
    /// The decision itself, exactly as [`crate::Policy::evaluate_call`] returns it.
    pub evaluation: Evaluation,
    /// What was found for the tool before any rule was tried.
    pub matched: Matched,
    /// The entry's rules that were tried, in order; the last one held if a rule decided.
    pub rules: Vec<RuleTried>,
    /// The entry's own action and reason, which decide when no rule holds (`None` for hide and
    /// default).
    pub entry_action: Option<Action>,
    pub entry_reason: Option<String>,
    /// The arguments hold a key that differs only by case from one the rules read: refused
    /// before any rule was tried.
    pub shadowed: bool,
}

/// What a tool name matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Matched {
    /// A `hide` pattern: hiding wins over every entry.
    Hidden { pattern: String },
    /// The key equal to the name (a resource's in normal form; for a server request, its one
    /// entry); `globs` also matched and lost to it.
    Exact { key: String, beaten: Vec<GlobKey> },
    /// The most specific matching glob key; `beaten` also matched, in precedence order.
    Glob { key: GlobKey, beaten: Vec<GlobKey> },
    /// No entry: the file's `default` (or, without a file, "every call requires approval").
    Default,
}

/// A glob key and how specific it is (more literal characters win, then fewer wildcards, then
/// the key written first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GlobKey {
    pub key: String,
    pub literals: usize,
    pub wildcards: usize,
}

/// One rule of the entry, as it was tried.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleTried {
    pub index: usize,
    /// [`crate::RuleRef::Rule`] (`tools.<key>.rules[<i>]`) or [`crate::RuleRef::SectionRule`]
    /// (`resources.<key>.rules[<i>]`, …), serialized as its text.
    pub name: crate::RuleRef,
    /// The `when` object as written.
    pub when: Value,
    pub action: Action,
    /// Whether its `when` held (and so it decided).
    pub held: bool,
    /// When that rests on a reading of a value other than the value as sent (the string `"500"`
    /// read as the number 500, a relative path whose root is not known), which one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reading: Option<String>,
}

impl Compiled {
    /// Explains `name` at `door`; a resource URI is looked up in normal form, as it is decided.
    pub(crate) fn explain(&self, door: Door, name: &str, facts: &RequestFacts<'_>) -> Explanation {
        let normal = (door == Door::Resources).then(|| normalize_uri(name));
        let (lookup, looked_up) = match &normal {
            Some(Ok(uri)) => (self.lookup_in(door, uri.as_str()), uri.as_str()),
            // Refused before any lookup: the evaluator says why, by the default's name.
            Some(Err(_)) => (Lookup::Default, name),
            None => (self.lookup_in(door, name), name),
        };
        let mut steps = Vec::new();
        let evaluation = match normal {
            Some(Err(_)) => self.evaluate_in(door, name, facts),
            _ => self.conclude(lookup, facts, &mut |step| steps.push(step)),
        };
        let (matched, entry) = self.matched(lookup, self.table(door), looked_up);
        let mut shadowed = false;
        let mut rules = Vec::new();
        for step in steps {
            match step {
                Step::Shadowed => shadowed = true,
                Step::Rule { index, held } => {
                    if let Some(rule) = entry.and_then(|e| e.rules.get(index)) {
                        rules.push(RuleTried {
                            index,
                            name: rule.name.clone(),
                            when: rule.when.clone(),
                            action: rule.action,
                            held,
                            reading: rule.reading_note(facts, held),
                        });
                    }
                }
            }
        }
        Explanation {
            door,
            tool: name.to_owned(),
            evaluation,
            matched,
            rules,
            entry_action: entry.map(|e| e.action),
            entry_reason: entry.and_then(|e| e.reason.clone()),
            shadowed,
        }
    }

    /// What `lookup` found for `name` in `table` (`None` for server requests), with the globs
    /// that matched too and lost.
    fn matched<'c>(&'c self, lookup: Lookup<'c>, table: Option<&Table>, name: &str) -> (Matched, Option<&'c Entry>) {
        let glob_key = |index: usize| {
            let entry = table
                .and_then(|t| t.glob_entries.get(index))
                .and_then(|&e| table.and_then(|t| t.entries.get(e)));
            let pattern = table.and_then(|t| t.globs.get(index));
            GlobKey {
                key: entry.map(|e| e.key.clone()).unwrap_or_default(),
                literals: pattern.map_or(0, |p| p.literals),
                wildcards: pattern.map_or(0, |p| p.wildcards),
            }
        };
        let other_globs = |winner: Option<usize>| -> Vec<GlobKey> {
            table
                .into_iter()
                .flat_map(|t| t.globs.all_matches(name))
                .map(|(index, _)| index)
                .filter(|index| Some(*index) != winner)
                .map(glob_key)
                .collect()
        };
        match lookup {
            Lookup::Hidden(index) => {
                let pattern = self.hide.patterns.get(index).cloned().unwrap_or_default();
                (Matched::Hidden { pattern }, None)
            }
            Lookup::Entry { entry, glob: None } => (
                Matched::Exact {
                    key: entry.key.clone(),
                    beaten: other_globs(None),
                },
                Some(entry),
            ),
            Lookup::Entry {
                entry,
                glob: Some(index),
            } => (
                Matched::Glob {
                    key: glob_key(index),
                    beaten: other_globs(Some(index)),
                },
                Some(entry),
            ),
            Lookup::Default => (Matched::Default, None),
        }
    }
}

impl Explanation {
    /// The explanation as lines a person reads, the decision first.
    pub fn lines(&self) -> Vec<String> {
        let e = &self.evaluation;
        let mut lines = vec![format!("{}: {} (by {})", self.tool, action_word(e.action), e.rule)];
        match &self.matched {
            Matched::Hidden { pattern } => {
                lines.push(format!(
                    "hidden: the hide pattern {pattern:?} matches, and hiding wins over every entry"
                ));
            }
            Matched::Exact { key, beaten } => {
                lines.push(match self.door.server_request() {
                    Some(_) => format!("entry: {}", self.door),
                    None => format!("entry: {}[{key:?}], the exact name", self.door),
                });
                for glob in beaten {
                    lines.push(format!(
                        "  also matched, lost to the exact name: {}",
                        glob_text(self.door, glob)
                    ));
                }
            }
            Matched::Glob { key, beaten } => {
                lines.push(format!(
                    "entry: {}[{:?}], the most specific matching glob ({} literal characters, {} wildcards)",
                    self.door, key.key, key.literals, key.wildcards
                ));
                for glob in beaten {
                    let why = if (glob.literals, glob.wildcards) == (key.literals, key.wildcards) {
                        "as specific, written later"
                    } else {
                        "less specific"
                    };
                    lines.push(format!("  also matched, {why}: {}", glob_text(self.door, glob)));
                }
            }
            Matched::Default => {
                let none = match self.door.server_request() {
                    Some(name) => format!("server_requests has no {name} entry"),
                    None => format!("no entry in {} matches", self.door),
                };
                lines.push(format!(
                    "{none}: the {} decides ({})",
                    if e.rule == crate::RuleRef::NoPolicyFile {
                        "gateway (no policy file)"
                    } else {
                        "file's default"
                    },
                    action_word(e.action)
                ));
            }
        }
        if self.shadowed {
            lines.push("refused before any rule: an argument key differs only by case from one the rules read".into());
        }
        for rule in &self.rules {
            lines.push(format!(
                "rule {} ({}): when {} -> {}: {}",
                rule.index,
                rule.name,
                rule.when,
                action_word(rule.action),
                if rule.held { "holds, decides" } else { "does not hold" }
            ));
            if let Some(reading) = &rule.reading {
                lines.push(format!("  read as a server reads it: {reading}"));
            }
        }
        let rule_decided = self.rules.last().is_some_and(|r| r.held);
        if let (Some(action), false, false) = (self.entry_action, rule_decided, self.shadowed) {
            let which = if self.rules.is_empty() {
                "the entry has no rules"
            } else {
                "no rule holds"
            };
            lines.push(format!(
                "{which}: the entry's own action decides ({})",
                action_word(action)
            ));
        }
        if let Some(reason) = &e.reason {
            lines.push(format!("reason: {reason}"));
        }
        if let Some(limit) = e.rate_limit {
            lines.push(format!(
                "rate limit: {} calls per {} s per session",
                limit.max, limit.window_secs
            ));
        }
        if let Some(secs) = e.approval_timeout_secs {
            lines.push(format!("approval timeout: {secs} s"));
        }
        lines
    }
}

fn glob_text(door: Door, glob: &GlobKey) -> String {
    format!(
        "{door}[{:?}] ({} literal characters, {} wildcards)",
        glob.key, glob.literals, glob.wildcards
    )
}

fn action_word(action: Action) -> &'static str {
    match action {
        Action::Allow => "allow",
        Action::Deny => "deny",
        Action::Hide => "hidden",
        Action::RequireApproval => "require_approval",
    }
}
