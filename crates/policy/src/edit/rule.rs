//! Where an "always" with a condition goes: one argument rule in the tool's exact-name entry.
//!
//! Rules are tried in order and the first whose `when` holds decides, so the position is the
//! precedence. A deny rule goes first: it decides every call its condition covers, and only
//! tightens. An allow rule goes right after the entry's last deny rule: it decides the covered
//! calls the entry would have held or allowed, and never loosens a deny the author wrote. Either
//! way the calls the condition does not cover are decided exactly as before: the entry's other
//! rules, action, rate limit and timeout are kept, and a tool decided by a glob entry or by the
//! default gets an exact entry that repeats that glob entry (or the default action).

use serde_json::{json, Map, Value};

use super::{add_tool_entry, fail};
use crate::load::parse_document;
use crate::{exact_key, Policy, PolicyError, RuleRef};

/// An argument rule written by [`add_tool_rule`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuleWrite {
    /// The policy text with the rule in it.
    pub text: String,
    /// The `tools` key the rule is under (the tool's exact name, escaped).
    pub key: String,
    /// The whole entry as written.
    pub entry: Value,
    /// The rule's index in the entry's `rules`.
    pub index: usize,
    /// The rule as the evaluator reports it when it decides ([`RuleRef::Rule`] with `key` and
    /// `index`; the audit's `tools.<key>.rules[<index>]`).
    pub name: RuleRef,
}

/// Returns `policy_text` with a rule `{when, action, reason}` added to `tool`'s exact-name entry
/// (made if there is none), at the position described in the module docs. `allow` chooses the
/// action; `reason` is kept for a deny. Only the entry's lines change ([`add_tool_entry`]).
pub fn add_tool_rule(
    policy_text: &str,
    tool: &str,
    when: &Value,
    allow: bool,
    reason: Option<&str>,
) -> Result<RuleWrite, PolicyError> {
    crate::When::parse(when)?;
    let policy = Policy::from_json_str(policy_text, super::EDITED_SOURCE)?;
    let document = parse_document(policy_text).map_err(|e| fail("$", format!("invalid JSON: {e}")))?;
    let key = exact_key(tool);
    let mut entry = current_entry(&document, &policy, tool, &key);
    let mut rule = Map::new();
    rule.insert("when".into(), when.clone());
    rule.insert("action".into(), json!(if allow { "allow" } else { "deny" }));
    if let (false, Some(reason)) = (allow, reason) {
        rule.insert("reason".into(), json!(reason));
    }
    let rules = entry.entry("rules").or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(rules) = rules else {
        return Err(fail(
            "$.tools",
            format!("the entry {key:?} has `rules` that is not a list"),
        ));
    };
    let index = if allow { after_last_deny(rules) } else { 0 };
    rules.insert(index, Value::Object(rule));
    let entry = Value::Object(entry);
    let text = add_tool_entry(policy_text, &key, entry.clone())?;
    let name = RuleRef::Rule {
        key: key.clone(),
        index,
    };
    Ok(RuleWrite {
        text,
        key,
        entry,
        index,
        name,
    })
}

/// The entry the tool has now, as written: its exact entry, a copy of the glob entry that
/// decides it, or an entry whose action is the file's default.
fn current_entry(document: &Value, policy: &Policy, tool: &str, key: &str) -> Map<String, Value> {
    let tools = document.get("tools");
    if let Some(Value::Object(exact)) = tools.and_then(|t| t.get(key)) {
        return exact.clone();
    }
    let decided_by = policy
        .evaluate_call(tool, &crate::CallFacts::arguments(&Value::Null))
        .rule;
    if let Some(Value::Object(glob)) = decided_by.entry_key().and_then(|glob| tools?.get(glob).cloned()) {
        return glob;
    }
    let default = document
        .get("default")
        .and_then(Value::as_str)
        .unwrap_or("require_approval");
    let mut entry = Map::new();
    // `allow` is an entry's own default and is left unwritten, as people write `{}`.
    if default != "allow" {
        entry.insert("action".into(), json!(default));
    }
    entry
}

/// The index just after the last rule whose action is `deny` (0 when there is none).
fn after_last_deny(rules: &[Value]) -> usize {
    rules
        .iter()
        .rposition(|rule| rule.get("action").and_then(Value::as_str) == Some("deny"))
        .map_or(0, |i| i + 1)
}
