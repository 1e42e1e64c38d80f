//! `add_entry` / `add_rule` at the other doors: "always" on a held resource read, prompt or
//! server request writes into that request's section, with the same splice as for tools.

use portcullis_policy::{
    add_entry, add_rule, exact_entry_key, normalize_uri, Action, CallFacts, Door, Policy, RequestFacts, RuleRef,
};
use serde_json::{json, Value};

const ONE_LINE: &str = r#"{"version":"1","default":"deny","tools":{"read":{}}}"#;

const HAND: &str = "{\n    \"version\": \"1\",\n    \"default\": \"require_approval\",\n    \"tools\": {\n        \"read\": {}\n    }\n}\n";

fn load(text: &str) -> Policy {
    Policy::from_json_str(text, "edited.json").expect("the edited file is a valid policy")
}

fn no_facts() -> RequestFacts<'static> {
    RequestFacts::new(CallFacts::arguments(&Value::Null))
}

fn read(policy: &Policy, uri: &str) -> Action {
    let uri = normalize_uri(uri).expect("a URI in test");
    policy
        .evaluate_resource(&uri, CallFacts::arguments(&Value::Null))
        .action
}

#[test]
fn a_resource_entry_goes_into_a_new_resources_section_last() {
    let key = exact_entry_key(Door::Resources, "FILE:///tmp/../notes.txt").unwrap();
    assert_eq!(key, "file:///notes.txt", "the key is the URI in normal form");
    let text = add_entry(HAND, Door::Resources, &key, json!({})).expect("adds");
    assert_eq!(
        text,
        "{\n    \"version\": \"1\",\n    \"default\": \"require_approval\",\n    \"tools\": {\n        \"read\": {}\n    },\n    \"resources\": {\n        \"file:///notes.txt\": {}\n    }\n}\n",
        "only the lines of the new section are added, in the file's indentation"
    );
    let policy = load(&text);
    assert_eq!(read(&policy, "file:///notes.txt"), Action::Allow);
    assert_eq!(read(&policy, "file:///other.txt"), Action::RequireApproval);
    assert_eq!(
        policy.evaluate("file:///notes.txt", &Value::Null).action,
        Action::RequireApproval,
        "a resource entry is not a tool entry"
    );
}

/// `?` starts a URI's query and would be a glob's "one character"; `*` is a legal URI character
/// and would be a glob's "any run". An "always" on one URI names that URI only.
#[test]
fn glob_characters_in_a_uri_are_literal_in_its_key() {
    let key = exact_entry_key(Door::Resources, "https://h.example/a?q=*").unwrap();
    assert_eq!(key, "https://h.example/a[?]q=[*]");
    let text = add_entry(ONE_LINE, Door::Resources, &key, json!({})).expect("adds");
    let policy = load(&text);
    assert_eq!(read(&policy, "https://h.example/a?q=*"), Action::Allow);
    assert_eq!(
        read(&policy, "https://h.example/aXq=anything"),
        Action::Deny,
        "the key is no pattern"
    );
}

#[test]
fn a_uri_servers_read_differently_has_no_key() {
    let err = exact_entry_key(Door::Resources, "file:///etc/%2e%2e/passwd").expect_err("refused");
    assert!(err.to_string().contains("resource"), "{err}");
}

#[test]
fn a_prompt_entry_in_a_one_line_file_stays_on_one_line() {
    let key = exact_entry_key(Door::Prompts, "review_*").unwrap();
    assert_eq!(key, "review_[*]", "a prompt name is escaped as a tool name is");
    let text = add_entry(ONE_LINE, Door::Prompts, &key, json!({})).expect("adds");
    assert_eq!(
        text,
        r#"{"version":"1","default":"deny","tools":{"read":{}},"prompts":{"review_[*]":{}}}"#
    );
    let policy = load(&text);
    let get = |name: &str| policy.evaluate_request(Door::Prompts, name, &no_facts()).action;
    assert_eq!(get("review_*"), Action::Allow);
    assert_eq!(get("review_all"), Action::Deny, "the default decides the others");
}

#[test]
fn a_deny_with_reason_for_sampling_is_written_as_server_requests_sampling() {
    let entry = json!({"action": "deny", "reason": "no model spending"});
    let text = add_entry(ONE_LINE, Door::Sampling, "ignored", entry).expect("adds");
    assert_eq!(
        text,
        r#"{"version":"1","default":"deny","tools":{"read":{}},"server_requests":{"sampling":{"action":"deny","reason":"no model spending"}}}"#
    );
    let evaluation = load(&text).evaluate_request(Door::Sampling, "sampling", &no_facts());
    assert_eq!(evaluation.action, Action::Deny);
    assert_eq!(evaluation.reason.as_deref(), Some("no model spending"));
    assert_eq!(evaluation.rule.to_string(), "server_requests.sampling");
}

#[test]
fn a_second_server_request_joins_the_section_and_a_repeat_replaces_in_place() {
    let before =
        "{\n  \"version\": \"1\",\n  \"server_requests\": {\n    \"roots\": { \"action\": \"allow\" }\n  }\n}\n";
    let text = add_entry(before, Door::Elicitation, "", json!({"action": "deny"})).expect("adds");
    assert_eq!(
        text,
        "{\n  \"version\": \"1\",\n  \"server_requests\": {\n    \"roots\": { \"action\": \"allow\" },\n    \"elicitation\": {\n      \"action\": \"deny\"\n    }\n  }\n}\n"
    );
    let again = add_entry(&text, Door::Roots, "", json!({"action": "deny", "reason": "no"})).expect("replaces");
    assert!(
        again.contains("\"roots\": {\n      \"action\": \"deny\",\n      \"reason\": \"no\"\n    },"),
        "{again}"
    );
    let policy = load(&again);
    assert_eq!(
        policy.evaluate_request(Door::Roots, "roots", &no_facts()).action,
        Action::Deny
    );
}

#[test]
fn an_invalid_server_request_entry_is_refused() {
    let err = add_entry(ONE_LINE, Door::Sampling, "", json!({"action": "sometimes"})).expect_err("refused");
    assert!(!err.problems.is_empty());
}

#[test]
fn a_rule_on_a_resource_copies_the_glob_entry_that_asked() {
    let before = r#"{"version":"1","resources":{"file:///tmp/*":{"action":"require_approval","rules":[{"when":{"uri":{"path_under":"/tmp/secret"}},"action":"deny","reason":"secret"}]}}}"#;
    let when = json!({"uri": {"path_under": "/tmp/a"}});
    let written = add_rule(before, Door::Resources, "file:///tmp/a/b", &when, true, None).expect("adds");
    assert_eq!(written.key, "file:///tmp/a/b");
    assert_eq!(written.index, 1, "after the author's deny");
    assert_eq!(
        written.name,
        RuleRef::SectionRule {
            door: Door::Resources,
            key: "file:///tmp/a/b".into(),
            index: 1
        }
    );
    assert_eq!(
        written.entry["action"], "require_approval",
        "the glob entry's action is kept"
    );
    let policy = load(&written.text);
    let uri = normalize_uri("file:///tmp/a/b").unwrap();
    let evaluation = policy.evaluate_resource(&uri, CallFacts::arguments(&Value::Null));
    assert_eq!((evaluation.action, evaluation.rule), (Action::Allow, written.name));
}

#[test]
fn a_deny_rule_on_elicitation_goes_first_with_its_reason() {
    let before = r#"{"version":"1","server_requests":{"elicitation":{"action":"require_approval","rules":[{"when":{"mode":{"eq":"url"}},"action":"allow"}]}}}"#;
    let when = json!({"schema.fields": {"contains": "password"}});
    let written = add_rule(
        before,
        Door::Elicitation,
        "elicitation",
        &when,
        false,
        Some("no passwords"),
    )
    .expect("adds");
    assert_eq!((written.key.as_str(), written.index), ("elicitation", 0));
    assert_eq!(written.name.to_string(), "server_requests.elicitation.rules[0]");
    assert_eq!(
        written.entry["rules"][0],
        json!({"when": when, "action": "deny", "reason": "no passwords"})
    );
    load(&written.text);
}

#[test]
fn a_rule_on_a_prompt_decided_by_the_default_gets_the_default_action() {
    let when = json!({"arguments.lang": {"eq": "en"}});
    let written = add_rule(ONE_LINE, Door::Prompts, "summarize", &when, true, None).expect("adds");
    assert_eq!(
        written.entry,
        json!({"action": "deny", "rules": [{"when": when, "action": "allow"}]})
    );
    assert_eq!(written.name.to_string(), "prompts.summarize.rules[0]");
    load(&written.text);
}

#[test]
fn a_when_the_section_does_not_read_is_refused() {
    let when = json!({"arguments.path": {"eq": "x"}});
    add_rule(ONE_LINE, Door::Resources, "file:///x", &when, true, None)
        .expect_err("resources read `uri`, not arguments");
}
