//! Conditions decide on what servers read (issue 28): each class of reading with a deny rule
//! that must match every spelling, and an allow rule that must not let a spelling through when
//! some server reads it differently.

use portcullis_policy::{Action, CallFacts, Places, Policy};
use rstest::rstest;
use serde_json::{json, Value};

/// A tool `t` whose only rule is `when` → `action`, and whose entry decides the opposite.
fn one_rule(when: &Value, action: &str) -> Policy {
    let otherwise = if action == "allow" { "deny" } else { "allow" };
    let text = json!({"version": "1", "tools": {"t": {
        "action": otherwise,
        "rules": [{"when": when, "action": action, "reason": "by rule"}]
    }}})
    .to_string();
    Policy::from_json_str(&text, "readings.json").expect("valid policy")
}

fn decide(when: &Value, action: &str, arguments: &Value, places: &Places) -> Action {
    let facts = CallFacts {
        places,
        ..CallFacts::arguments(arguments)
    };
    one_rule(when, action).evaluate_call("t", &facts).action
}

/// Whether the deny rule matches (it decides) and whether the allow rule allows.
fn both(when: &Value, arguments: &Value, places: &Places) -> (bool, bool) {
    (
        decide(when, "deny", arguments, places) == Action::Deny,
        decide(when, "allow", arguments, places) == Action::Allow,
    )
}

#[rstest]
#[case(json!("500"))]
#[case(json!(" 5e2 "))]
#[case(json!("0x1F4"))]
#[case(json!("５００"))]
#[case(json!("٥٠٠"))]
#[case(json!("5_00"))]
#[case(json!("+000500"))]
#[case(json!("500.0"))]
#[case(json!("\u{a0}500\n"))]
#[case(json!("Infinity"))]
#[case(json!("inf"))]
fn a_number_spelled_as_a_string_is_read_as_the_number(#[case] count: Value) {
    let when = json!({"arguments.count": {"gt": 100}});
    let arguments = json!({ "count": count });
    let (denied, allowed) = both(&when, &arguments, Places::unknown());
    assert!(denied, "deny gt 100 must match {count}");
    assert!(
        !allowed,
        "allow gt 100 must not allow the string {count}: strict servers refuse it"
    );
    // An allow rule bounding the number from above does not let the string through either.
    let bound = json!({"arguments.count": {"lt": 1000}});
    assert_eq!(
        decide(&bound, "allow", &arguments, Places::unknown()),
        Action::Deny,
        "{count}"
    );
}

#[test]
fn the_number_itself_is_still_decided_by_value() {
    let when = json!({"arguments.count": {"gt": 100}});
    assert_eq!(both(&when, &json!({"count": 500}), Places::unknown()), (true, true));
    assert_eq!(both(&when, &json!({"count": 50}), Places::unknown()), (false, false));
    assert_eq!(both(&when, &json!({"count": "50"}), Places::unknown()), (false, false));
    assert_eq!(both(&when, &json!({"count": "abc"}), Places::unknown()), (false, false));
    let eq = json!({"arguments.count": {"eq": 500}});
    assert_eq!(both(&eq, &json!({"count": 500.0}), Places::unknown()), (true, true));
    assert_eq!(both(&eq, &json!({"count": "0x1f4"}), Places::unknown()), (true, false));
}

#[rstest]
#[case(json!("true"), true)]
#[case(json!("True"), true)]
#[case(json!(" yes "), true)]
#[case(json!("on"), true)]
#[case(json!("1"), true)]
#[case(json!("t"), true)]
#[case(json!(1), true)]
#[case(json!(1.0), true)]
// JavaScript's Boolean() (zod's z.coerce.boolean()) reads every non-empty string as true.
#[case(json!("false"), true)]
#[case(json!("no"), true)]
#[case(json!("0"), true)]
#[case(json!(0), false)]
#[case(json!(false), false)]
#[case(json!(""), false)]
#[case(json!(null), false)]
fn a_boolean_is_read_from_words_and_numbers(#[case] force: Value, #[case] read_as_true: bool) {
    let when = json!({"arguments.force": {"eq": true}});
    let arguments = json!({ "force": force });
    let (denied, allowed) = both(&when, &arguments, Places::unknown());
    assert_eq!(denied, read_as_true, "deny eq true on {force}");
    let only_true_itself = force == json!(1) || force == json!(1.0);
    assert_eq!(allowed, only_true_itself, "allow eq true on {force}");
    assert_eq!(both(&when, &json!({"force": true}), Places::unknown()), (true, true));
}

#[test]
fn an_allow_rule_on_false_does_not_let_through_a_string_javascript_reads_as_true() {
    let when = json!({"arguments.force": {"eq": false}});
    for spelled in ["false", "no", "off", "0", "f"] {
        let arguments = json!({ "force": spelled });
        assert_eq!(
            decide(&when, "allow", &arguments, Places::unknown()),
            Action::Deny,
            "{spelled}"
        );
    }
    assert_eq!(
        decide(&when, "allow", &json!({"force": false}), Places::unknown()),
        Action::Allow
    );
}

#[rstest]
#[case(json!({"opts": "{\"force\": true}"}))]
#[case(json!({"opts": " {\"force\": \"yes\"} "}))]
#[case(json!({"opts": "{\"force\": 1}"}))]
#[case(json!({"opts": [{"force": false}, "x"]}))]
fn a_path_reaches_into_a_string_holding_json(#[case] arguments: Value) {
    let when = json!({"arguments.opts.force": {"eq": true}});
    let (denied, _) = both(&when, &arguments, Places::unknown());
    let expected = !arguments["opts"].is_array();
    assert_eq!(denied, expected, "{arguments}");
    // Allowing `force: false` never lets a string-held object through: a server that keeps the
    // string has no `force` at all.
    let allow_false = json!({"arguments.opts.force": {"eq": false}});
    let spelled = json!({"opts": "{\"force\": false}"});
    assert_eq!(decide(&allow_false, "allow", &spelled, Places::unknown()), Action::Deny);
    assert_eq!(
        decide(
            &allow_false,
            "allow",
            &json!({"opts": {"force": false}}),
            Places::unknown()
        ),
        Action::Allow
    );
}

#[test]
fn a_json_array_in_a_string_is_indexed_and_compared() {
    let when = json!({"arguments.files.0": {"path_under": "/etc"}});
    let arguments = json!({"files": "[\"/etc/shadow\"]"});
    assert!(both(&when, &arguments, Places::unknown()).0);
    let eq = json!({"arguments.ids": {"eq": [1, 2]}});
    assert_eq!(
        both(&eq, &json!({"ids": "[1, \"2\"]"}), Places::unknown()),
        (true, false)
    );
    assert_eq!(both(&eq, &json!({"ids": [1, 2.0]}), Places::unknown()), (true, true));
}

#[test]
fn an_integer_beyond_two_to_the_53_is_also_read_as_javascript_rounds_it() {
    // 2^53 + 1 is halfway between two doubles; JavaScript rounds it to even, 2^53.
    let big = 9_007_199_254_740_993_u64;
    let rounded = 9_007_199_254_740_992_u64;
    let deny_rounded = json!({"arguments.id": {"eq": rounded}});
    assert_eq!(
        both(&deny_rounded, &json!({ "id": big }), Places::unknown()),
        (true, false)
    );
    assert!(both(&deny_rounded, &json!({ "id": big.to_string() }), Places::unknown()).0);
    // An operand beyond 2^53 has its rounded reading too.
    let deny_big = json!({"arguments.id": {"eq": big}});
    assert_eq!(
        both(&deny_big, &json!({ "id": rounded }), Places::unknown()),
        (true, false)
    );
    assert_eq!(both(&deny_big, &json!({ "id": big }), Places::unknown()), (true, true));
    // Order comparisons see both readings.
    let deny_above = json!({"arguments.id": {"gte": big}});
    assert_eq!(
        both(&deny_above, &json!({ "id": rounded }), Places::unknown()),
        (false, false)
    );
    assert_eq!(
        both(&deny_above, &json!({ "id": big + 1 }), Places::unknown()),
        (true, true)
    );
}

fn home_places() -> Places {
    Places {
        roots: vec!["/home/u".to_owned()],
        home: Some("/home/u".to_owned()),
    }
}

#[rstest]
#[case("~/.ssh/id_ed25519", true)]
#[case(".ssh/id_ed25519", true)]
#[case("projects/../.ssh/id_ed25519", true)]
#[case("/home/u/.ssh./id_ed25519", true)]
#[case("/home/u//.ssh/", true)]
#[case("/home/u\\.ssh\\id_ed25519", true)]
#[case("/home/u/projects\\..\\.ssh\\id", true)]
#[case("/../home/u/.ssh/id", true)]
#[case("/home/u/.ssh\0/../x", true)]
#[case("~root/.ssh/id", true)]
#[case("/home/u/notes.txt", false)]
#[case("notes.txt", false)]
fn a_path_is_read_as_servers_resolve_it(#[case] path: &str, #[case] inside: bool) {
    let deny = json!({"arguments.path": {"path_under": "/home/u/.ssh"}});
    let arguments = json!({ "path": path });
    assert_eq!(
        decide(&deny, "deny", &arguments, &home_places()) == Action::Deny,
        inside,
        "{path:?}"
    );
    // An allow rule for the home directory lets through only what every reading puts there.
    let allow = json!({"arguments.path": {"path_under": "/home/u/projects"}});
    assert_eq!(
        decide(&allow, "allow", &arguments, &home_places()),
        Action::Deny,
        "{path:?}"
    );
}

#[test]
fn relative_and_home_paths_are_decided_strictly_when_the_places_are_unknown() {
    let deny = json!({"arguments.path": {"path_under": "/home/u/.ssh"}});
    let allow = json!({"arguments.path": {"path_under": "/home/u/projects"}});
    for path in ["notes.txt", "~/projects/a", "./a", "~"] {
        let arguments = json!({ "path": path });
        assert_eq!(
            decide(&deny, "deny", &arguments, Places::unknown()),
            Action::Deny,
            "{path:?}"
        );
        assert_eq!(
            decide(&allow, "allow", &arguments, Places::unknown()),
            Action::Deny,
            "{path:?}"
        );
    }
    // With the places known, the same paths resolve.
    for path in ["~/projects/a", "projects/a/b.txt", "/home/u/projects/./a"] {
        let arguments = json!({ "path": path });
        assert_eq!(
            decide(&allow, "allow", &arguments, &home_places()),
            Action::Allow,
            "{path:?}"
        );
        assert_eq!(
            decide(&deny, "deny", &arguments, &home_places()),
            Action::Allow,
            "{path:?}"
        );
    }
}

#[test]
fn unicode_equivalent_spellings_of_a_directory_are_both_compared() {
    let composed = "/home/u/caf\u{e9}";
    let deny = json!({"arguments.path": {"path_under": composed}});
    let decomposed = json!({"path": "/home/u/cafe\u{301}/secret"});
    assert_eq!(decide(&deny, "deny", &decomposed, Places::unknown()), Action::Deny);
    assert_eq!(decide(&deny, "allow", &decomposed, Places::unknown()), Action::Deny);
    let same = json!({"path": "/home/u/caf\u{e9}/secret"});
    assert_eq!(decide(&deny, "allow", &same, Places::unknown()), Action::Allow);
}

#[test]
fn a_number_is_read_as_its_spellings_by_text_operators() {
    let deny = json!({"arguments.v": {"regex": "^5(\\.0)?$"}});
    assert_eq!(decide(&deny, "deny", &json!({"v": 5}), Places::unknown()), Action::Deny);
    assert_eq!(
        decide(&deny, "deny", &json!({"v": 5.0}), Places::unknown()),
        Action::Deny
    );
    assert_eq!(
        decide(&deny, "deny", &json!({"v": 6}), Places::unknown()),
        Action::Allow
    );
    let prefix = json!({"arguments.v": {"prefix": "Tr"}});
    assert_eq!(
        decide(&prefix, "deny", &json!({"v": true}), Places::unknown()),
        Action::Deny
    );
}

#[test]
fn rules_stay_first_match_in_order() {
    let text = json!({"version": "1", "tools": {"t": {"action": "require_approval", "rules": [
        {"when": {"arguments.count": {"lt": 10}}, "action": "allow"},
        {"when": {"arguments.count": {"gt": 100}}, "action": "deny"}
    ]}}})
    .to_string();
    let policy = Policy::from_json_str(&text, "order.json").expect("valid");
    assert_eq!(policy.evaluate("t", &json!({"count": 5})).action, Action::Allow);
    assert_eq!(
        policy.evaluate("t", &json!({"count": "5"})).action,
        Action::RequireApproval
    );
    assert_eq!(policy.evaluate("t", &json!({"count": "500"})).action, Action::Deny);
}

#[test]
fn a_key_shadowing_a_read_one_inside_a_json_string_is_refused() {
    let when = json!({"arguments.opts.force": {"eq": true}});
    let arguments = json!({"opts": "{\"FORCE\": true}"});
    let evaluation = one_rule(&when, "allow").evaluate("t", &arguments);
    assert_eq!(evaluation.action, Action::Deny);
    assert!(evaluation.reason.is_some_and(|r| r.contains("differs only by case")));
}

#[test]
fn explain_says_which_reading_decided() {
    let deny = one_rule(&json!({"arguments.count": {"gt": 100}}), "deny");
    let arguments = json!({"count": "500"});
    let explanation = deny.explain("t", &CallFacts::arguments(&arguments));
    assert_eq!(explanation.evaluation.action, Action::Deny);
    let text = explanation.lines().join("\n");
    assert!(
        text.contains("arguments.count matched as the number 500 (a string lenient servers read as a number)"),
        "{text}"
    );
    let allow = one_rule(&json!({"arguments.path": {"path_under": "/tmp"}}), "allow");
    let arguments = json!({"path": "notes.txt"});
    let explanation = allow.explain("t", &CallFacts::arguments(&arguments));
    assert_eq!(explanation.evaluation.action, Action::Deny);
    let text = explanation.lines().join("\n");
    assert!(
        text.contains("does not hold for every way a server may resolve the path"),
        "{text}"
    );
    // A value decided as sent needs no note.
    let plain = json!({"count": 500});
    let explanation = deny.explain("t", &CallFacts::arguments(&plain));
    assert!(explanation.rules.iter().all(|r| r.reading.is_none()), "{explanation:?}");
}

/// What the semantic differential harness found running on real servers after the first pass
/// (tests/e2e/mcp1/test_readings_mcp1.py): zod's `z.coerce.boolean()` is JavaScript truthiness,
/// `z.coerce.number()` reads a one-member array as its member, `z.stringbool()` knows
/// "enabled", and a number is the nearest double whatever its spelling.
#[rstest]
#[case(json!("x"))]
#[case(json!("disabled"))]
#[case(json!("\u{feff}YES"))]
#[case(json!(2))]
#[case(json!(-1))]
#[case(json!(0.5))]
#[case(json!([]))]
#[case(json!([false]))]
#[case(json!({}))]
#[case(json!("enabled"))]
#[case(json!(" Enabled "))]
fn a_value_javascript_reads_as_true_is_denied_where_true_is(#[case] force: Value) {
    let when = json!({"arguments.force": {"eq": true}});
    let (denied, allowed) = both(&when, &json!({ "force": force }), Places::unknown());
    assert!(denied && !allowed, "{force}: denied {denied}, allowed {allowed}");
}

#[rstest]
#[case(json!([500]))]
#[case(json!(["500"]))]
#[case(json!([[500]]))]
#[case(json!([" 5e2 "]))]
fn a_value_javascript_reads_as_a_number_over_the_bound_is_denied(#[case] count: Value) {
    let when = json!({"arguments.count": {"gt": 100}});
    let (denied, allowed) = both(&when, &json!({ "count": count }), Places::unknown());
    assert!(denied && !allowed, "{count}: denied {denied}, allowed {allowed}");
}

#[test]
fn spelled_numbers_are_read_as_the_nearest_double() {
    let policy = one_rule(&json!({"arguments.count": {"gt": 100}}), "deny");
    for text in [r#"{"count": 100.00000000000001}"#, r#"{"count": 1.0000000000000001e2}"#] {
        let arguments: Value = serde_json::from_str(text).unwrap();
        assert_eq!(policy.evaluate("t", &arguments).action, Action::Deny, "{text}");
    }
    let vm = one_rule(&json!({"arguments.vm": {"eq": 9_007_199_254_740_992_u64}}), "deny");
    let arguments: Value = serde_json::from_str(r#"{"vm": 9007199254740993.0}"#).unwrap();
    assert_eq!(
        vm.evaluate("t", &arguments).action,
        Action::Deny,
        "9007199254740993.0 is 2^53 as a double"
    );
}

#[test]
fn a_truthy_number_is_not_equal_to_one() {
    // `Boolean(2)` is true and 1 is true to pydantic, but no server reads 2 as 1.
    let (denied, allowed) = both(&json!({"arguments.n": {"eq": 1}}), &json!({"n": 2}), Places::unknown());
    assert!(!denied && !allowed, "denied {denied}, allowed {allowed}");
}
