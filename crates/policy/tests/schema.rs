//! The committed JSON Schema and README stay in step with the Rust types.

use std::path::PathBuf;

use portcullis_policy::model::RawPolicy;
use serde_json::{json, Value};

fn repo_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(name)
}

fn schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&portcullis_policy::json_schema()).expect("the schema serializes");
    text.push('\n');
    text
}

#[test]
fn schema_file_is_up_to_date() {
    let path = repo_file("policies/policy.schema.json");
    let expected = schema_text();
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).expect("write policies/policy.schema.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "policies/policy.schema.json is out of date with the policy types; regenerate it with \
         `UPDATE_SCHEMA=1 cargo test -p portcullis-policy --test schema` and commit the result"
    );
}

/// Property names of the schema object at `pointer` (`""` for the root).
fn properties(schema: &Value, pointer: &str) -> Vec<String> {
    schema
        .pointer(&format!("{pointer}/properties"))
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("the schema has properties at {pointer:?}"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn readme_mentions_every_field() {
    let readme = std::fs::read_to_string(repo_file("policies/README.md")).expect("read policies/README.md");
    let schema = portcullis_policy::json_schema();
    for pointer in [
        "",
        "/$defs/RawToolEntry",
        "/$defs/RawRateLimit",
        "/$defs/RawRule",
        "/$defs/RawCondition",
        "/$defs/RawServerRequests",
        "/$defs/RawResourceEntry",
    ] {
        for name in properties(&schema, pointer) {
            assert!(
                readme.contains(&format!("`{name}`")),
                "policies/README.md must document `{name}` (schema {pointer:?}); document it when adding a field"
            );
        }
    }
}

/// Documents the loader accepts; serde's derived reading of the raw types must accept them
/// too, or the schema (generated from those types) describes another format.
#[test]
fn raw_types_agree_with_loader_on_valid_files() {
    let documents = [
        json!({"version": "1"}),
        json!({"version":"1","default":"deny","tools":{"vm_agent_exec_status":{}}}),
        json!({
            "version": "1",
            "default": "allow",
            "hide": ["delete_*"],
            "approval_timeout": 45,
            "redact": ["session_key"],
            "tools": {
                "z_first": {},
                "pve_get_*_status": { "rate_limit": { "max": 10, "window": 60 }, "class": "read", "risk": "low" },
                "vm_start": { "action": "require_approval", "approval_timeout": 120, "reason": "why" },
                "execute_query": {
                    "action": "require_approval",
                    "rules": [
                        { "when": { "arguments.query": { "regex": "^SELECT", "contains": "x" } }, "action": "allow" },
                        { "when": { "arguments.n": { "eq": null, "ne": 1, "in": [1], "not_in": [2], "gt": 1, "gte": 1.5, "lt": 3, "lte": 3, "exists": true } },
                          "action": "deny", "reason": "r" }
                    ]
                }
            }
        }),
        json!({
            "version": "1",
            "default": "deny",
            "resources": {
                "file:///home/me/*": { "rate_limit": { "max": 1, "window": 1 }, "class": "read", "risk": "low" },
                "file:///home/me/.ssh/*": { "action": "hide", "reason": "keys" },
                "https://example.com/x": {
                    "action": "require_approval",
                    "approval_timeout": 5,
                    "rules": [ { "when": { "uri": { "prefix": "https://" }, "client.name": { "eq": "c" } }, "action": "allow", "reason": "r" } ]
                }
            },
            "prompts": {
                "review": {},
                "secret_*": { "action": "hide" },
                "summarize": { "rules": [ { "when": { "arguments.style": { "in": ["a"] }, "client.version": { "exists": true } }, "action": "deny" } ] }
            },
            "server_requests": {
                "sampling": { "action": "require_approval", "rules": [ { "when": { "max_tokens": { "gt": 1 }, "system_prompt": { "regex": "x" } }, "action": "deny" } ] },
                "elicitation": { "rules": [ { "when": { "mode": { "eq": "url" }, "url": { "prefix": "https://" }, "url.host": { "eq": "h" }, "schema.fields": { "contains": "p" }, "message": { "glob": "*" } }, "action": "allow" } ] },
                "roots": { "action": "hide", "rules": [] }
            }
        }),
        json!({"version": "1", "server_requests": {}}),
    ];
    for document in documents {
        portcullis_policy::Policy::from_json_str(&document.to_string(), "doc.json")
            .unwrap_or_else(|err| panic!("the loader accepts {document}:\n{err}"));
        let raw: RawPolicy = serde_path_to_error::deserialize(&document)
            .unwrap_or_else(|err| panic!("RawPolicy accepts {document}: {} at {}", err.inner(), err.path()));
        let keys: Vec<&str> = raw.tools.0.iter().map(|(k, _)| k.as_str()).collect();
        let expected: Vec<&str> = document["tools"]
            .as_object()
            .map(|t| t.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, expected, "tools keep file order");
    }
}

/// Structural mistakes serde's derived reading refuses; the loader must refuse them too.
#[test]
fn raw_types_agree_with_loader_on_invalid_files() {
    let documents = [
        json!({}),
        json!({"version": "2"}),
        json!({"version": "1", "extra": 1}),
        json!({"version": "1", "default": "alow"}),
        json!({"version": "1", "hide": "x"}),
        json!({"version": "1", "tools": {"a": {"acton": "deny"}}}),
        json!({"version": "1", "tools": {"a": {"rate_limit": {"max": 1}}}}),
        json!({"version": "1", "tools": {"a": {"rules": [{"action": "deny"}]}}}),
        json!({"version": "1", "tools": {"a": {"rules": [{"when": {"arguments.x": {"equals": 1}}, "action": "deny"}]}}}),
        json!({"version": "1", "tools": {"a": {"class": "destroy"}}}),
        json!({"version": "1", "tools": {"a": {"action": "hide"}}}),
        json!({"version": "1", "resources": {"file:///x": {"acton": "deny"}}}),
        json!({"version": "1", "resources": {"file:///x": {"rules": [{"when": {"client.name": {"eq": 1}}, "action": "hide"}]}}}),
        json!({"version": "1", "prompts": {"p": {"action": "conceal"}}}),
        json!({"version": "1", "prompts": "p"}),
        json!({"version": "1", "server_requests": {"ping": {}}}),
        json!({"version": "1", "server_requests": {"sampling": {"rate_limit": {"window": 1}}}}),
    ];
    for document in documents {
        assert!(
            serde_json::from_value::<RawPolicy>(document.clone()).is_err(),
            "RawPolicy refuses {document}"
        );
        assert!(
            portcullis_policy::Policy::from_json_str(&document.to_string(), "doc.json").is_err(),
            "the loader refuses {document}"
        );
    }
}

/// Each section's `when` keys, as the schema's `propertyNames` pattern admits them, are the
/// keys the loader accepts there.
#[test]
fn when_key_patterns_agree_with_the_loader() {
    let schema = portcullis_policy::json_schema();
    let keys = [
        "arguments.a",
        "arguments.a.0.b",
        "arguments",
        "arguments.",
        "client.name",
        "client.version",
        "client.os",
        "uri",
        "uri.host",
        "system_prompt",
        "max_tokens",
        "mode",
        "url",
        "url.host",
        "schema.fields",
        "message",
        "schema",
        "Message",
    ];
    let sections: [(&str, Value); 6] = [
        ("RawRule", json!({"tools": {"k": {"rules": "RULES"}}})),
        (
            "RawResourceRule",
            json!({"resources": {"file:///k": {"rules": "RULES"}}}),
        ),
        ("RawPromptRule", json!({"prompts": {"k": {"rules": "RULES"}}})),
        (
            "RawSamplingRule",
            json!({"server_requests": {"sampling": {"rules": "RULES"}}}),
        ),
        (
            "RawElicitationRule",
            json!({"server_requests": {"elicitation": {"rules": "RULES"}}}),
        ),
        (
            "RawRootsRule",
            json!({"server_requests": {"roots": {"rules": "RULES"}}}),
        ),
    ];
    for (definition, shape) in sections {
        let pattern = schema
            .pointer(&format!("/$defs/{definition}/properties/when/propertyNames/pattern"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{definition} has a when pattern"));
        let pattern = regex::Regex::new(pattern).expect("the pattern compiles");
        for key in keys {
            let rules = json!([{ "when": { key: { "exists": true } }, "action": "deny" }]);
            let mut text = shape.to_string().replace("\"RULES\"", &rules.to_string());
            text.insert_str(1, "\"version\": \"1\", ");
            let loads = portcullis_policy::Policy::from_json_str(&text, "doc.json").is_ok();
            assert_eq!(pattern.is_match(key), loads, "{definition}: {key}");
        }
    }
}
