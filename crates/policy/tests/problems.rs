//! Invalid policy files: every problem is reported, with file, JSON path and expectation.

use portcullis_policy::{Policy, PolicyError, Problem};
use rstest::rstest;
use serde_json::{json, Value};

fn problems(text: &str) -> Vec<Problem> {
    match Policy::from_json_str(text, "policies/bad.json") {
        Ok(_) => panic!("the policy must be refused:\n{text}"),
        Err(PolicyError { problems }) => problems,
    }
}

fn problems_of(document: Value) -> Vec<Problem> {
    problems(&document.to_string())
}

/// One line per problem, as `portcullis policy check` prints them.
fn report(text: &str) -> String {
    match Policy::from_json_str(text, "policies/bad.json") {
        Ok(_) => panic!("the policy must be refused:\n{text}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn every_mistake_is_reported() {
    let text = r#"{
  "version": "2",
  "default": "alow",
  "hide": ["ok_*", 7, "bad[class"],
  "approval_timeout": 0,
  "redact": ["token", ""],
  "colour": "red",
  "tools": {
    "vm_start": { "acton": "require_approval", "approval_timeout": -5 },
    "vm_stop": { "acton": "deny", "reason": 42 },
    "pve_*": { "rate_limit": { "max": 0, "window": 60, "burst": 3 } },
    "": {},
    "annotated": { "class": "destroy", "risk": "extreme" },
    "execute_query": {
      "action": "require_approval",
      "rules": [
        { "when": { "arguments.query": { "regex": "^\\s*SELECT(", "equals": "x" } }, "action": "allow" },
        { "when": { "argumnts.q": { "eq": 1 }, "arguments.n": { "gt": "3", "in": "a" } }, "action": "maybe" },
        { "when": {}, "reason": "no action" },
        { "when": { "arguments.x": {} }, "action": "deny", "extra": true },
        "not a rule"
      ]
    },
    "list_only": []
  }
}"#;
    insta::assert_snapshot!(report(text));
}

#[test]
fn problems_carry_file_path_and_message() {
    let found = problems_of(json!({ "version": "1", "tools": { "vm_start": { "action": "alow" } } }));
    assert_eq!(
        found,
        vec![Problem {
            file: "policies/bad.json".to_owned(),
            path: r#"$.tools["vm_start"].action"#.to_owned(),
            message: r#"expected one of "allow", "deny", "require_approval", found "alow""#.to_owned(),
        }]
    );
    assert_eq!(
        found[0].to_string(),
        r#"policies/bad.json: $.tools["vm_start"].action: expected one of "allow", "deny", "require_approval", found "alow""#
    );
}

#[test]
fn unknown_fields_in_two_entries_are_two_problems() {
    let found = problems_of(json!({
        "version": "1",
        "tools": { "a": { "acton": "deny" }, "b": { "acton": "deny" } }
    }));
    let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, [r#"$.tools["a"].acton"#, r#"$.tools["b"].acton"#]);
    assert!(
        found[0]
            .message
            .starts_with(r#"unknown field "acton", expected one of "action", "reason""#),
        "{}",
        found[0].message
    );
}

#[rstest]
#[case::syntax_error("{\n  \"version\": \"1\",\n  \"tools\": { \"a\": {}, }\n}", "$", "line 3 column")]
#[case::empty_file("", "$", "EOF while parsing")]
#[case::duplicate_tool_key(
    r#"{"version":"1","tools":{"a":{},"a":{"action":"deny"}}}"#,
    "$",
    "duplicate key \"a\""
)]
#[case::not_an_object("[]", "$", "expected a policy object, found an array")]
#[case::missing_version(r#"{"default":"deny"}"#, "$", r#"missing field "version""#)]
#[case::numeric_version(r#"{"version":1}"#, "$.version", r#"expected "1" (a string), found 1"#)]
#[case::null_action_is_not_absent(
    r#"{"version":"1","tools":{"a":{"action":null}}}"#,
    r#"$.tools["a"].action"#,
    "found null"
)]
#[case::fractional_timeout(
    r#"{"version":"1","approval_timeout":1.5}"#,
    "$.approval_timeout",
    "expected a whole number of seconds (at least 1), found 1.5"
)]
#[case::max_too_large(
    r#"{"version":"1","tools":{"a":{"rate_limit":{"max":4294967296,"window":1}}}}"#,
    r#"$.tools["a"].rate_limit.max"#,
    "from 1 to 4294967295"
)]
#[case::missing_window(
    r#"{"version":"1","tools":{"a":{"rate_limit":{"max":1}}}}"#,
    r#"$.tools["a"].rate_limit"#,
    r#"missing field "window""#
)]
#[case::bad_class_range(
    r#"{"version":"1","tools":{"a[z-b]":{}}}"#,
    r#"$.tools["a[z-b]"]"#,
    "invalid glob pattern"
)]
#[case::tools_not_object(
    r#"{"version":"1","tools":[]}"#,
    "$.tools",
    "expected an object of tool entries, found an array"
)]
#[case::rules_not_array(
    r#"{"version":"1","tools":{"a":{"rules":{}}}}"#,
    r#"$.tools["a"].rules"#,
    "expected an array of rules"
)]
#[case::empty_path_segment(
    r#"{"version":"1","tools":{"a":{"rules":[{"when":{"arguments..x":{"eq":1}},"action":"deny"}]}}}"#,
    r#"$.tools["a"].rules[0].when["arguments..x"]"#,
    "empty path segment"
)]
#[case::exists_not_bool(
    r#"{"version":"1","tools":{"a":{"rules":[{"when":{"arguments.x":{"exists":"yes"}},"action":"deny"}]}}}"#,
    r#"$.tools["a"].rules[0].when["arguments.x"].exists"#,
    "expected true or false"
)]
#[case::not_in_not_array(
    r#"{"version":"1","tools":{"a":{"rules":[{"when":{"arguments.x":{"not_in":1}},"action":"deny"}]}}}"#,
    r#"$.tools["a"].rules[0].when["arguments.x"].not_in"#,
    "expected an array, found 1"
)]
fn single_problem(#[case] text: &str, #[case] path: &str, #[case] message_part: &str) {
    let found = problems(text);
    assert_eq!(found.len(), 1, "exactly one problem expected: {found:#?}");
    assert_eq!(found[0].path, path, "{found:#?}");
    assert!(
        found[0].message.contains(message_part),
        "{:?} should contain {message_part:?}",
        found[0].message
    );
}

#[test]
fn regex_errors_stay_on_one_line() {
    let found = problems_of(json!({
        "version": "1",
        "tools": { "a": { "rules": [ { "when": { "arguments.q": { "regex": "(" } }, "action": "allow" } ] } }
    }));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "invalid regular expression: unclosed group");
}

#[test]
fn load_file_reads_and_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("policy.json");
    std::fs::write(&path, r#"{"version":"1","default":"allow"}"#).expect("write policy");
    let policy = Policy::load_file(&path).expect("a valid file loads");
    assert_eq!(
        policy.evaluate("x", &Value::Null).action,
        portcullis_policy::Action::Allow
    );

    std::fs::write(&path, r#"{"version":"1","default":"nope"}"#).expect("write policy");
    let err = Policy::load_file(&path).expect_err("an invalid file is refused");
    assert_eq!(err.problems[0].file, path.display().to_string());
}

#[test]
fn unreadable_file_is_a_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missing.json");
    let err = Policy::load_file(&path).expect_err("a missing file is refused");
    assert_eq!(err.problems.len(), 1);
    assert_eq!(err.problems[0].file, path.display().to_string());
    assert!(
        err.problems[0].message.starts_with("cannot read the policy file: "),
        "{}",
        err.problems[0].message
    );
}
