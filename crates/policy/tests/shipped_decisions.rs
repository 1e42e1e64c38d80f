//! Every shipped policy (`policies/*.json`, tools-only files) decides tools exactly as it did
//! before the `resources`, `prompts` and `server_requests` sections existed: the decisions below
//! were recorded with the tools-only evaluator, and a change to any of them is a change in
//! behaviour for files that did not ask for one.

use std::fmt::Write as _;
use std::path::PathBuf;

use portcullis_policy::{CallFacts, Places, Policy};
use serde_json::{json, Value};

fn policies_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies")
}

/// The tool names a file is asked about: each of its keys taken as a name (a glob key read
/// literally still matches itself), each hide pattern, and names no entry lists.
fn tool_names(document: &Value) -> Vec<String> {
    let mut names: Vec<String> = document["tools"]
        .as_object()
        .map(|tools| tools.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(hide) = document["hide"].as_array() {
        names.extend(hide.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    names.extend(["unlisted_tool", "delete_everything", "read_file", "vm_start"].map(str::to_owned));
    names
}

/// Argument sets that reach the common rules of the shipped files (paths, queries, commands).
fn argument_sets() -> Vec<Value> {
    vec![
        Value::Null,
        json!({}),
        json!({"path": "/etc/passwd", "command": "rm -rf /", "query": "DROP TABLE x"}),
        json!({"path": "/tmp/x", "command": "ls", "query": "SELECT 1", "node": "pve", "vmid": 100}),
        json!({"path": "relative/../../x", "vmid": "100", "force": "true"}),
        // The rules the shipped files hold: `arguments.method` and `arguments.dryRun`.
        json!({"method": "GET", "dryRun": true}),
        json!({"method": "delete", "dryRun": "true"}),
        json!({"method": "POST", "dryRun": false}),
        json!({"Method": "get", "dryrun": true}),
    ]
}

fn decisions() -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(policies_dir())
        .expect("read policies/")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json") && !path.ends_with("policy.schema.json"))
        .collect();
    files.sort();
    let mut out = String::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read policy");
        let document: Value = serde_json::from_str(&text).expect("JSON");
        let policy = Policy::from_json_str(&text, "p").expect("shipped policy loads");
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        for tool in tool_names(&document) {
            for arguments in argument_sets() {
                for client in [None, Some("claude-code")] {
                    let facts = CallFacts {
                        arguments: &arguments,
                        client_name: client,
                        client_version: None,
                        places: Places::unknown(),
                    };
                    let e = policy.evaluate_call(&tool, &facts);
                    let _ = writeln!(
                        out,
                        "{name} {tool} {arguments} {client:?}: {:?} by {} reason={:?} limit={:?} timeout={:?} hidden={}",
                        e.action,
                        e.rule,
                        e.reason,
                        e.rate_limit.map(|l| (l.max, l.window_secs)),
                        e.approval_timeout_secs,
                        policy.is_hidden(&tool),
                    );
                }
            }
        }
    }
    out
}

#[test]
fn shipped_policies_decide_tools_as_recorded() {
    insta::assert_snapshot!(decisions());
}
