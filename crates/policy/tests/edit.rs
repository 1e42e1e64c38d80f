//! `add_tool_entry`: "always allow" / "deny always" rewrite a policy file's text.

use portcullis_policy::{add_tool_entry, Action, Policy};
use serde_json::{json, Value};

const SEED: &str = r#"{"version":"1","default":"deny","tools":{"vm_agent_exec_status":{}}}"#;

fn keys(text: &str, pointer: &str) -> Vec<String> {
    let document: Value = serde_json::from_str(text).expect("the result is JSON");
    document
        .pointer(pointer)
        .and_then(Value::as_object)
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn adds_an_entry_to_the_seed() {
    let text = add_tool_entry(SEED, "vm_start", json!({})).expect("adding to the seed works");
    insta::assert_snapshot!(text, @r#"
    {
      "version": "1",
      "default": "deny",
      "tools": {
        "vm_agent_exec_status": {},
        "vm_start": {}
      }
    }
    "#);
    assert!(text.ends_with("}\n"), "trailing newline");
    let policy = Policy::from_json_str(&text, "edited.json").expect("the result re-validates");
    assert_eq!(policy.evaluate("vm_start", &json!({})).action, Action::Allow);
    assert_eq!(
        policy.evaluate("vm_agent_exec_status", &json!({})).action,
        Action::Allow
    );
}

#[test]
fn replaces_in_place_and_keeps_everything_else_in_order() {
    let original = r#"{
        "version": "1",
        "tools": {
            "zeta": {},
            "vm_delete": { "action": "allow" },
            "alpha": { "rules": [ { "when": { "arguments.q": { "regex": "^\\s*SELECT\\b" } }, "action": "deny" } ] }
        },
        "hide": ["b", "a"],
        "default": "deny",
        "approval_timeout": 45
    }"#;
    let entry = json!({ "action": "deny", "reason": "Denied from the approval prompt" });
    let text = add_tool_entry(original, "vm_delete", entry.clone()).expect("replacing works");
    assert_eq!(
        keys(&text, ""),
        ["version", "tools", "hide", "default", "approval_timeout"]
    );
    assert_eq!(
        keys(&text, "/tools"),
        ["zeta", "vm_delete", "alpha"],
        "the replaced key keeps its place"
    );
    let document: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(document["tools"]["vm_delete"], entry);
    assert_eq!(document["hide"], json!(["b", "a"]));
    assert_eq!(
        document["tools"]["alpha"]["rules"][0]["when"]["arguments.q"]["regex"],
        json!("^\\s*SELECT\\b"),
        "escapes survive the round trip"
    );
    let policy = Policy::from_json_str(&text, "edited.json").expect("the result re-validates");
    assert_eq!(policy.evaluate("vm_delete", &json!({})).action, Action::Deny);
}

#[test]
fn creates_tools_when_absent() {
    let text = add_tool_entry(r#"{"version":"1"}"#, "read_*", json!({})).expect("works without tools");
    assert_eq!(keys(&text, ""), ["version", "tools"]);
    assert_eq!(keys(&text, "/tools"), ["read_*"]);
}

#[test]
fn an_invalid_entry_is_refused() {
    let err = add_tool_entry(SEED, "vm_start", json!({ "action": "alow" })).expect_err("invalid entry");
    assert_eq!(err.problems.len(), 1);
    assert_eq!(err.problems[0].path, r#"$.tools["vm_start"].action"#);
}

#[test]
fn an_invalid_document_is_refused() {
    assert!(add_tool_entry("{", "a", json!({})).is_err(), "syntax error");
    assert!(add_tool_entry("[]", "a", json!({})).is_err(), "not an object");
    assert!(
        add_tool_entry(r#"{"version":"1","tools":[]}"#, "a", json!({})).is_err(),
        "tools not an object"
    );
    assert!(
        add_tool_entry(r#"{"version":"1","bogus":1}"#, "a", json!({})).is_err(),
        "already invalid"
    );
}

/// "Always" for a tool whose name looks like a pattern writes a key that names only that tool.
#[test]
fn an_exact_key_names_one_tool_even_when_the_name_looks_like_a_glob() {
    use portcullis_policy::exact_key;
    let base = r#"{"version":"1","default":"deny","tools":{}}"#;
    for name in ["get_*", "*", "a?b", "x[abc]", "[", "we[ir]d*?"] {
        let key = exact_key(name);
        let text = add_tool_entry(base, &key, json!({})).expect("an escaped key is valid");
        let policy = Policy::from_json_str(&text, "t").expect("loads");
        assert_eq!(policy.evaluate(name, &json!({})).action, Action::Allow, "{name} itself");
        for other in ["get_secret", "", "aab", "xa", "we[ir]d", "weird*?", "other"] {
            if other != name {
                assert_eq!(
                    policy.evaluate(other, &json!({})).action,
                    Action::Deny,
                    "{key:?} (for {name:?}) must not allow {other:?}"
                );
            }
        }
    }
    assert_eq!(
        exact_key("plain_name"),
        "plain_name",
        "ordinary names are written as they are"
    );
}

#[test]
fn two_keys_naming_the_same_tool_are_refused() {
    let err = Policy::from_json_str(
        r#"{"version":"1","tools":{"get_[*]":{},"get_[*]x":{},"[g]et_[*]":{}}}"#,
        "t",
    )
    .expect_err("two keys for get_*");
    assert!(err.to_string().contains("names the same tool"), "{err}");
}
