//! Decisions: precedence between hide, exact keys, globs and default; rules; operators.

use std::num::{NonZeroU32, NonZeroU64};

use portcullis_policy::{Action, Evaluation, Policy, RateLimit, RuleRef};
use rstest::rstest;
use serde_json::{json, Value};

fn policy(document: Value) -> Policy {
    Policy::from_json_str(&document.to_string(), "test.json")
        .unwrap_or_else(|err| panic!("test policy must load:\n{err}"))
}

/// The example of the design document, plus keys that exercise precedence.
fn example() -> Policy {
    policy(json!({
        "version": "1",
        "default": "deny",
        "hide": ["delete_*", "secret_tool"],
        "approval_timeout": 45,
        "redact": ["Session_Key"],
        "tools": {
            "vm_agent_exec_status": {},
            "pve_*": { "action": "require_approval" },
            "pve_get_*_status": { "rate_limit": { "max": 10, "window": 60 } },
            "pve_get_node_status": { "action": "deny", "reason": "exact wins" },
            "vm_delete": { "action": "deny", "reason": "Deleting VMs is not allowed from agents" },
            "vm_start": { "action": "require_approval", "approval_timeout": 120 },
            "delete_everything": {},
            "secret_tool": {},
            "execute_query": {
                "action": "require_approval",
                "rules": [
                    { "when": { "arguments.query": { "regex": "^\\s*SELECT\\b" } }, "action": "allow" }
                ]
            },
            "tie_*_x": { "action": "deny" },
            "tie_x_*": { "action": "require_approval" },
            "a*b*": { "action": "deny" },
            "ab*": { "action": "require_approval" },
            "c[ao]t?": { "action": "deny" },
            "c*": { "action": "require_approval" }
        }
    }))
}

fn rate(max: u32, window: u64) -> Option<RateLimit> {
    Some(RateLimit {
        max: NonZeroU32::new(max).expect("nonzero"),
        window_secs: NonZeroU64::new(window).expect("nonzero"),
    })
}

#[rstest]
#[case::exact_empty_entry_allows(
    "vm_agent_exec_status",
    Action::Allow,
    "tools.vm_agent_exec_status",
    Some("vm_agent_exec_status")
)]
#[case::exact_deny("vm_delete", Action::Deny, "tools.vm_delete", Some("vm_delete"))]
#[case::exact_beats_glob(
    "pve_get_node_status",
    Action::Deny,
    "tools.pve_get_node_status",
    Some("pve_get_node_status")
)]
#[case::more_literals_wins(
    "pve_get_vm_status",
    Action::Allow,
    "tools.pve_get_*_status",
    Some("pve_get_*_status")
)]
#[case::less_specific_glob_still_matches("pve_list", Action::RequireApproval, "tools.pve_*", Some("pve_*"))]
#[case::tie_goes_to_first_in_file("tie_x_x", Action::Deny, "tools.tie_*_x", Some("tie_*_x"))]
#[case::fewer_wildcards_wins_over_file_order("abb", Action::RequireApproval, "tools.ab*", Some("ab*"))]
#[case::class_and_question_mark("cats", Action::Deny, "tools.c[ao]t?", Some("c[ao]t?"))]
#[case::class_not_matching_falls_to_wider_glob("cuts", Action::RequireApproval, "tools.c*", Some("c*"))]
#[case::unlisted_gets_default("something_else", Action::Deny, "default", None)]
#[case::hide_beats_exact_allow("delete_everything", Action::Hide, "hide: delete_*", None)]
#[case::hide_by_exact_name("secret_tool", Action::Hide, "hide: secret_tool", None)]
#[case::hide_unlisted("delete_vm", Action::Hide, "hide: delete_*", None)]
#[case::case_sensitive_names("VM_DELETE", Action::Deny, "default", None)]
fn precedence(#[case] tool: &str, #[case] action: Action, #[case] rule: &str, #[case] entry: Option<&str>) {
    let decision = example().evaluate(tool, &Value::Null);
    assert_eq!(
        (decision.action, decision.rule.to_string().as_str(), decision.entry()),
        (action, rule, entry),
        "decision for {tool:?}"
    );
}

#[test]
fn hidden_tools_are_reported_for_tools_list() {
    let policy = example();
    assert!(policy.is_hidden("delete_vm"), "glob hide");
    assert!(policy.is_hidden("secret_tool"), "exact hide");
    assert!(!policy.is_hidden("vm_delete"), "a denied tool is still listed");
    assert!(
        !policy.is_hidden("secret_tool_2"),
        "an exact hide pattern matches one name"
    );
}

#[test]
fn deny_carries_reason_and_no_rate_limit() {
    let decision = example().evaluate("vm_delete", &json!({}));
    assert_eq!(
        decision,
        Evaluation {
            action: Action::Deny,
            rule: RuleRef::Entry {
                key: "vm_delete".to_owned()
            },
            reason: Some("Deleting VMs is not allowed from agents".to_owned()),
            rate_limit: None,
            approval_timeout_secs: None,
        }
    );
}

#[test]
fn allow_carries_the_entry_rate_limit() {
    let decision = example().evaluate("pve_get_vm_status", &json!({}));
    assert_eq!(decision.rate_limit, rate(10, 60));
}

#[rstest]
#[case::entry_timeout_wins("vm_start", Some(120))]
#[case::file_timeout_when_entry_has_none("pve_list", Some(45))]
#[case::only_for_require_approval("vm_delete", None)]
#[case::not_for_allow("vm_agent_exec_status", None)]
fn approval_timeout(#[case] tool: &str, #[case] expected: Option<u64>) {
    assert_eq!(example().evaluate(tool, &json!({})).approval_timeout_secs, expected);
}

#[test]
fn default_require_approval_uses_file_timeout() {
    let policy = policy(json!({ "version": "1", "approval_timeout": 30 }));
    let decision = policy.evaluate("anything", &json!({}));
    assert_eq!(
        (
            decision.action,
            decision.rule.to_string().as_str(),
            decision.approval_timeout_secs
        ),
        (Action::RequireApproval, "default", Some(30)),
        "default is require_approval when not given"
    );
}

#[rstest]
#[case::select_is_allowed("  SELECT * FROM t", Action::Allow, "tools.execute_query.rules[0]")]
#[case::update_needs_approval("UPDATE t SET x = 1", Action::RequireApproval, "tools.execute_query")]
fn design_example_rule(#[case] query: &str, #[case] action: Action, #[case] rule: &str) {
    let decision = example().evaluate("execute_query", &json!({ "query": query }));
    assert_eq!((decision.action, decision.rule.to_string().as_str()), (action, rule));
}

fn rules_policy() -> Policy {
    policy(json!({
        "version": "1",
        "tools": {
            "write": {
                "action": "require_approval",
                "reason": "entry reason",
                "rate_limit": { "max": 3, "window": 1 },
                "rules": [
                    { "when": { "arguments.n": { "eq": 1 } }, "action": "deny", "reason": "one" },
                    { "when": { "arguments.n": { "gte": 0 } }, "action": "allow" },
                    { "when": { "arguments.n": { "lt": -100 } }, "action": "deny" }
                ]
            }
        }
    }))
}

#[rstest]
#[case::first_match_wins_over_later_match(json!({"n": 1}), Action::Deny, "tools.write.rules[0]", Some("one"), None)]
#[case::second_rule(json!({"n": 2}), Action::Allow, "tools.write.rules[1]", None, rate(3, 1))]
#[case::third_rule(json!({"n": -200}), Action::Deny, "tools.write.rules[2]", None, None)]
#[case::no_rule_matches(json!({"n": -1}), Action::RequireApproval, "tools.write", Some("entry reason"), None)]
#[case::no_arguments(Value::Null, Action::RequireApproval, "tools.write", Some("entry reason"), None)]
fn rules_first_match(
    #[case] arguments: Value,
    #[case] action: Action,
    #[case] rule: &str,
    #[case] reason: Option<&str>,
    #[case] rate_limit: Option<RateLimit>,
) {
    let decision = rules_policy().evaluate("write", &arguments);
    assert_eq!(
        (
            decision.action,
            decision.rule.to_string().as_str(),
            decision.reason.as_deref(),
            decision.rate_limit
        ),
        (action, rule, reason, rate_limit),
    );
    assert_eq!(
        decision.entry(),
        Some("write"),
        "the entry is reported whichever rule decided"
    );
}

/// Whether a rule with `when: { path: condition }` matches `arguments`.
fn holds(path: &str, condition: Value, arguments: Value) -> bool {
    let policy = policy(json!({
        "version": "1",
        "tools": { "t": { "action": "deny", "rules": [ { "when": { path: condition }, "action": "allow" } ] } }
    }));
    policy.evaluate("t", &arguments).action == Action::Allow
}

#[rstest]
// eq
#[case::eq_string(json!({"eq": "a"}), json!({"v": "a"}), true)]
#[case::eq_string_differs(json!({"eq": "a"}), json!({"v": "b"}), false)]
#[case::eq_int_float(json!({"eq": 1}), json!({"v": 1.0}), true)]
#[case::eq_no_coercion(json!({"eq": 5}), json!({"v": "5"}), false)]
#[case::eq_bool_reads_number(json!({"eq": true}), json!({"v": 1}), true)]
#[case::eq_null(json!({"eq": null}), json!({"v": null}), true)]
#[case::eq_object(json!({"eq": {"a": [1, 2]}}), json!({"v": {"a": [1.0, 2]}}), true)]
#[case::eq_missing(json!({"eq": "a"}), json!({}), false)]
// ne
#[case::ne_differs(json!({"ne": "a"}), json!({"v": "b"}), true)]
#[case::ne_same(json!({"ne": "a"}), json!({"v": "a"}), false)]
#[case::ne_reads_number(json!({"ne": 5}), json!({"v": "5"}), false)]
#[case::ne_missing(json!({"ne": "a"}), json!({}), true)]
// in / not_in
#[case::in_member(json!({"in": ["a", "b"]}), json!({"v": "b"}), true)]
#[case::in_not_member(json!({"in": ["a", "b"]}), json!({"v": "c"}), false)]
#[case::in_no_coercion(json!({"in": [1, 2]}), json!({"v": "1"}), false)]
#[case::in_missing(json!({"in": ["a"]}), json!({}), false)]
#[case::not_in_member(json!({"not_in": ["a", "b"]}), json!({"v": "a"}), false)]
#[case::not_in_not_member(json!({"not_in": ["a", "b"]}), json!({"v": "c"}), true)]
#[case::not_in_missing(json!({"not_in": ["a"]}), json!({}), true)]
// regex
#[case::regex_matches(json!({"regex": "^/tmp/"}), json!({"v": "/tmp/x"}), true)]
#[case::regex_unanchored_finds(json!({"regex": "tmp"}), json!({"v": "/var/tmp/x"}), true)]
#[case::regex_no_match(json!({"regex": "^/tmp/"}), json!({"v": "/etc/x"}), false)]
#[case::regex_number_value(json!({"regex": "^1$"}), json!({"v": 1}), false)]
#[case::regex_missing(json!({"regex": ".*"}), json!({}), false)]
// contains
#[case::contains_substring(json!({"contains": "rm -rf"}), json!({"v": "sudo rm -rf /"}), true)]
#[case::contains_no_substring(json!({"contains": "rm -rf"}), json!({"v": "ls"}), false)]
#[case::contains_array_element(json!({"contains": "b"}), json!({"v": ["a", "b"]}), true)]
#[case::contains_array_number(json!({"contains": 2}), json!({"v": [1, 2.0]}), true)]
#[case::contains_array_no_element(json!({"contains": "c"}), json!({"v": ["a", "b"]}), false)]
#[case::contains_string_in_number(json!({"contains": "1"}), json!({"v": 123}), false)]
#[case::contains_number_in_string(json!({"contains": 1}), json!({"v": "123"}), false)]
#[case::contains_object(json!({"contains": "a"}), json!({"v": {"a": 1}}), false)]
#[case::contains_missing(json!({"contains": "a"}), json!({}), false)]
// numbers
#[case::gt_true(json!({"gt": 10}), json!({"v": 11}), true)]
#[case::gt_equal(json!({"gt": 10}), json!({"v": 10}), false)]
#[case::gte_equal(json!({"gte": 10}), json!({"v": 10.0}), true)]
#[case::lt_true(json!({"lt": 0.5}), json!({"v": 0}), true)]
#[case::lt_false(json!({"lt": -1}), json!({"v": 0}), false)]
#[case::lte_equal(json!({"lte": 3}), json!({"v": 3}), true)]
#[case::lte_greater(json!({"lte": 3}), json!({"v": 3.5}), false)]
#[case::gt_string_number(json!({"gt": 3}), json!({"v": "5"}), false)]
#[case::gt_missing(json!({"gt": 3}), json!({}), false)]
#[case::gt_huge_vs_negative(json!({"gt": -1}), json!({"v": 18_446_744_073_709_551_615_u64}), true)]
#[case::lt_negative_vs_huge(json!({"lt": 18_446_744_073_709_551_615_u64}), json!({"v": -5}), true)]
#[case::range_inside(json!({"gte": 1, "lt": 10}), json!({"v": 5}), true)]
#[case::range_outside(json!({"gte": 1, "lt": 10}), json!({"v": 10}), false)]
// exists
#[case::exists_present(json!({"exists": true}), json!({"v": 0}), true)]
#[case::exists_present_null(json!({"exists": true}), json!({"v": null}), true)]
#[case::exists_missing(json!({"exists": true}), json!({}), false)]
#[case::not_exists_missing(json!({"exists": false}), json!({}), true)]
#[case::not_exists_present(json!({"exists": false}), json!({"v": 1}), false)]
fn operator(#[case] condition: Value, #[case] arguments: Value, #[case] expected: bool) {
    assert_eq!(
        holds("arguments.v", condition.clone(), arguments.clone()),
        expected,
        "{condition} on {arguments}"
    );
}

#[rstest]
#[case::array_index(json!({"files": [{"path": "/etc/passwd"}]}), true)]
#[case::object_key_that_looks_like_index(json!({"files": {"0": {"path": "/etc/passwd"}}}), true)]
#[case::index_out_of_range(json!({"files": []}), false)]
#[case::through_a_scalar(json!({"files": "x"}), false)]
#[case::no_arguments(Value::Null, false)]
fn nested_paths(#[case] arguments: Value, #[case] expected: bool) {
    assert_eq!(
        holds("arguments.files.0.path", json!({"eq": "/etc/passwd"}), arguments),
        expected
    );
}

#[rstest]
#[case::both_hold(json!({"a": 1, "b": "x"}), Action::Allow)]
#[case::one_fails(json!({"a": 1, "b": "y"}), Action::Deny)]
fn all_paths_must_hold(#[case] arguments: Value, #[case] expected: Action) {
    let policy = policy(json!({
        "version": "1",
        "tools": { "t": { "action": "deny", "rules": [
            { "when": { "arguments.a": { "eq": 1 }, "arguments.b": { "eq": "x" } }, "action": "allow" }
        ] } }
    }));
    assert_eq!(policy.evaluate("t", &arguments).action, expected);
}

#[test]
fn seed_policy_loads_unchanged() {
    let text = r#"{"version":"1","default":"deny","tools":{"vm_agent_exec_status":{}}}"#;
    let policy = Policy::from_json_str(text, "seed/policy.json").expect("the seed policy loads");
    let allowed = policy.evaluate("vm_agent_exec_status", &json!({"vmid": 100}));
    assert_eq!(
        (allowed.action, allowed.rule.to_string().as_str(), allowed.entry()),
        (
            Action::Allow,
            "tools.vm_agent_exec_status",
            Some("vm_agent_exec_status")
        )
    );
    let denied = policy.evaluate("vm_delete", &json!({}));
    assert_eq!(
        (denied.action, denied.rule.to_string().as_str(), denied.entry()),
        (Action::Deny, "default", None)
    );
    assert!(policy.redact_keys().is_empty());
}

#[test]
fn require_approval_for_all() {
    let policy = Policy::require_approval_for_all();
    for tool in ["anything", "vm_delete", ""] {
        assert_eq!(
            policy.evaluate(tool, &json!({})),
            Evaluation {
                action: Action::RequireApproval,
                rule: RuleRef::NoPolicyFile,
                reason: None,
                rate_limit: None,
                approval_timeout_secs: None,
            },
            "every call requires approval without a policy file"
        );
        assert!(!policy.is_hidden(tool));
    }
    assert!(policy.redact_keys().is_empty());
}

#[test]
fn redact_keys_are_lowercased() {
    assert_eq!(example().redact_keys(), ["session_key".to_owned()]);
}

#[test]
fn annotations_are_recorded_per_entry() {
    use portcullis_policy::{Risk, ToolClass};
    let policy = policy(json!({
        "version": "1",
        "tools": { "vm_*": { "class": "delete", "risk": "critical" }, "ls": {} }
    }));
    let decision = policy.evaluate("vm_destroy", &json!({}));
    assert_eq!(decision.action, Action::Allow, "annotations do not affect the decision");
    let annotations = policy.annotations(decision.entry().unwrap_or_default());
    assert_eq!(
        (annotations.class, annotations.risk),
        (Some(ToolClass::Delete), Some(Risk::Critical))
    );
    assert_eq!(policy.annotations("ls"), Default::default());
    assert_eq!(policy.annotations("nope"), Default::default());
}

#[test]
fn policy_is_cheap_to_share() {
    fn assert_traits<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    assert_traits::<Policy>();
    let a = example();
    let b = a.clone();
    assert_eq!(a.evaluate("vm_delete", &json!({})), b.evaluate("vm_delete", &json!({})));
}

#[test]
fn glob_characters_other_than_wildcards_are_literal() {
    let policy = policy(json!({
        "version": "1",
        "default": "deny",
        "tools": { "x{a,b}*": {}, "dots.and\\slash*": {} }
    }));
    assert_eq!(policy.evaluate("x{a,b}1", &json!({})).action, Action::Allow);
    assert_eq!(
        policy.evaluate("xa1", &json!({})).action,
        Action::Deny,
        "no brace alternation"
    );
    assert_eq!(policy.evaluate("dots.and\\slash_1", &json!({})).action, Action::Allow);
    assert_eq!(
        policy.evaluate("dotsXand\\slash", &json!({})).action,
        Action::Deny,
        ". is literal"
    );
}

#[test]
fn star_matches_slashes_and_empty() {
    let policy = policy(json!({ "version": "1", "default": "deny", "tools": { "fs/*": {}, "a**b": {} } }));
    assert_eq!(policy.evaluate("fs/read/deep", &json!({})).action, Action::Allow);
    assert_eq!(policy.evaluate("fs/", &json!({})).action, Action::Allow);
    assert_eq!(policy.evaluate("ab", &json!({})).action, Action::Allow, "** is *");
}

/// Security issue, class 2: `PATH` next to (or instead of) `path` is what Go's encoding/json
/// reads for a `Path` field. A policy that reads `arguments.path` does not decide such a call.
#[rstest::rstest]
#[case(json!({"PATH": "/etc/passwd"}))]
#[case(json!({"path": "/tmp/ok", "Path": "/etc/passwd"}))]
#[case(json!({"opts": {"path": "/tmp/ok"}, "path": "/tmp/ok", "pAth": "/etc"}))]
#[case(json!({"paᵗh": 1, "pat\u{0068}": 2, "paTh": "/etc"}))]
fn a_key_shadowing_one_the_policy_reads_is_denied(#[case] arguments: Value) {
    let policy = Policy::from_json_str(
        r#"{"version":"1","default":"deny","tools":{"read":{"action":"allow",
            "rules":[{"when":{"arguments.path":{"regex":"^/etc"}},"action":"deny"}]}}}"#,
        "t",
    )
    .unwrap();
    let eval = policy.evaluate("read", &arguments);
    assert_eq!(eval.action, Action::Deny, "{arguments}");
    assert!(eval.reason.unwrap().contains("differs only by case"));
    assert_eq!(
        policy.evaluate("read", &json!({"path": "/tmp/ok", "other": 1})).action,
        Action::Allow
    );
}

fn policy_with_rule(when: Value) -> Policy {
    let text = json!({"version": "1", "default": "deny", "tools": {"t": {
        "action": "deny", "rules": [{"when": when, "action": "allow"}]}}})
    .to_string();
    Policy::from_json_str(&text, "t").expect("a valid policy")
}

#[rstest]
#[case(json!({"arguments.path": {"path_under": "/tmp/allowed"}}), json!({"path": "/tmp/allowed/a"}), true)]
#[case(json!({"arguments.path": {"path_under": "/tmp/allowed"}}), json!({"path": "/tmp/allowed/../etc"}), false)]
#[case(json!({"arguments.path": {"path_under": "/tmp/allowed"}}), json!({"path": "/tmp/allowedX"}), false)]
#[case(json!({"arguments.path": {"path_under": "/tmp/allowed"}}), json!({"path": "allowed/a"}), false)]
#[case(json!({"arguments.path": {"path_under": "/tmp/allowed"}}), json!({"path": 5}), false)]
#[case(json!({"arguments.url": {"prefix": "https://example.com/"}}), json!({"url": "https://example.com/a"}), true)]
#[case(json!({"arguments.url": {"prefix": "https://example.com/"}}), json!({"url": "https://example.com.evil/"}), false)]
#[case(json!({"arguments.cmd": {"glob": "git status*"}}), json!({"cmd": "git status --short"}), true)]
#[case(json!({"arguments.cmd": {"glob": "git status*"}}), json!({"cmd": "rm -rf / ; git status"}), false)]
#[case(json!({"client.name": {"eq": "claude-code"}}), json!({}), true)]
#[case(json!({"client.name": {"eq": "cursor"}}), json!({}), false)]
#[case(json!({"client.version": {"regex": "^1\\."}}), json!({}), true)]
#[case(json!({"client.version": {"exists": false}}), json!({}), false)]
fn new_operators_and_client_conditions(#[case] when: Value, #[case] arguments: Value, #[case] allowed: bool) {
    let policy = policy_with_rule(when.clone());
    let facts = portcullis_policy::CallFacts {
        arguments: &arguments,
        client_name: Some("claude-code"),
        client_version: Some("1.2.3"),
        places: portcullis_policy::Places::unknown(),
    };
    let expected = if allowed { Action::Allow } else { Action::Deny };
    assert_eq!(
        policy.evaluate_call("t", &facts).action,
        expected,
        "{when} with {arguments}"
    );
}

#[test]
fn client_conditions_without_a_client_only_hold_when_negative() {
    let policy = policy_with_rule(json!({"client.name": {"ne": "cursor"}}));
    assert_eq!(
        policy.evaluate("t", &json!({})).action,
        Action::Allow,
        "no name is not cursor"
    );
    let policy = policy_with_rule(json!({"client.name": {"eq": "cursor"}}));
    assert_eq!(policy.evaluate("t", &json!({})).action, Action::Deny);
}

#[rstest]
#[case(json!({"arguments.p": {"path_under": "/a/../.."}}), "path_under")]
#[case(json!({"arguments.p": {"path_under": 3}}), "expected a string")]
#[case(json!({"arguments.p": {"glob": "a[b"}}), "unclosed")]
#[case(json!({"arguments.p": {"prefix": null}}), "expected a string")]
#[case(json!({"client.nam": {"eq": "x"}}), "client.name")]
fn bad_new_operands_are_refused_with_the_reason(#[case] when: Value, #[case] needle: &str) {
    let text = json!({"version": "1", "tools": {"t": {"rules": [{"when": when, "action": "allow"}]}}}).to_string();
    let err = Policy::from_json_str(&text, "t").expect_err("refused").to_string();
    assert!(err.contains(needle), "{err}");
}

/// The evaluator names what decided as a typed [`RuleRef`] whose text is what the audit log's
/// `rule` column has always held — for every kind, keys with dots included: no one parses it back.
#[rstest]
#[case::hide("secret_x", json!({}), RuleRef::Hide { pattern: "secret_*".into() }, "hide: secret_*")]
#[case::exact_entry("a.b", json!({}), RuleRef::Entry { key: "a.b".into() }, "tools.a.b")]
#[case::glob_entry("vm_9", json!({}), RuleRef::Entry { key: "vm_*".into() }, "tools.vm_*")]
#[case::argument_rule("a.b", json!({"n": 2}), RuleRef::Rule { key: "a.b".into(), index: 1 }, "tools.a.b.rules[1]")]
#[case::shadowed_key_refusal("a.b", json!({"N": 1, "n": 0}), RuleRef::Entry { key: "a.b".into() }, "tools.a.b")]
#[case::default("other", json!({}), RuleRef::Default, "default")]
fn every_kind_of_rule_is_typed_and_reads_as_before(
    #[case] tool: &str,
    #[case] arguments: Value,
    #[case] rule: RuleRef,
    #[case] text: &str,
) {
    let policy = Policy::from_json_str(
        r#"{"version": "1", "default": "deny", "hide": ["secret_*"], "tools": {
            "a.b": {"rules": [
                {"when": {"arguments.n": {"eq": 1}}, "action": "deny"},
                {"when": {"arguments.n": {"eq": 2}}, "action": "require_approval"}
            ]},
            "vm_*": {"action": "require_approval"}
        }}"#,
        "kinds.json",
    )
    .expect("valid");
    let decision = policy.evaluate(tool, &arguments);
    assert_eq!((&decision.rule, decision.rule.to_string().as_str()), (&rule, text));
    assert_eq!(decision.entry(), rule.entry_key(), "the entry is the rule's key");
    let shown = serde_json::to_value(&decision).expect("serializes");
    assert_eq!(
        (&shown["rule"], &shown["entry"]),
        (&json!(text), &json!(rule.entry_key()))
    );
}

#[test]
fn no_policy_file_is_its_own_kind() {
    let decision = Policy::require_approval_for_all().evaluate("x", &json!({}));
    assert_eq!(
        (&decision.rule, decision.rule.to_string().as_str()),
        (&RuleRef::NoPolicyFile, "no policy file")
    );
}
