//! A tool's [`ToolClass`] guessed from what the server says of it, for a tool whose policy
//! entry sets no `class`: the starter policy, the prompt, the app's tool list.
//!
//! The class comes from the tool's name (every word counts, the worst wins), else its
//! description. Annotations are untrusted (MCP.md): they may raise the class — an explicit
//! `destructiveHint: true` makes it delete, an explicit `readOnlyHint: false` at least write —
//! and never lower it. "Worst" is by `severity`: unknown (no evidence) < read < write < execute
//! < delete.

use serde_json::Value;

use crate::model::ToolClass;

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

fn class_of_word(word: &str) -> ToolClass {
    let w = word.to_ascii_lowercase();
    let w = w.as_str();
    let stem = w
        .strip_suffix("es")
        .filter(|s| DELETE.contains(s) || WRITE.contains(s))
        .or_else(|| w.strip_suffix('s'))
        .unwrap_or(w);
    let is = |list: &[&str]| list.contains(&w) || list.contains(&stem);
    if is(DELETE) {
        ToolClass::Delete
    } else if is(EXECUTE) {
        ToolClass::Execute
    } else if is(WRITE) {
        ToolClass::Write
    } else if is(READ) {
        ToolClass::Read
    } else {
        ToolClass::Unknown
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

/// How much harm a class stands for, for "the worst wins". Not `Ord` on [`ToolClass`]: a policy
/// file lists `unknown` last, and the starter policy groups it last too.
fn severity(class: ToolClass) -> u8 {
    match class {
        ToolClass::Unknown => 0,
        ToolClass::Read => 1,
        ToolClass::Write => 2,
        ToolClass::Execute => 3,
        ToolClass::Delete => 4,
    }
}

fn worst(a: ToolClass, b: ToolClass) -> ToolClass {
    if severity(b) > severity(a) {
        b
    } else {
        a
    }
}

fn class_of_text(text: &str, max_words: usize) -> ToolClass {
    words(text)
        .iter()
        .take(max_words)
        .map(|w| class_of_word(w))
        .fold(ToolClass::Unknown, worst)
}

/// The class of a tool from its name, description and annotations.
pub fn tool_class(name: &str, description: Option<&str>, annotations: Option<&Value>) -> ToolClass {
    let mut class = class_of_text(name, 16);
    if class == ToolClass::Unknown {
        // Only the opening words: a description goes on to mention what the tool does *not* do.
        class = description.map_or(ToolClass::Unknown, |d| class_of_text(d, 3));
    }
    if let Some(annotations) = annotations {
        let flag = |k: &str| annotations.get(k).and_then(Value::as_bool);
        if flag("destructiveHint") == Some(true) && flag("readOnlyHint") != Some(true) {
            class = worst(class, ToolClass::Delete);
        } else if flag("readOnlyHint") == Some(false) {
            class = worst(class, ToolClass::Write);
        }
    }
    class
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case("pve_get_task_status", None, None, ToolClass::Read)]
    #[case("vm_agent_exec_status", None, None, ToolClass::Execute)]
    #[case("vm_delete", None, None, ToolClass::Delete)]
    #[case("write_file", None, None, ToolClass::Write)]
    #[case("createIssue", None, None, ToolClass::Write)]
    #[case("git_reset", None, None, ToolClass::Write)]
    #[case("frobnicate", Some("Deletes the widget"), None, ToolClass::Delete)]
    #[case("frobnicate", None, None, ToolClass::Unknown)]
    #[case("rollback_vm_snapshot", None, None, ToolClass::Delete)]
    #[case("cloudron_uninstall_app", None, None, ToolClass::Delete)]
    #[case("cloudron_install_app", None, None, ToolClass::Execute)]
    #[case("suspend_vm", None, None, ToolClass::Execute)]
    #[case("resize_vm_disk", None, None, ToolClass::Write)]
    #[case("dump_vm_cloudinit", None, None, ToolClass::Read)]
    #[case("echo", None, Some(json!({"readOnlyHint": true, "destructiveHint": false})), ToolClass::Read)]
    #[case("echo", None, Some(json!({"destructiveHint": true})), ToolClass::Delete)]
    #[case("read_file", None, Some(json!({"readOnlyHint": false})), ToolClass::Write)]
    fn classes(
        #[case] name: &str,
        #[case] description: Option<&str>,
        #[case] annotations: Option<Value>,
        #[case] expected: ToolClass,
    ) {
        assert_eq!(tool_class(name, description, annotations.as_ref()), expected);
    }

    #[test]
    fn annotations_never_lower_the_class() {
        let calm = json!({"readOnlyHint": true, "destructiveHint": false});
        assert_eq!(tool_class("delete_vm", None, Some(&calm)), ToolClass::Delete);
    }
}
