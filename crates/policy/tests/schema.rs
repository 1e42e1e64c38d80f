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
