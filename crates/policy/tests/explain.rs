//! `Policy::explain`: which entry or rule decides a call and why, from the evaluator itself.

use portcullis_policy::{Action, CallFacts, GlobKey, Matched, Policy};
use serde_json::{json, Value};

fn policy() -> Policy {
    let document = json!({
        "version": "1",
        "default": "deny",
        "hide": ["secret_*", "delete_*"],
        "tools": {
            "pve_*": { "action": "require_approval" },
            "pve_get_*_status": { "rate_limit": { "max": 10, "window": 60 } },
            "pve_get_node_status": { "action": "deny", "reason": "exact wins" },
            "delete_everything": {},
            "execute_query": {
                "action": "require_approval",
                "reason": "queries change data",
                "rules": [
                    { "when": { "arguments.query": { "regex": "^\\s*DROP\\b" } }, "action": "deny", "reason": "no drops" },
                    { "when": { "arguments.query": { "regex": "^\\s*SELECT\\b" } }, "action": "allow" }
                ]
            },
            "run": {
                "action": "deny",
                "rules": [ { "when": { "client.name": { "eq": "claude-code" } }, "action": "require_approval" } ]
            },
            "tie_*_x": { "action": "deny" },
            "tie_x_*": { "action": "require_approval" }
        }
    });
    Policy::from_json_str(&document.to_string(), "test.json").expect("valid policy")
}

fn glob(key: &str, literals: usize, wildcards: usize) -> GlobKey {
    GlobKey {
        key: key.into(),
        literals,
        wildcards,
    }
}

#[test]
fn an_exact_key_wins_and_the_globs_it_beat_are_named_in_precedence_order() {
    let e = policy().explain("pve_get_node_status", &CallFacts::arguments(&Value::Null));
    assert_eq!(e.evaluation.action, Action::Deny);
    assert_eq!(e.evaluation.rule.to_string(), "tools.pve_get_node_status");
    assert_eq!(
        e.matched,
        Matched::Exact {
            key: "pve_get_node_status".into(),
            beaten: vec![glob("pve_get_*_status", 15, 1), glob("pve_*", 4, 1)],
        }
    );
    assert_eq!(e.entry_action, Some(Action::Deny));
    assert!(e.rules.is_empty());
    let text = e.lines().join("\n");
    assert!(text.contains("the exact name"), "{text}");
    assert!(text.contains("lost to the exact name: tools[\"pve_*\"]"), "{text}");
    assert!(text.contains("reason: exact wins"), "{text}");
}

#[test]
fn the_most_specific_glob_wins_and_ties_go_to_the_key_written_first() {
    let p = policy();
    let e = p.explain("pve_get_vm_status", &CallFacts::arguments(&Value::Null));
    assert_eq!(
        e.matched,
        Matched::Glob {
            key: glob("pve_get_*_status", 15, 1),
            beaten: vec![glob("pve_*", 4, 1)],
        }
    );
    assert_eq!(e.evaluation.action, Action::Allow);
    assert!(e.evaluation.rate_limit.is_some());
    assert!(e.lines().iter().any(|l| l.contains("rate limit: 10 calls per 60 s")));

    let tie = p.explain("tie_x_x", &CallFacts::arguments(&Value::Null));
    assert_eq!(
        tie.matched,
        Matched::Glob {
            key: glob("tie_*_x", 6, 1),
            beaten: vec![glob("tie_x_*", 6, 1)],
        }
    );
    assert_eq!(tie.evaluation.action, Action::Deny);
    assert!(tie.lines().join("\n").contains("as specific, written later"));
}

#[test]
fn a_hide_pattern_wins_over_an_exact_entry() {
    let e = policy().explain("delete_everything", &CallFacts::arguments(&Value::Null));
    assert_eq!(e.evaluation.action, Action::Hide);
    assert_eq!(
        e.matched,
        Matched::Hidden {
            pattern: "delete_*".into()
        }
    );
    assert_eq!(e.entry_action, None);
}

#[test]
fn rules_are_tried_in_order_until_one_holds() {
    let p = policy();
    let select = json!({"query": "SELECT 1"});
    let e = p.explain("execute_query", &CallFacts::arguments(&select));
    assert_eq!(e.evaluation.rule.to_string(), "tools.execute_query.rules[1]");
    assert_eq!(
        e.rules.iter().map(|r| (r.index, r.held)).collect::<Vec<_>>(),
        vec![(0, false), (1, true)]
    );
    assert_eq!(e.rules[1].when, json!({"arguments.query": {"regex": "^\\s*SELECT\\b"}}));
    assert!(!e.lines().iter().any(|l| l.contains("entry's own action decides")));

    let update = json!({"query": "UPDATE t SET x = 1"});
    let e = p.explain("execute_query", &CallFacts::arguments(&update));
    assert_eq!(e.evaluation.action, Action::RequireApproval);
    assert_eq!(e.evaluation.rule.to_string(), "tools.execute_query");
    assert!(e.rules.iter().all(|r| !r.held) && e.rules.len() == 2);
    let text = e.lines().join("\n");
    assert!(
        text.contains("no rule holds: the entry's own action decides (require_approval)"),
        "{text}"
    );
    assert!(text.contains("reason: queries change data"), "{text}");
}

#[test]
fn a_client_name_condition_reads_the_client() {
    let p = policy();
    let args = json!({});
    let facts = CallFacts {
        arguments: &args,
        client_name: Some("claude-code"),
        client_version: None,
        places: portcullis_policy::Places::unknown(),
    };
    assert_eq!(p.explain("run", &facts).evaluation.action, Action::RequireApproval);
    assert_eq!(
        p.explain("run", &CallFacts::arguments(&args)).evaluation.action,
        Action::Deny
    );
}

#[test]
fn the_default_and_the_missing_file_are_told_apart() {
    let e = policy().explain("unlisted", &CallFacts::arguments(&Value::Null));
    assert_eq!(
        (e.matched.clone(), e.evaluation.action),
        (Matched::Default, Action::Deny)
    );
    assert!(e.lines()[1].contains("file's default"), "{:?}", e.lines());
    let none = Policy::require_approval_for_all().explain("x", &CallFacts::arguments(&Value::Null));
    assert_eq!(none.evaluation.action, Action::RequireApproval);
    assert!(none.lines()[1].contains("no policy file"), "{:?}", none.lines());
}

#[test]
fn a_shadowing_key_is_explained_as_refused_before_the_rules() {
    let args = json!({"query": "SELECT 1", "QUERY": "DROP TABLE t"});
    let e = policy().explain("execute_query", &CallFacts::arguments(&args));
    assert!(e.shadowed);
    assert!(e.rules.is_empty());
    assert_eq!(e.evaluation.action, Action::Deny);
}

#[test]
fn the_explanation_carries_the_evaluators_own_decision() {
    let p = policy();
    let cases = [
        ("pve_get_node_status", json!({})),
        ("pve_list", json!({})),
        ("execute_query", json!({"query": "DROP TABLE t"})),
        ("execute_query", json!({"query": "SELECT 1"})),
        ("execute_query", json!(null)),
        ("secret_x", json!({})),
        ("nothing", json!({})),
        ("tie_x_x", json!({})),
    ];
    for (tool, args) in &cases {
        let facts = CallFacts::arguments(args);
        assert_eq!(
            p.explain(tool, &facts).evaluation,
            p.evaluate_call(tool, &facts),
            "{tool} {args}"
        );
    }
}

#[test]
fn an_explanation_serializes_for_the_editor() {
    let select = json!({"query": "SELECT 1"});
    let e = policy().explain("execute_query", &CallFacts::arguments(&select));
    let v = serde_json::to_value(&e).expect("serializes");
    assert_eq!(v["evaluation"]["action"], "allow");
    assert_eq!(v["matched"]["kind"], "exact");
    assert_eq!(v["rules"][1]["held"], true);
}
