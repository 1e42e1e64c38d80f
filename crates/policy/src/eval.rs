//! The compiled policy and the decision for one call.
//!
//! Everything a decision needs is prepared at load: exact tool names sit in a `HashMap`,
//! glob keys in one `PatternSet` whose insertion order *is* the precedence order, each rule knows
//! its [`RuleRef`]. Deciding a call is then a hash lookup (or a scan of the globs, most specific
//! first), a walk over the entry's rules, and cloning the few strings the [`Evaluation`] owns.

use std::collections::HashMap;

use serde_json::Value;

use crate::condition::{CallFacts, Condition, Quantifier};
use crate::model::{Risk, ToolClass};
use crate::pattern::PatternSet;
use crate::{Action, Annotations, Evaluation, RateLimit, RuleRef};

/// A validated, compiled policy. Shared behind an `Arc` by [`crate::Policy`].
#[derive(Debug)]
pub(crate) struct Compiled {
    /// What a tool that matches no entry gets.
    pub(crate) default: Action,
    /// The `rule` reported for a default decision.
    pub(crate) default_rule: RuleRef,
    /// File-level approval timeout, used when the entry has none.
    pub(crate) approval_timeout: Option<u64>,
    /// Extra audit redaction keys, lowercased.
    pub(crate) redact: Vec<String>,
    pub(crate) hide: HideList,
    pub(crate) tools: ToolTable,
}

/// The `hide` patterns, in file order.
#[derive(Debug)]
pub(crate) struct HideList {
    /// One glob per pattern, same indices as `patterns`.
    pub(crate) set: PatternSet,
    /// The patterns as written.
    pub(crate) patterns: Vec<String>,
}

/// The `tools` entries and the indexes that find them.
#[derive(Debug)]
pub(crate) struct ToolTable {
    /// Entries in file order.
    pub(crate) entries: Vec<Entry>,
    /// Exact tool name → index into `entries`.
    pub(crate) exact: HashMap<String, usize>,
    /// Glob keys, added most specific first, so the lowest matching index wins.
    pub(crate) globs: PatternSet,
    /// Glob index in `globs` → index into `entries`.
    pub(crate) glob_entries: Vec<usize>,
}

/// One compiled `tools` entry.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The key as written: the counter key for rate limits.
    pub(crate) key: String,
    pub(crate) action: Action,
    pub(crate) reason: Option<String>,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) approval_timeout: Option<u64>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) class: Option<ToolClass>,
    pub(crate) risk: Option<Risk>,
}

/// One compiled argument rule of an entry.
#[derive(Debug)]
pub(crate) struct Rule {
    /// [`RuleRef::Rule`] with the entry's key and this rule's index.
    pub(crate) name: RuleRef,
    /// The `when` object as written, for explanations.
    pub(crate) when: Value,
    pub(crate) conditions: Vec<Condition>,
    pub(crate) action: Action,
    pub(crate) reason: Option<String>,
}

impl Compiled {
    /// A policy with no entries that answers every call with `default`, reported as `rule`.
    pub(crate) fn only_default(default: Action, rule: RuleRef) -> Compiled {
        Compiled {
            default,
            default_rule: rule,
            approval_timeout: None,
            redact: Vec::new(),
            hide: HideList {
                set: PatternSet::empty(),
                patterns: Vec::new(),
            },
            tools: ToolTable {
                entries: Vec::new(),
                exact: HashMap::new(),
                globs: PatternSet::empty(),
                glob_entries: Vec::new(),
            },
        }
    }

    /// Index of the first `hide` pattern matching `tool`.
    pub(crate) fn hidden_by(&self, tool: &str) -> Option<usize> {
        self.hide.set.first_match(tool)
    }

    /// What decides `tool` before any rule is tried: a `hide` pattern, an entry (found by its
    /// exact key, or as the most specific matching glob), or the default.
    pub(crate) fn lookup(&self, tool: &str) -> Lookup<'_> {
        if let Some(index) = self.hidden_by(tool) {
            return Lookup::Hidden(index);
        }
        let table = &self.tools;
        let (index, glob) = match table.exact.get(tool) {
            Some(&index) => (index, None),
            None => match table.globs.first_match(tool) {
                Some(glob) => match table.glob_entries.get(glob) {
                    Some(&index) => (index, Some(glob)),
                    None => return Lookup::Default,
                },
                None => return Lookup::Default,
            },
        };
        match table.entries.get(index) {
            Some(entry) => Lookup::Entry { entry, glob },
            None => Lookup::Default,
        }
    }

    /// The entry whose key is exactly `key`, as reported in [`Evaluation::entry`].
    pub(crate) fn entry_by_key(&self, key: &str) -> Option<&Entry> {
        match self.tools.exact.get(key) {
            Some(&index) => self.tools.entries.get(index),
            None => self.tools.entries.iter().find(|entry| entry.key == key),
        }
    }

    pub(crate) fn evaluate(&self, tool: &str, facts: &CallFacts<'_>) -> Evaluation {
        self.conclude(self.lookup(tool), facts, &mut |_| {})
    }

    /// The decision once `lookup` found what decides; every step taken is told to `trace`
    /// (nothing, for [`Compiled::evaluate`]; the explanation's record, for `explain`). The one
    /// place a decision is made.
    pub(crate) fn conclude(
        &self,
        lookup: Lookup<'_>,
        facts: &CallFacts<'_>,
        trace: &mut dyn FnMut(Step),
    ) -> Evaluation {
        match lookup {
            Lookup::Hidden(index) => Evaluation {
                action: Action::Hide,
                rule: RuleRef::Hide {
                    pattern: self.hide.patterns.get(index).cloned().unwrap_or_default(),
                },
                reason: None,
                rate_limit: None,
                approval_timeout_secs: None,
            },
            Lookup::Entry { entry, .. } => self.decide(entry, facts, trace),
            Lookup::Default => Evaluation {
                action: self.default,
                rule: self.default_rule.clone(),
                reason: None,
                rate_limit: None,
                approval_timeout_secs: self.timeout_for(self.default, None),
            },
        }
    }

    fn decide(&self, entry: &Entry, facts: &CallFacts<'_>, trace: &mut dyn FnMut(Step)) -> Evaluation {
        if let Some(refusal) = shadowed(entry, facts.arguments) {
            trace(Step::Shadowed);
            return refusal;
        }
        let matched = entry.rules.iter().enumerate().find(|(index, rule)| {
            let held = rule.holds(facts);
            trace(Step::Rule { index: *index, held });
            held
        });
        let (action, rule, reason) = match matched {
            Some((_, rule)) => (rule.action, rule.name.clone(), &rule.reason),
            None => (entry.action, entry.rule(), &entry.reason),
        };
        Evaluation {
            action,
            rule,
            reason: reason.clone(),
            rate_limit: if action == Action::Allow {
                entry.rate_limit
            } else {
                None
            },
            approval_timeout_secs: self.timeout_for(action, entry.approval_timeout),
        }
    }

    /// The approval timeout, reported only for decisions that wait for a person.
    fn timeout_for(&self, action: Action, entry_timeout: Option<u64>) -> Option<u64> {
        if action == Action::RequireApproval {
            entry_timeout.or(self.approval_timeout)
        } else {
            None
        }
    }
}

/// What decides a tool before its entry's rules: see [`Compiled::lookup`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lookup<'a> {
    /// The `hide` pattern at this index.
    Hidden(usize),
    /// A `tools` entry; `glob`: its index in the glob precedence order when a glob key matched.
    Entry {
        entry: &'a Entry,
        glob: Option<usize>,
    },
    Default,
}

/// One step of deciding a call within an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The arguments hold a key that shadows one the rules read: refused before any rule.
    Shadowed,
    /// Rule `index` was tried; `held`: its `when` held (and it decided).
    Rule { index: usize, held: bool },
}

impl Rule {
    /// Whether this rule's `when` holds: for a deny or require_approval rule, on some reading
    /// of each value it reads; for an allow rule, on every reading (the stricter decision either
    /// way, see [`Quantifier`]).
    pub(crate) fn holds(&self, facts: &CallFacts<'_>) -> bool {
        let quantifier = Quantifier::for_action(self.action);
        self.conditions.iter().all(|c| c.holds(facts, quantifier))
    }

    /// When this rule's outcome (`held` or not) rests on a reading of a value other than the value
    /// as sent, which readings: for explanations. A rule that held as a deny rule names the
    /// readings that matched; an allow rule that did not hold, the reading that failed.
    pub(crate) fn reading_note(&self, facts: &CallFacts<'_>, held: bool) -> Option<String> {
        let quantifier = Quantifier::for_action(self.action);
        let notes: Vec<String> = match (quantifier, held) {
            (Quantifier::Some, true) => self
                .conditions
                .iter()
                .filter_map(|c| c.reading_note(facts, quantifier))
                .collect(),
            (Quantifier::Every, false) => self
                .conditions
                .iter()
                .find(|c| !c.holds(facts, quantifier))
                .and_then(|c| c.reading_note(facts, quantifier))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

impl Entry {
    /// The reference to this entry's own action.
    pub(crate) fn rule(&self) -> RuleRef {
        RuleRef::Entry { key: self.key.clone() }
    }

    pub(crate) fn annotations(&self) -> Annotations {
        Annotations {
            class: self.class,
            risk: self.risk,
        }
    }
}

/// A call whose arguments hold a key that shadows one the entry's rules read is denied: the
/// policy and the server could read two different values (see `ArgumentPath::shadowed_key`).
fn shadowed(entry: &Entry, arguments: &Value) -> Option<Evaluation> {
    let (found, read) = entry
        .rules
        .iter()
        .flat_map(|rule| &rule.conditions)
        .find_map(|condition| condition.shadowed_key(arguments))?;
    Some(Evaluation {
        action: Action::Deny,
        rule: entry.rule(),
        reason: Some(format!(
            "argument key {found:?} differs only by case from {read:?}, which this policy reads; \
             servers disagree on which one counts, so the call is refused (send {read:?} only)"
        )),
        rate_limit: None,
        approval_timeout_secs: None,
    })
}
