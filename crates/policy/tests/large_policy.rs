//! A large policy decides as a small one does. Its speed is measured by the criterion bench
//! (`benches/policy_eval.rs`, group `policy_1000`), not here: timing depends on the machine.

use portcullis_policy::{Action, Policy};
use serde_json::{json, Map};

/// 1,000 entries: 900 exact names (some with rules), 100 globs; 10 hide globs.
fn large_policy() -> Policy {
    let mut tools = Map::new();
    for i in 0..900 {
        let entry = if i % 10 == 0 {
            json!({ "action": "require_approval", "rules": [
                { "when": { "arguments.query": { "regex": "^\\s*SELECT\\b" } }, "action": "allow" }
            ] })
        } else {
            json!({ "rate_limit": { "max": 10, "window": 60 } })
        };
        tools.insert(format!("tool_{i}"), entry);
    }
    for i in 0..100 {
        tools.insert(
            format!("svc{i}_get_*_status"),
            json!({ "action": "deny", "reason": "r" }),
        );
    }
    let hide: Vec<String> = (0..10).map(|i| format!("hidden{i}_*")).collect();
    let document = json!({ "version": "1", "default": "deny", "hide": hide, "tools": tools });
    Policy::from_json_str(&document.to_string(), "large.json").expect("the large policy loads")
}

#[test]
fn a_thousand_entries_decide_by_exact_name_rule_glob_default_and_hide() {
    let policy = large_policy();
    let arguments = json!({ "query": "SELECT 1", "vmid": 100 });
    let cases = [
        ("exact", "tool_123", Action::Allow),
        ("exact with rule", "tool_120", Action::Allow),
        ("glob", "svc57_get_node_status", Action::Deny),
        ("default", "unknown_tool", Action::Deny),
        ("hidden", "hidden3_x", Action::Hide),
    ];
    for (label, tool, action) in cases {
        assert_eq!(policy.evaluate(tool, &arguments).action, action, "{label}");
    }
}
