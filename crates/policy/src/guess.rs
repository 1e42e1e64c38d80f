//! Risk classes of tools: read < write < execute < delete, or unknown.
//!
//! The class comes from the tool's name (every word counts, the worst wins), else its
//! description. Annotations are untrusted (MCP.md): they may raise the class — an explicit
//! `destructiveHint: true` makes it delete, an explicit `readOnlyHint: false` at least write —
//! and never lower it.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Unknown,
    Read,
    Write,
    Execute,
    Delete,
}

const DELETE: &[&str] = &[
    "delete",
    "remove",
    "rm",
    "drop",
    "destroy",
    "purge",
    "erase",
    "wipe",
    "truncate",
    "kill",
    "terminate",
    "unlink",
    "revoke",
    "uninstall",
    "prune",
    "rollback",
    "restore",
];
const EXECUTE: &[&str] = &[
    "exec", "execute", "run", "eval", "shell", "command", "cmd", "spawn", "launch", "start", "stop", "restart",
    "reboot", "shutdown", "script", "invoke", "trigger", "deploy", "migrate", "install", "upgrade", "suspend",
    "resume", "pause", "cancel", "abort", "repair", "relocate",
];
const WRITE: &[&str] = &[
    "write", "create", "update", "edit", "set", "put", "post", "insert", "modify", "move", "rename", "upload", "send",
    "commit", "push", "reset", "apply", "patch", "add", "save", "toggle", "enable", "disable", "merge", "checkout",
    "clone", "copy", "mkdir", "make", "new", "change", "replace", "assign", "grant", "publish", "archive", "resize",
    "convert", "register", "allocate", "import", "upsert",
];
const READ: &[&str] = &[
    "get", "list", "read", "search", "find", "query", "show", "describe", "fetch", "status", "view", "count", "check",
    "echo", "info", "diff", "log", "lookup", "inspect", "browse", "tree", "sum", "head", "tail", "stat", "download",
    "ping", "validate", "explain", "dump", "export",
];

fn class_of_word(word: &str) -> Risk {
    let w = word.to_ascii_lowercase();
    let w = w.as_str();
    let stem = w
        .strip_suffix("es")
        .filter(|s| DELETE.contains(s) || WRITE.contains(s))
        .or_else(|| w.strip_suffix('s'))
        .unwrap_or(w);
    let is = |list: &[&str]| list.contains(&w) || list.contains(&stem);
    if is(DELETE) {
        Risk::Delete
    } else if is(EXECUTE) {
        Risk::Execute
    } else if is(WRITE) {
        Risk::Write
    } else if is(READ) {
        Risk::Read
    } else {
        Risk::Unknown
    }
}

/// Splits `pve_get_vm_status`, `get-sum`, `createIssue` into words.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase();
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn class_of_text(text: &str, max_words: usize) -> Risk {
    words(text)
        .iter()
        .take(max_words)
        .map(|w| class_of_word(w))
        .max()
        .unwrap_or(Risk::Unknown)
}

/// The risk class of a tool.
pub fn classify(name: &str, description: Option<&str>, annotations: Option<&Value>) -> Risk {
    let mut risk = class_of_text(name, 16);
    if risk == Risk::Unknown {
        // Only the opening words: a description goes on to mention what the tool does *not* do.
        risk = description.map_or(Risk::Unknown, |d| class_of_text(d, 3));
    }
    if let Some(annotations) = annotations {
        let flag = |k: &str| annotations.get(k).and_then(Value::as_bool);
        if flag("destructiveHint") == Some(true) && flag("readOnlyHint") != Some(true) {
            risk = risk.max(Risk::Delete);
        } else if flag("readOnlyHint") == Some(false) {
            risk = risk.max(Risk::Write);
        }
    }
    risk
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case("pve_get_task_status", None, None, Risk::Read)]
    #[case("vm_agent_exec_status", None, None, Risk::Execute)]
    #[case("vm_delete", None, None, Risk::Delete)]
    #[case("write_file", None, None, Risk::Write)]
    #[case("createIssue", None, None, Risk::Write)]
    #[case("git_reset", None, None, Risk::Write)]
    #[case("frobnicate", Some("Deletes the widget"), None, Risk::Delete)]
    #[case("frobnicate", None, None, Risk::Unknown)]
    #[case("rollback_vm_snapshot", None, None, Risk::Delete)]
    #[case("cloudron_uninstall_app", None, None, Risk::Delete)]
    #[case("cloudron_install_app", None, None, Risk::Execute)]
    #[case("suspend_vm", None, None, Risk::Execute)]
    #[case("resize_vm_disk", None, None, Risk::Write)]
    #[case("dump_vm_cloudinit", None, None, Risk::Read)]
    #[case("echo", None, Some(json!({"readOnlyHint": true, "destructiveHint": false})), Risk::Read)]
    #[case("echo", None, Some(json!({"destructiveHint": true})), Risk::Delete)]
    #[case("read_file", None, Some(json!({"readOnlyHint": false})), Risk::Write)]
    fn classes(
        #[case] name: &str,
        #[case] description: Option<&str>,
        #[case] annotations: Option<Value>,
        #[case] expected: Risk,
    ) {
        assert_eq!(classify(name, description, annotations.as_ref()), expected);
    }

    #[test]
    fn annotations_never_lower_the_class() {
        let calm = json!({"readOnlyHint": true, "destructiveHint": false});
        assert_eq!(classify("delete_vm", None, Some(&calm)), Risk::Delete);
    }
}
