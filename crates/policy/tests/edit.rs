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
    assert_eq!(
        text, r#"{"version":"1","default":"deny","tools":{"vm_agent_exec_status":{},"vm_start":{}}}"#,
        "a one-line file stays on one line"
    );
    let policy = Policy::from_json_str(&text, "edited.json").expect("the result re-validates");
    assert_eq!(policy.evaluate("vm_start", &json!({})).action, Action::Allow);
    assert_eq!(
        policy.evaluate("vm_agent_exec_status", &json!({})).action,
        Action::Allow
    );
}

/// The lines of `after` that are not in `before`, and the lines of `before` not in `after`,
/// compared as the common prefix and suffix leave them (what a line diff of one splice shows).
fn changed_lines<'a>(before: &'a str, after: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (
        old[prefix..old.len() - suffix].to_vec(),
        new[prefix..new.len() - suffix].to_vec(),
    )
}

/// Hand-formatted: four-space indent, aligned values, a compact rule, keys in the author's order.
const HAND: &str = r#"{
    "version": "1",
    "default":  "require_approval",
    "tools": {
        "read_file":   {},
        "write_file":  { "action": "require_approval", "reason": "writes to disk" },
        "exec":        { "action": "deny",
                         "reason": "no shells" }
    },
    "hide": [ "debug_*" ]
}
"#;

#[test]
fn a_new_entry_changes_only_its_own_lines() {
    let text = add_tool_entry(HAND, "list_dir", json!({})).expect("adds");
    let (removed, added) = changed_lines(HAND, &text);
    assert_eq!(removed, ["                         \"reason\": \"no shells\" }\n"]);
    assert_eq!(
        added,
        [
            "                         \"reason\": \"no shells\" },\n",
            "        \"list_dir\": {}\n",
        ],
        "only a comma after the last entry and the new entry's line change:\n{text}"
    );
    Policy::from_json_str(&text, "t").expect("valid");
}

#[test]
fn a_new_entry_with_rules_is_indented_like_the_file() {
    let entry = json!({"rules": [{"when": {"arguments.path": {"path_under": "/tmp"}}, "action": "allow"}]});
    let text = add_tool_entry(HAND, "write_file2", entry).expect("adds");
    let (_, added) = changed_lines(HAND, &text);
    assert_eq!(
        added.concat(),
        concat!(
            "                         \"reason\": \"no shells\" },\n",
            "        \"write_file2\": {\n",
            "            \"rules\": [\n",
            "                {\n",
            "                    \"when\": {\n",
            "                        \"arguments.path\": {\n",
            "                            \"path_under\": \"/tmp\"\n",
            "                        }\n",
            "                    },\n",
            "                    \"action\": \"allow\"\n",
            "                }\n",
            "            ]\n",
            "        }\n",
        )
    );
}

#[test]
fn replacing_an_entry_changes_only_that_entry() {
    let entry = json!({"action": "deny", "reason": "never"});
    let text = add_tool_entry(HAND, "write_file", entry).expect("replaces");
    let (removed, added) = changed_lines(HAND, &text);
    assert_eq!(
        removed,
        ["        \"write_file\":  { \"action\": \"require_approval\", \"reason\": \"writes to disk\" },\n"]
    );
    assert_eq!(
        added.concat(),
        "        \"write_file\":  {\n            \"action\": \"deny\",\n            \"reason\": \"never\"\n        },\n"
    );
}

#[test]
fn an_empty_tools_object_gets_the_entry_on_its_own_line() {
    let before = "{\n\t\"version\": \"1\",\n\t\"tools\": {},\n\t\"default\": \"deny\"\n}\n";
    let text = add_tool_entry(before, "a", json!({})).expect("adds");
    assert_eq!(
        text, "{\n\t\"version\": \"1\",\n\t\"tools\": {\n\t\t\"a\": {}\n\t},\n\t\"default\": \"deny\"\n}\n",
        "tab indentation is kept"
    );
}

#[test]
fn a_missing_tools_object_is_added_last_in_the_files_style() {
    let before = "{\n  \"version\": \"1\",\n  \"default\": \"deny\"\n}";
    let text = add_tool_entry(before, "a", json!({})).expect("adds");
    assert_eq!(
        text,
        "{\n  \"version\": \"1\",\n  \"default\": \"deny\",\n  \"tools\": {\n    \"a\": {}\n  }\n}"
    );
}

#[test]
fn crlf_files_keep_crlf() {
    let before = HAND.replace('\n', "\r\n");
    let entry = json!({"action": "deny", "reason": "no"});
    let text = add_tool_entry(&before, "rm", entry).expect("adds");
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "every line ends in CRLF:\n{text:?}"
    );
    let (removed, added) = changed_lines(&before, &text);
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(
        added.concat(),
        concat!(
            "                         \"reason\": \"no shells\" },\r\n",
            "        \"rm\": {\r\n",
            "            \"action\": \"deny\",\r\n",
            "            \"reason\": \"no\"\r\n",
            "        }\r\n",
        )
    );
}

#[test]
fn an_escaped_key_is_found_and_replaced_not_duplicated() {
    let before = "{\n  \"version\": \"1\",\n  \"tools\": {\n    \"get_[*]\": {},\n    \"w\\u0061rn\": {}\n  }\n}\n";
    let text = add_tool_entry(before, "warn", json!({"action": "deny"})).expect("replaces");
    assert_eq!(
        text,
        "{\n  \"version\": \"1\",\n  \"tools\": {\n    \"get_[*]\": {},\n    \"w\\u0061rn\": {\n      \"action\": \"deny\"\n    }\n  }\n}\n",
        "the key written with an escape is the same key"
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

/// An "always" with a condition: the rule the person chose, where it beats what it should.
mod conditional_rule {
    use portcullis_policy::{add_tool_rule, Action, Policy};
    use serde_json::json;

    use super::changed_lines;

    const FILES: &str = r#"{
    "version": "1",
    "default":  "require_approval",
    "tools": {
        "read_file":   {},
        "write_file":  { "action": "require_approval",
                         "rules": [
                             { "when": { "arguments.path": { "prefix": "/etc/" } }, "action": "deny", "reason": "system files" },
                             { "when": { "arguments.path": { "glob": "*.md" } }, "action": "require_approval" }
                         ] }
    }
}
"#;

    fn decide(text: &str, tool: &str, path: &str) -> (Action, String) {
        let policy = Policy::from_json_str(text, "edited.json").expect("the result re-validates");
        let eval = policy.evaluate(tool, &json!({ "path": path }));
        (eval.action, eval.rule.to_string())
    }

    #[test]
    fn an_allow_goes_after_the_authors_denies_and_decides_only_what_it_covers() {
        let when = json!({"arguments.path": {"path_under": "/home/me/notes"}});
        let written = add_tool_rule(FILES, "write_file", &when, true, None).unwrap();
        assert_eq!(
            (written.index, written.name.to_string().as_str()),
            (1, "tools.write_file.rules[1]")
        );
        let text = &written.text;
        assert_eq!(
            decide(text, "write_file", "/home/me/notes/a.md"),
            (Action::Allow, written.name.to_string())
        );
        assert_eq!(decide(text, "write_file", "/home/me/notes/x/y.txt").0, Action::Allow);
        // Outside the directory, a `..` escape, and the author's deny: as before.
        assert_eq!(
            decide(text, "write_file", "/home/me/other.txt"),
            (Action::RequireApproval, "tools.write_file".into())
        );
        assert_eq!(
            decide(text, "write_file", "/home/me/notes/../secrets.md").0,
            Action::RequireApproval
        );
        assert_eq!(
            decide(text, "write_file", "/home/me/notes2/a").0,
            Action::RequireApproval
        );
        assert_eq!(
            decide(text, "write_file", "/etc/passwd"),
            (Action::Deny, "tools.write_file.rules[0]".into())
        );
        assert_eq!(decide(text, "read_file", "/anything").0, Action::Allow);
        // Only the entry's lines changed; the rest keeps its hand formatting.
        let (removed, added) = changed_lines(FILES, text);
        assert!(
            removed.iter().all(|l| l.contains("write_file")
                || l.contains("rules")
                || l.contains("when")
                || l.trim().starts_with(']')
                || l.trim() == "}"),
            "{removed:?}"
        );
        assert!(added.iter().any(|l| l.contains("/home/me/notes")), "{added:?}");
        assert!(text.starts_with("{\n    \"version\": \"1\",\n    \"default\":  \"require_approval\",\n    \"tools\": {\n        \"read_file\":   {},\n"), "{text}");
    }

    #[test]
    fn a_deny_goes_first_and_keeps_its_reason() {
        let when = json!({"arguments.path": {"prefix": "/home/me/"}});
        let written = add_tool_rule(FILES, "read_file", &when, false, Some("not my home")).unwrap();
        assert_eq!(written.index, 0);
        assert_eq!(
            written.entry,
            json!({"rules": [{"when": when, "action": "deny", "reason": "not my home"}]})
        );
        let policy = Policy::from_json_str(&written.text, "edited.json").unwrap();
        let eval = policy.evaluate("read_file", &json!({"path": "/home/me/.ssh/id_ed25519"}));
        assert_eq!(
            (eval.action, eval.reason.as_deref()),
            (Action::Deny, Some("not my home"))
        );
        assert_eq!(
            policy.evaluate("read_file", &json!({"path": "/tmp/a"})).action,
            Action::Allow
        );
    }

    #[test]
    fn a_tool_without_an_entry_keeps_the_default_for_other_calls() {
        let seed =
            r#"{"version":"1","default":"require_approval","tools":{"fs_*":{"action":"deny","reason":"no fs"}}}"#;
        let when = json!({"arguments.cmd": {"eq": "ls"}});
        let written = add_tool_rule(seed, "run", &when, true, None).unwrap();
        assert_eq!(
            written.entry,
            json!({"action": "require_approval", "rules": [{"when": when, "action": "allow"}]})
        );
        let policy = Policy::from_json_str(&written.text, "edited.json").unwrap();
        assert_eq!(policy.evaluate("run", &json!({"cmd": "ls"})).action, Action::Allow);
        assert_eq!(
            policy.evaluate("run", &json!({"cmd": "rm -rf /"})).action,
            Action::RequireApproval
        );
        // A tool decided by a glob gets an exact entry that repeats the glob's decision.
        let written = add_tool_rule(
            seed,
            "fs_read",
            &json!({"arguments.path": {"path_under": "/tmp"}}),
            true,
            None,
        )
        .unwrap();
        let policy = Policy::from_json_str(&written.text, "edited.json").unwrap();
        assert_eq!(
            policy.evaluate("fs_read", &json!({"path": "/tmp/a"})).action,
            Action::Allow
        );
        let other = policy.evaluate("fs_read", &json!({"path": "/etc/a"}));
        assert_eq!((other.action, other.reason.as_deref()), (Action::Deny, Some("no fs")));
        // A tool named like a pattern is written under its escaped exact name.
        let written = add_tool_rule(seed, "fs_*", &when, true, None).unwrap();
        assert_eq!(written.key, portcullis_policy::exact_key("fs_*"));
    }

    #[test]
    fn an_allow_never_jumps_a_deny_even_past_a_rule_that_asks() {
        // A rule that asks before a deny: the allow goes after the deny, so the deny keeps deciding
        // what it covers, and the earlier asking rule still asks for what it covers.
        let seed = r#"{"version":"1","tools":{"w":{"rules":[
            {"when":{"arguments.path":{"glob":"*.md"}},"action":"require_approval"},
            {"when":{"arguments.path":{"prefix":"/srv/secret/"}},"action":"deny"}]}}}"#;
        let written = add_tool_rule(
            seed,
            "w",
            &json!({"arguments.path": {"path_under": "/srv"}}),
            true,
            None,
        )
        .unwrap();
        assert_eq!(written.index, 2);
        assert_eq!(decide(&written.text, "w", "/srv/secret/k").0, Action::Deny);
        assert_eq!(decide(&written.text, "w", "/srv/a.md").0, Action::RequireApproval);
        assert_eq!(
            decide(&written.text, "w", "/srv/a.txt"),
            (Action::Allow, "tools.w.rules[2]".into())
        );
    }

    #[test]
    fn a_bad_condition_writes_nothing() {
        let bad = json!({"arguments.path": {"path_under": 3}});
        assert!(add_tool_rule(FILES, "write_file", &bad, true, None).is_err());
        assert!(add_tool_rule(FILES, "write_file", &json!({}), true, None).is_err());
    }
}
