//! Where an "always" with a condition goes: one rule in the exact entry of the tool (or of the
//! resource, the prompt, the server request: the section of the request's [`Door`]).
//!
//! Rules are tried in order and the first whose `when` holds decides, so the position is the
//! precedence. A deny rule goes first: it decides every call its condition covers, and only
//! tightens. An allow rule goes right after the entry's last deny rule: it decides the covered
//! calls the entry would have held or allowed, and never loosens a deny the author wrote. Either
//! way the calls the condition does not cover are decided exactly as before: the entry's other
//! rules, action, rate limit and timeout are kept, and a tool decided by a glob entry or by the
//! default gets an exact entry that repeats that glob entry (or the default action). A server
//! request's section has one entry, so it is always "exact".

use serde_json::{json, Map, Value};

use super::{add_entry, exact_entry_key, fail};
use crate::load::parse_document;
use crate::{CallFacts, Door, Policy, PolicyError, RequestFacts, RuleRef};

/// A rule written by [`add_rule`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuleWrite {
    /// The policy text with the rule in it.
    pub text: String,
    /// The key the rule is under in its section ([`exact_entry_key`]: the tool's exact name,
    /// escaped; a resource's URI in normal form, escaped; a server request's field name).
    pub key: String,
    /// The whole entry as written.
    pub entry: Value,
    /// The rule's index in the entry's `rules`.
    pub index: usize,
    /// The rule as the evaluator reports it when it decides ([`RuleRef::rule`] of the door,
    /// `key` and `index`; the audit's `tools.<key>.rules[<index>]`, `resources.<key>.rules[…]`).
    pub name: RuleRef,
}

/// Returns `policy_text` with a rule `{when, action, reason}` added to `tool`'s exact-name entry:
/// [`add_rule`] at [`Door::Tools`].
pub fn add_tool_rule(
    policy_text: &str,
    tool: &str,
    when: &Value,
    allow: bool,
    reason: Option<&str>,
) -> Result<RuleWrite, PolicyError> {
    add_rule(policy_text, Door::Tools, tool, when, allow, reason)
}

/// Returns `policy_text` with a rule `{when, action, reason}` added to the exact entry of `name`
/// in `door`'s section ([`exact_entry_key`]; made if there is none), at the position described
/// in the module docs. `name` is the tool name, the resource URI (any spelling; the key is its
/// normal form) or the prompt name; for a server request it is not read. `when` must be one the
/// section reads (`uri` for resources, `arguments.*` for tools and prompts, …). `allow` chooses
/// the action; `reason` is kept for a deny. Only the entry's lines change ([`add_entry`]).
pub fn add_rule(
    policy_text: &str,
    door: Door,
    name: &str,
    when: &Value,
    allow: bool,
    reason: Option<&str>,
) -> Result<RuleWrite, PolicyError> {
    if door == Door::Tools {
        // A problem named for the `when` alone; the other sections' keys are checked with the
        // whole file, which knows what each section reads.
        crate::When::parse(when)?;
    }
    let policy = Policy::from_json_str(policy_text, super::EDITED_SOURCE)?;
    let document = parse_document(policy_text).map_err(|e| fail("$", format!("invalid JSON: {e}")))?;
    let key = exact_entry_key(door, name)?;
    let mut entry = current_entry(&document, &policy, door, name, &key);
    let mut rule = Map::new();
    rule.insert("when".into(), when.clone());
    rule.insert("action".into(), json!(if allow { "allow" } else { "deny" }));
    if let (false, Some(reason)) = (allow, reason) {
        rule.insert("reason".into(), json!(reason));
    }
    let rules = entry.entry("rules").or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(rules) = rules else {
        return Err(fail(
            &format!("$.{}", door.section()),
            format!("the entry {key:?} has `rules` that is not a list"),
        ));
    };
    let index = if allow { after_last_deny(rules) } else { 0 };
    rules.insert(index, Value::Object(rule));
    let entry = Value::Object(entry);
    let text = add_entry(policy_text, door, &key, entry.clone())?;
    let name = RuleRef::rule(door, key.clone(), index);
    Ok(RuleWrite {
        text,
        key,
        entry,
        index,
        name,
    })
}

/// The entry `name` has now in `door`'s section, as written: its exact entry, a copy of the glob
/// entry that decides it, or an entry whose action is the file's default.
fn current_entry(document: &Value, policy: &Policy, door: Door, name: &str, key: &str) -> Map<String, Value> {
    let section = document.get(door.section());
    if let Some(Value::Object(exact)) = section.and_then(|s| s.get(key)) {
        return exact.clone();
    }
    let no_arguments = RequestFacts::new(CallFacts::arguments(&Value::Null));
    let decided_by = policy.evaluate_request(door, name, &no_arguments).rule;
    // Only an entry of this section is copied: a tool hidden by the `hide` list is decided by
    // that list, not by an entry.
    let glob = decided_by
        .entry_key()
        .filter(|_| decided_by.door() == Some(door))
        .and_then(|glob| section?.get(glob).cloned());
    if let Some(Value::Object(glob)) = glob {
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
