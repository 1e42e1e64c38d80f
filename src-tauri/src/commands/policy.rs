//! `read_policy`, `validate_policy`, `save_policy`: the policy editor's file, validated by the
//! policy crate, written atomically and reloaded by the gateway's policy store. `explain_policy`:
//! how the text being edited (saved or not) decides each tool, answered by the policy crate's
//! own `explain` — the editor shows that answer and keeps no precedence rules of its own.

use std::sync::Arc;

use portcullis_policy::{Action, CallFacts, Explanation, Matched, Policy};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::host::{Host, Running};
use crate::ipc::{IpcError, IpcResult};

#[derive(Debug, Serialize, TS)]
pub struct PolicyFile {
    /// `None`: the server has no policy file (every call asks a person).
    pub text: Option<String>,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(rename = "PolicyProblem")]
pub struct Problem {
    /// JSON path in the gateway's syntax (`$`, `$.tools["vm_start"].action`).
    pub path: String,
    pub message: String,
}

#[derive(Debug, Serialize, TS)]
#[ts(rename = "ValidationResult")]
pub struct Validation {
    pub problems: Vec<Problem>,
}

/// Which part of the policy decides a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decider {
    /// The `tools` entry under the tool's exact name.
    Entry { key: String },
    /// The most specific matching glob key of `tools`.
    Glob { key: String },
    /// No entry matches: the file's `default`.
    Default,
    /// A `hide` pattern (the tool's exact name, or a glob).
    Hide { pattern: String },
}

/// The action a tool gets from its deciding part, for a call without arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "DecidedAction")]
pub enum ToolAction {
    Allow,
    Deny,
    RequireApproval,
    Hide,
}

impl From<Action> for ToolAction {
    fn from(a: Action) -> Self {
        match a {
            Action::Allow => ToolAction::Allow,
            Action::Deny => ToolAction::Deny,
            Action::RequireApproval => ToolAction::RequireApproval,
            Action::Hide => ToolAction::Hide,
        }
    }
}

/// How the policy decides one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ToolDecision {
    pub tool: String,
    pub decider: Decider,
    /// The deciding entry's own action (its argument rules are not tried: the editor shows the
    /// tool's state, not one call's), the default's, or `hide`.
    pub action: ToolAction,
    /// The decision's stable rule name for a call without arguments (`tools.<key>`, …).
    pub rule: String,
    /// `portcullis policy explain`'s lines for a call without arguments.
    pub lines: Vec<String>,
}

/// The answer of `explain_policy`: the text's problems, or how it decides each tool asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(rename = "PolicyExplanation")]
pub struct ExplainAnswer {
    /// Non-empty: the text is not a valid policy and `tools` is empty.
    pub problems: Vec<Problem>,
    pub tools: Vec<ToolDecision>,
}

fn decision_of(e: &Explanation) -> ToolDecision {
    let decider = match &e.matched {
        Matched::Hidden { pattern } => Decider::Hide {
            pattern: pattern.clone(),
        },
        Matched::Exact { key, .. } => Decider::Entry { key: key.clone() },
        Matched::Glob { key, .. } => Decider::Glob { key: key.key.clone() },
        Matched::Default => Decider::Default,
    };
    let action = match (&e.matched, e.entry_action) {
        (Matched::Hidden { .. }, _) => ToolAction::Hide,
        (_, Some(own)) => own.into(),
        (_, None) => e.evaluation.action.into(),
    };
    ToolDecision {
        tool: e.tool.clone(),
        decider,
        action,
        rule: e.evaluation.rule.to_string(),
        lines: e.lines(),
    }
}

/// How `text` decides each of `tools` (the same code `portcullis policy explain` runs).
pub fn explain_text(text: &str, source: &str, tools: &[String]) -> ExplainAnswer {
    match Policy::from_json_str(text, source) {
        Ok(policy) => {
            let no_arguments = serde_json::Value::Null;
            let facts = CallFacts::arguments(&no_arguments);
            ExplainAnswer {
                problems: Vec::new(),
                tools: tools.iter().map(|t| decision_of(&policy.explain(t, &facts))).collect(),
            }
        }
        Err(_) => ExplainAnswer {
            problems: problems(text, source),
            tools: Vec::new(),
        },
    }
}

fn known(running: &Running, server: &str) -> IpcResult<std::path::PathBuf> {
    if !running.gateway.has_server(server) {
        return Err(IpcError::unknown_server(server));
    }
    Ok(running.gateway.policy_path(server))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn read_policy(host: State<'_, Arc<Host>>, server: String) -> IpcResult<PolicyFile> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(IpcError::new(
                "policy_unreadable",
                format!("cannot read {}: {e}", path.display()),
            ))
        }
    };
    Ok(PolicyFile {
        text,
        path: shown_path(&path).display().to_string(),
    })
}

/// The path as a person reads it: `demo/../policies/x.json` becomes the folder's real, absolute
/// path (the file itself may not exist yet, its folder usually does); else the path as given.
fn shown_path(path: &std::path::Path) -> std::path::PathBuf {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return path.to_path_buf();
    };
    std::fs::canonicalize(dir).map_or_else(|_| path.to_path_buf(), |dir| dir.join(name))
}

/// Every problem of `text` as a policy (empty: valid).
pub fn problems(text: &str, source: &str) -> Vec<Problem> {
    match Policy::from_json_str(text, source) {
        Ok(_) => Vec::new(),
        Err(e) => e
            .problems
            .into_iter()
            .map(|p| Problem {
                path: p.path,
                message: p.message,
            })
            .collect(),
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn validate_policy(host: State<'_, Arc<Host>>, server: String, text: String) -> IpcResult<Validation> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    Ok(Validation {
        problems: problems(&text, &path.display().to_string()),
    })
}

/// How the policy text being edited — not necessarily saved — decides each of `tools`.
#[tauri::command(rename_all = "snake_case")]
pub async fn explain_policy(
    host: State<'_, Arc<Host>>,
    server: String,
    text: String,
    tools: Vec<String>,
) -> IpcResult<ExplainAnswer> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    Ok(explain_text(&text, &path.display().to_string(), &tools))
}

/// Writes a valid policy atomically and reloads it at once (the file watcher would too, a
/// moment later); an invalid one is not written and its problems come back.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_policy(host: State<'_, Arc<Host>>, server: String, text: String) -> IpcResult<Validation> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    let problems = problems(&text, &path.display().to_string());
    if !problems.is_empty() {
        return Ok(Validation { problems });
    }
    // Under the file's lock, so a decision's "always" write is not interleaved with this save.
    let policy_file = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrShared);
    portcullis_atomic_file::lock(&path)
        .and_then(|locked| locked.write(text.as_bytes(), policy_file))
        .map_err(|e| IpcError::new("policy_write_failed", format!("cannot write {}: {e}", path.display())))?;
    running.gateway.reload_policy(&server);
    tracing::info!(server, path = %path.display(), "policy saved from the editor");
    Ok(Validation { problems })
}

/// The golden answers the UI's mock backend gives for `explain_policy`, from the workspace root:
/// each case's `text` and `tools` are the input, its `answer` is written by the test below.
pub const GOLDEN_PATH: &str = "ui/src/lib/__fixtures__/policy-explain.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_path_is_shown_without_dot_dot() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("demo")).unwrap();
        std::fs::create_dir_all(dir.path().join("policies")).unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let shown = shown_path(&dir.path().join("demo/../policies/fs.json"));
        assert_eq!(shown, real.join("policies/fs.json"), "the file need not exist yet");
        let nowhere = std::path::Path::new("/no/such/dir/fs.json");
        assert_eq!(
            shown_path(nowhere),
            nowhere,
            "a folder that is not there: the path as given"
        );
    }

    #[derive(Serialize)]
    struct GoldenCase {
        text: String,
        tools: Vec<String>,
        answer: ExplainAnswer,
    }

    #[derive(Serialize)]
    struct Golden {
        about: &'static str,
        cases: Vec<GoldenCase>,
    }

    const ABOUT: &str =
        "Answers of explain_policy for the UI's mock backend, written by src-tauri/src/commands/policy.rs. \
        Add a case with its text and tools, then: PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib golden";

    /// The file as the test writes it: every case's input kept, its answer computed here.
    fn render_golden(have: &str) -> String {
        let file: serde_json::Value = serde_json::from_str(have).expect("the golden file is JSON");
        let cases = file["cases"]
            .as_array()
            .expect("the golden file has cases")
            .iter()
            .map(|case| {
                let text = case["text"].as_str().expect("a case has text").to_owned();
                let tools: Vec<String> = serde_json::from_value(case["tools"].clone()).expect("a case has tools");
                let answer = explain_text(&text, "policy.json", &tools);
                GoldenCase { text, tools, answer }
            })
            .collect();
        let golden = Golden { about: ABOUT, cases };
        serde_json::to_string_pretty(&golden).unwrap() + "\n"
    }

    #[test]
    fn golden_explanations_match_the_committed_file() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(GOLDEN_PATH);
        let have = std::fs::read_to_string(&path).unwrap();
        let want = render_golden(&have);
        if std::env::var_os("PORTCULLIS_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        assert!(
            have == want,
            "{GOLDEN_PATH} is out of date with the policy crate's explain; regenerate it with \
             `PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib golden` and commit it"
        );
    }

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn explain_names_the_deciding_part_of_unsaved_text() {
        let text = r#"{
          "version": "1",
          "default": "deny",
          "hide": ["secret_*", "drop_table"],
          "tools": {
            "read_*": {},
            "read_file": { "action": "require_approval", "rules": [ { "when": { "arguments.path": { "prefix": "/tmp/" } }, "action": "allow" } ] },
            "write_*": { "rate_limit": { "max": 5, "window": 60 } },
            "write_f*": { "action": "deny", "reason": "no" },
            "secret_read": {}
          }
        }"#;
        let answer = explain_text(
            text,
            "x.json",
            &tools(&[
                "read_file",
                "read_dir",
                "write_file",
                "write_x",
                "secret_read",
                "drop_table",
                "other",
            ]),
        );
        assert!(answer.problems.is_empty(), "{:?}", answer.problems);
        let got: Vec<(&str, &Decider, ToolAction, &str)> = answer
            .tools
            .iter()
            .map(|d| (d.tool.as_str(), &d.decider, d.action, d.rule.as_str()))
            .collect();
        let entry = |k: &str| Decider::Entry { key: k.into() };
        let glob = |k: &str| Decider::Glob { key: k.into() };
        let hide = |k: &str| Decider::Hide { pattern: k.into() };
        assert_eq!(
            got,
            vec![
                // The exact name beats the glob; its own action is shown, not a rule's.
                (
                    "read_file",
                    &entry("read_file"),
                    ToolAction::RequireApproval,
                    "tools.read_file"
                ),
                ("read_dir", &glob("read_*"), ToolAction::Allow, "tools.read_*"),
                // The more specific glob wins.
                ("write_file", &glob("write_f*"), ToolAction::Deny, "tools.write_f*"),
                ("write_x", &glob("write_*"), ToolAction::Allow, "tools.write_*"),
                // Hiding wins over an entry.
                ("secret_read", &hide("secret_*"), ToolAction::Hide, "hide: secret_*"),
                ("drop_table", &hide("drop_table"), ToolAction::Hide, "hide: drop_table"),
                ("other", &Decider::Default, ToolAction::Deny, "default"),
            ]
        );
        assert!(
            answer.tools[2].lines.iter().any(|l| l.contains("write_*")),
            "{:?}",
            answer.tools[2].lines
        );
    }

    #[test]
    fn explain_of_invalid_text_returns_its_problems_and_no_tools() {
        let answer = explain_text(
            r#"{"version": "1", "tools": {"a": {"action": "maybe"}}}"#,
            "x.json",
            &tools(&["a"]),
        );
        assert!(answer.tools.is_empty());
        assert!(
            answer.problems[0].path.starts_with("$.tools[\"a\"]"),
            "{:?}",
            answer.problems
        );
    }

    #[test]
    fn problems_carry_the_gateway_json_path() {
        assert!(problems(r#"{"version": "1", "default": "deny"}"#, "x.json").is_empty());
        let p = problems(r#"{"version": "1", "tools": {"a": {"action": "maybe"}}}"#, "x.json");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].path.starts_with("$.tools[\"a\"]"), "{p:?}");
        let p = problems("{", "x.json");
        assert_eq!(p[0].path, "$");
    }
}
