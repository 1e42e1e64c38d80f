//! The compiled policy and the decision for one call.
//!
//! Everything a decision needs is prepared at load: exact tool names sit in a `HashMap`,
//! glob keys in one `PatternSet` whose insertion order *is* the precedence order, each rule knows
//! its [`RuleRef`]. Deciding a call is then a hash lookup (or a scan of the globs, most specific
//! first), a walk over the entry's rules, and cloning the few strings the [`Evaluation`] owns.
//!
//! The `resources` and `prompts` sections are tables of the same kind as `tools` (a resource's
//! exact keys indexed by their normal form), and each `server_requests` field is one entry; all
//! of them are decided by the same code, which only the [`Door`] tells apart.

use std::collections::HashMap;

use serde_json::Value;

use crate::condition::{Condition, Quantifier, RequestFacts};
use crate::model::{Risk, ToolClass};
use crate::pattern::PatternSet;
use crate::results::{PartialResults, ResultActions};
use crate::uri::normalize_uri;
use crate::{Action, Annotations, Door, Evaluation, RateLimit, RuleRef};

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
    pub(crate) tools: Table,
    /// Keyed by URI; exact keys indexed by their normal form.
    pub(crate) resources: Table,
    pub(crate) prompts: Table,
    pub(crate) server_requests: ServerRequests,
    /// The file's `results`, under every entry's own.
    pub(crate) results: PartialResults,
}

/// The `server_requests` entries; `None` where the file has none (the default decides).
#[derive(Debug, Default)]
pub(crate) struct ServerRequests {
    pub(crate) sampling: Option<Entry>,
    pub(crate) elicitation: Option<Entry>,
    pub(crate) roots: Option<Entry>,
}

/// The `hide` patterns, in file order.
#[derive(Debug)]
pub(crate) struct HideList {
    /// One glob per pattern, same indices as `patterns`.
    pub(crate) set: PatternSet,
    /// The patterns as written.
    pub(crate) patterns: Vec<String>,
}

/// The entries of a keyed section (`tools`, `resources`, `prompts`) and the indexes that find them.
#[derive(Debug)]
pub(crate) struct Table {
    /// Entries in file order.
    pub(crate) entries: Vec<Entry>,
    /// Exact name (a resource's in normal form) → index into `entries`.
    pub(crate) exact: HashMap<String, usize>,
    /// Glob keys, added most specific first, so the lowest matching index wins.
    pub(crate) globs: PatternSet,
    /// Glob index in `globs` → index into `entries`.
    pub(crate) glob_entries: Vec<usize>,
}

impl Table {
    pub(crate) fn empty() -> Table {
        Table {
            entries: Vec::new(),
            exact: HashMap::new(),
            globs: PatternSet::empty(),
            glob_entries: Vec::new(),
        }
    }

    /// The entry with `name` as its exact key, else the most specific matching glob's.
    fn lookup(&self, name: &str) -> Lookup<'_> {
        let (index, glob) = match self.exact.get(name) {
            Some(&index) => (index, None),
            None => match self.globs.first_match(name) {
                Some(glob) => match self.glob_entries.get(glob) {
                    Some(&index) => (index, Some(glob)),
                    None => return Lookup::Default,
                },
                None => return Lookup::Default,
            },
        };
        match self.entries.get(index) {
            Some(entry) => Lookup::Entry { entry, glob },
            None => Lookup::Default,
        }
    }

    fn by_key(&self, key: &str) -> Option<&Entry> {
        match self.exact.get(key) {
            Some(&index) => self.entries.get(index),
            None => self.entries.iter().find(|entry| entry.key == key),
        }
    }
}

/// One compiled entry of any section.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The section it is in.
    pub(crate) door: Door,
    /// The key as written (for a server request, its field name): the counter key for rate
    /// limits, within the door.
    pub(crate) key: String,
    pub(crate) action: Action,
    pub(crate) reason: Option<String>,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) approval_timeout: Option<u64>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) class: Option<ToolClass>,
    pub(crate) risk: Option<Risk>,
    /// The entry's `results` fields; the file's fill the rest.
    pub(crate) results: PartialResults,
}

/// One compiled argument rule of an entry.
#[derive(Debug)]
pub(crate) struct Rule {
    /// [`RuleRef::Rule`] (or [`RuleRef::SectionRule`]) with the entry's key and this rule's index.
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
            tools: Table::empty(),
            resources: Table::empty(),
            prompts: Table::empty(),
            server_requests: ServerRequests::default(),
            results: PartialResults::default(),
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
        self.tools.lookup(tool)
    }

    /// What decides `name` at `door` before any rule is tried: for tools, [`Compiled::lookup`];
    /// for resources (`name` in normal form) and prompts, their table's entry; for a server
    /// request, its entry. No entry: the default, in every section.
    pub(crate) fn lookup_in(&self, door: Door, name: &str) -> Lookup<'_> {
        match door {
            Door::Tools => self.lookup(name),
            Door::Resources | Door::Prompts => self.table(door).map_or(Lookup::Default, |t| t.lookup(name)),
            Door::Sampling | Door::Elicitation | Door::Roots => self
                .server_request(door)
                .map_or(Lookup::Default, |entry| Lookup::Entry { entry, glob: None }),
        }
    }

    /// The keyed table of `door`'s section; `None` for server requests.
    pub(crate) fn table(&self, door: Door) -> Option<&Table> {
        match door {
            Door::Tools => Some(&self.tools),
            Door::Resources => Some(&self.resources),
            Door::Prompts => Some(&self.prompts),
            Door::Sampling | Door::Elicitation | Door::Roots => None,
        }
    }

    fn server_request(&self, door: Door) -> Option<&Entry> {
        let requests = &self.server_requests;
        match door {
            Door::Sampling => requests.sampling.as_ref(),
            Door::Elicitation => requests.elicitation.as_ref(),
            Door::Roots => requests.roots.as_ref(),
            Door::Tools | Door::Resources | Door::Prompts => None,
        }
    }

    /// The `tools` entry whose key is exactly `key`, as reported in [`Evaluation::entry`].
    pub(crate) fn entry_by_key(&self, key: &str) -> Option<&Entry> {
        self.entry_in(Door::Tools, key)
    }

    /// The entry of `door`'s section whose key is exactly `key` (for a server request, its field
    /// name).
    pub(crate) fn entry_in(&self, door: Door, key: &str) -> Option<&Entry> {
        match self.table(door) {
            Some(table) => table.by_key(key),
            None => self.server_request(door).filter(|entry| entry.key == key),
        }
    }

    pub(crate) fn evaluate(&self, tool: &str, facts: &RequestFacts<'_>) -> Evaluation {
        self.conclude(self.lookup(tool), facts, &mut |_| {})
    }

    /// The decision for `name` at `door`. A resource URI is brought to its normal form first
    /// (idempotent for one already in it); one that cannot be is refused, by the default's name
    /// since no entry can match it.
    pub(crate) fn evaluate_in(&self, door: Door, name: &str, facts: &RequestFacts<'_>) -> Evaluation {
        if door != Door::Resources {
            return self.conclude(self.lookup_in(door, name), facts, &mut |_| {});
        }
        match normalize_uri(name) {
            Ok(uri) => self.conclude(self.lookup_in(door, uri.as_str()), facts, &mut |_| {}),
            Err(problem) => Evaluation {
                action: Action::Deny,
                rule: self.default_rule.clone(),
                reason: Some(format!("the resource URI {name:?} is refused: it {problem}")),
                rate_limit: None,
                approval_timeout_secs: None,
            },
        }
    }

    /// What is done with findings in the answer to a request for `name` at `door`: the entry's
    /// `results` fields, then the file's, then the defaults. Rules do not change it.
    pub(crate) fn results_in(&self, door: Door, name: &str) -> ResultActions {
        let lookup = match door {
            Door::Resources => match normalize_uri(name) {
                Ok(uri) => return self.results_of(self.lookup_in(door, uri.as_str())),
                Err(_) => Lookup::Default,
            },
            _ => self.lookup_in(door, name),
        };
        self.results_of(lookup)
    }

    fn results_of(&self, lookup: Lookup<'_>) -> ResultActions {
        match lookup {
            Lookup::Entry { entry, .. } => entry.results.over(self.results).resolved(),
            _ => self.results.resolved(),
        }
    }

    /// Whether `name` is left out of `door`'s list: a tool matching `hide`, or a resource or
    /// prompt whose entry's action is "hide". A resource URI that cannot be normalized is hidden
    /// too: reading it would be refused.
    pub(crate) fn is_hidden_in(&self, door: Door, name: &str) -> bool {
        let lookup = match door {
            Door::Tools => return self.hidden_by(name).is_some(),
            Door::Resources => match normalize_uri(name) {
                Ok(uri) => self.lookup_in(door, uri.as_str()),
                Err(_) => return true,
            },
            _ => self.lookup_in(door, name),
        };
        matches!(lookup, Lookup::Entry { entry, .. } if entry.action == Action::Hide)
    }

    /// The decision once `lookup` found what decides; every step taken is told to `trace`
    /// (nothing, for [`Compiled::evaluate`]; the explanation's record, for `explain`). The one
    /// place a decision is made.
    pub(crate) fn conclude(
        &self,
        lookup: Lookup<'_>,
        facts: &RequestFacts<'_>,
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

    fn decide(&self, entry: &Entry, facts: &RequestFacts<'_>, trace: &mut dyn FnMut(Step)) -> Evaluation {
        if let Some(refusal) = shadowed(entry, facts.call.arguments) {
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
    /// An entry of the door's section; `glob`: its index in the glob precedence order when a glob
    /// key matched (never for a server request, whose one entry has no key).
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
    pub(crate) fn holds(&self, facts: &RequestFacts<'_>) -> bool {
        let quantifier = Quantifier::for_action(self.action);
        self.conditions.iter().all(|c| c.holds(facts, quantifier))
    }

    /// When this rule's outcome (`held` or not) rests on a reading of a value other than the value
    /// as sent, which readings: for explanations. A rule that held as a deny rule names the
    /// readings that matched; an allow rule that did not hold, the reading that failed.
    pub(crate) fn reading_note(&self, facts: &RequestFacts<'_>, held: bool) -> Option<String> {
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
        RuleRef::entry(self.door, self.key.clone())
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
