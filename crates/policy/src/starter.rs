//! A starter policy from a server's live tool list (`portcullis policy init`).
//!
//! Each tool gets a class from [`crate::guess::tool_class`] (name, then description; annotations
//! may raise it, never lower it) and a risk level derived from the class, and an entry that
//! follows from the class:
//!
//! | class   | risk     | entry                                            |
//! |---------|----------|--------------------------------------------------|
//! | read    | low      | allow                                            |
//! | write   | medium   | allow, at most [`WRITE_RATE_LIMIT`] per session  |
//! | execute | high     | require approval                                 |
//! | delete  | critical | require approval                                 |
//! | unknown | high     | require approval (fail closed)                   |
//!
//! `openWorldHint: true` (the tool reaches outside the server: the web, other systems) raises
//! the risk one level. The class and risk are written beside each entry; they are annotations
//! the gateway records and shows, never what decides. `default` is `require_approval`, so a tool
//! the server adds later asks a person.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::model::{Risk, ToolClass};
use crate::{guess, Policy, PolicyError};

/// The rate limit of write tools: (calls, window in seconds). Ten a minute lets an agent do a
/// task's worth of edits and stops a loop from doing hundreds.
pub const WRITE_RATE_LIMIT: (u32, u64) = (10, 60);

/// What the starter policy does with a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StarterRule {
    Allow,
    RateLimited { max: u32, window: u64 },
    RequireApproval,
}

impl std::fmt::Display for StarterRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Allow => f.write_str("allow"),
            Self::RateLimited { max, window } => write!(f, "allow, {max}/{window}s"),
            Self::RequireApproval => f.write_str("require_approval"),
        }
    }
}

/// One tool as the starter policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifiedTool {
    pub name: String,
    pub class: ToolClass,
    pub risk: Risk,
    pub rule: StarterRule,
}

/// The generated file and how each tool was classified (in file order).
#[derive(Debug, Clone)]
pub struct StarterPolicy {
    /// The policy file's text, valid by construction (checked before it is returned).
    pub text: String,
    pub tools: Vec<ClassifiedTool>,
    /// Tools left out: no string `name`, or a name listed twice (first one kept).
    pub skipped: Vec<String>,
}

/// Classifies one `tools/list` entry; `None` when it has no name.
pub fn classify_tool(tool: &Value) -> Option<ClassifiedTool> {
    let name = tool.get("name")?.as_str()?;
    let description = tool.get("description").and_then(Value::as_str);
    let annotations = tool.get("annotations");
    let class = guess::tool_class(name, description, annotations);
    let mut risk = class_risk(class);
    if annotations
        .and_then(|a| a.get("openWorldHint"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        risk = raise(risk);
    }
    let rule = match class {
        ToolClass::Read => StarterRule::Allow,
        ToolClass::Write => StarterRule::RateLimited {
            max: WRITE_RATE_LIMIT.0,
            window: WRITE_RATE_LIMIT.1,
        },
        ToolClass::Execute | ToolClass::Delete | ToolClass::Unknown => StarterRule::RequireApproval,
    };
    Some(ClassifiedTool {
        name: name.to_owned(),
        class,
        risk,
        rule,
    })
}

/// The starter policy for `tools` (a server's `tools/list` entries, all pages).
pub fn starter_policy(tools: &[Value]) -> Result<StarterPolicy, PolicyError> {
    let mut seen = HashSet::new();
    let mut skipped = Vec::new();
    let mut classified = Vec::new();
    for tool in tools {
        match classify_tool(tool) {
            Some(c) if seen.insert(c.name.clone()) => classified.push(c),
            Some(c) => skipped.push(format!("{} (listed twice)", c.name)),
            None => skipped.push(format!("{} (no name)", inline(tool))),
        }
    }
    // Grouped by class, most harmless first; within a class the server's own order.
    classified.sort_by_key(|c| class_rank(c.class));
    let text = render(&classified);
    Policy::from_json_str(&text, "starter policy")?;
    Ok(StarterPolicy {
        text,
        tools: classified,
        skipped,
    })
}

fn render(tools: &[ClassifiedTool]) -> String {
    let mut out = String::from("{\n  \"version\": \"1\",\n  \"default\": \"require_approval\",\n  \"tools\": {");
    for (i, tool) in tools.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str("    ");
        out.push_str(&inline(&Value::String(crate::exact_key(&tool.name))));
        out.push_str(": ");
        out.push_str(&inline(&entry(tool)));
    }
    out.push_str(if tools.is_empty() { "}\n}\n" } else { "\n  }\n}\n" });
    out
}

fn entry(tool: &ClassifiedTool) -> Value {
    let mut entry = Map::new();
    match tool.rule {
        StarterRule::Allow => {
            entry.insert("action".into(), json!("allow"));
        }
        StarterRule::RateLimited { max, window } => {
            entry.insert("action".into(), json!("allow"));
            entry.insert("rate_limit".into(), json!({ "max": max, "window": window }));
        }
        StarterRule::RequireApproval => {
            entry.insert("action".into(), json!("require_approval"));
        }
    }
    entry.insert("class".into(), json!(tool.class));
    entry.insert("risk".into(), json!(tool.risk));
    Value::Object(entry)
}

/// JSON on one line, with a space after `:` and `,` inside objects (the hand-written style of
/// the shipped policies).
fn inline(value: &Value) -> String {
    match value {
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), inline(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The risk level a class gets in a starter policy (the table above), before `openWorldHint`;
/// the prompt gives the same level to a class the policy sets without a `risk`.
pub fn class_risk(class: ToolClass) -> Risk {
    match class {
        ToolClass::Read => Risk::Low,
        ToolClass::Write => Risk::Medium,
        ToolClass::Execute | ToolClass::Unknown => Risk::High,
        ToolClass::Delete => Risk::Critical,
    }
}

fn raise(risk: Risk) -> Risk {
    match risk {
        Risk::Low => Risk::Medium,
        Risk::Medium => Risk::High,
        Risk::High | Risk::Critical => Risk::Critical,
    }
}

fn class_rank(class: ToolClass) -> u8 {
    match class {
        ToolClass::Read => 0,
        ToolClass::Write => 1,
        ToolClass::Execute => 2,
        ToolClass::Delete => 3,
        ToolClass::Unknown => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Action;
    use rstest::rstest;

    fn tool(name: &str, annotations: Option<Value>) -> Value {
        let mut t = json!({ "name": name, "inputSchema": { "type": "object" } });
        if let Some(a) = annotations {
            t["annotations"] = a;
        }
        t
    }

    #[rstest]
    #[case("get_vm_status", None, ToolClass::Read, Risk::Low, StarterRule::Allow)]
    #[case("update_vm_config", None, ToolClass::Write, Risk::Medium, StarterRule::RateLimited { max: 10, window: 60 })]
    #[case("start_vm", None, ToolClass::Execute, Risk::High, StarterRule::RequireApproval)]
    #[case("delete_vm", None, ToolClass::Delete, Risk::Critical, StarterRule::RequireApproval)]
    #[case("frobnicate", None, ToolClass::Unknown, Risk::High, StarterRule::RequireApproval)]
    #[case("echo", Some(json!({"readOnlyHint": true})), ToolClass::Read, Risk::Low, StarterRule::Allow)]
    #[case("echo", Some(json!({"destructiveHint": true})), ToolClass::Delete, Risk::Critical, StarterRule::RequireApproval)]
    #[case("fetch", Some(json!({"readOnlyHint": true, "openWorldHint": true})), ToolClass::Read, Risk::Medium, StarterRule::Allow)]
    #[case("delete_vm", Some(json!({"readOnlyHint": true, "destructiveHint": false})), ToolClass::Delete, Risk::Critical, StarterRule::RequireApproval)]
    fn class_risk_and_rule(
        #[case] name: &str,
        #[case] annotations: Option<Value>,
        #[case] class: ToolClass,
        #[case] risk: Risk,
        #[case] rule: StarterRule,
    ) {
        let c = classify_tool(&tool(name, annotations)).expect("a named tool is classified");
        assert_eq!((c.class, c.risk, c.rule), (class, risk, rule), "{name}");
    }

    #[test]
    fn the_file_decides_as_the_table_says_and_records_class_and_risk() {
        let tools = [
            tool("delete_vm", None),
            tool("get_vm_status", None),
            tool("set_x", None),
        ];
        let starter = starter_policy(&tools).expect("a valid policy");
        let policy = Policy::from_json_str(&starter.text, "t").expect("loads");
        let decide = |name: &str| policy.evaluate(name, &Value::Null).action;
        assert_eq!(decide("get_vm_status"), Action::Allow);
        assert_eq!(decide("set_x"), Action::Allow);
        assert_eq!(decide("delete_vm"), Action::RequireApproval);
        assert_eq!(decide("not_listed"), Action::RequireApproval, "default fails closed");
        let names: Vec<&str> = starter.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["get_vm_status", "set_x", "delete_vm"],
            "grouped read, write, delete"
        );
        let doc: Value = serde_json::from_str(&starter.text).expect("JSON");
        assert_eq!(
            doc["tools"]["set_x"],
            json!({"action": "allow", "rate_limit": {"max": 10, "window": 60}, "class": "write", "risk": "medium"})
        );
    }

    #[test]
    fn glob_characters_in_a_name_match_only_that_name() {
        let starter = starter_policy(&[tool("get*[x]?", None)]).expect("valid");
        assert!(starter.text.contains(r#""get[*][[]x][?]""#), "{}", starter.text);
        let policy = Policy::from_json_str(&starter.text, "t").expect("loads");
        assert_eq!(policy.evaluate("get*[x]?", &Value::Null).action, Action::Allow);
        assert_eq!(
            policy.evaluate("get_anything_x_", &Value::Null).action,
            Action::RequireApproval
        );
    }

    #[test]
    fn nameless_and_repeated_tools_are_skipped_and_reported() {
        let starter =
            starter_policy(&[tool("list", None), json!({"description": "x"}), tool("list", None)]).expect("valid");
        assert_eq!(starter.tools.len(), 1);
        assert_eq!(starter.skipped.len(), 2, "{:?}", starter.skipped);
    }

    #[test]
    fn no_tools_gives_a_valid_policy_that_asks_for_everything() {
        let starter = starter_policy(&[]).expect("valid");
        let policy = Policy::from_json_str(&starter.text, "t").expect("loads");
        assert_eq!(policy.evaluate("x", &Value::Null).action, Action::RequireApproval);
    }
}
