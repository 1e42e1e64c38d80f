//! A starter policy from a server's live lists (`portcullis policy init`): its tools, and the
//! resources, resource templates and prompts it offers.
//!
//! # Tools
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
//!
//! # The other doors
//!
//! The file says what happens at every door, so a person reviewing it sees each decision rather
//! than a default they must remember:
//!
//! - `resources` (when the server declares the `resources` capability): one entry per listed
//!   resource, keyed by its URI in normal form, and one per template, keyed by a glob; reading
//!   is class `read`, allowed at risk low, except secrets and `file:` templates, which ask a
//!   person at risk high (the rules and the key forms: [`resources`]);
//! - `prompts` (when the server declares `prompts`): one entry per listed prompt, `allow`, class
//!   `read`, risk low (a prompt is text the person picks in the client);
//! - `server_requests`, always, one entry each ([`SERVER_REQUESTS`]): `sampling` asks a person
//!   (class `execute`, risk high: the server writes a prompt for the user's model and spends its
//!   tokens), `elicitation` asks a person (class `read`, risk medium: the server asks the person
//!   for data, and the gate lets them see who asks before the client's form does), `roots` is
//!   allowed (class `read`, risk low: the folder list the client chose to share, which servers
//!   such as the filesystem server need to work at all).
//!
//! A resource, template or prompt added later is decided by `default` (asks a person).

pub mod resources;

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::model::{Risk, ToolClass};
use crate::{guess, Policy, PolicyError};
pub use resources::{classify_resource, ClassifiedResource};

/// What the starter policy writes for the server's own requests: (field, rule, class, risk).
pub const SERVER_REQUESTS: [(&str, StarterRule, ToolClass, Risk); 3] = [
    ("sampling", StarterRule::RequireApproval, ToolClass::Execute, Risk::High),
    (
        "elicitation",
        StarterRule::RequireApproval,
        ToolClass::Read,
        Risk::Medium,
    ),
    ("roots", StarterRule::Allow, ToolClass::Read, Risk::Low),
];

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

/// What a server lists, as the starter policy reads it. `None`: the server does not offer that
/// kind (its `initialize` result declares no such capability, or the list could not be read);
/// the file then has no such section.
#[derive(Debug, Clone, Default)]
pub struct Offered {
    /// `tools/list` entries, all pages.
    pub tools: Vec<Value>,
    /// `resources/list` entries, all pages.
    pub resources: Option<Vec<Value>>,
    /// `resources/templates/list` entries, all pages (read with `resources`).
    pub resource_templates: Option<Vec<Value>>,
    /// `prompts/list` entries, all pages.
    pub prompts: Option<Vec<Value>>,
}

/// The generated file and how each tool was classified (in file order).
#[derive(Debug, Clone)]
pub struct StarterPolicy {
    /// The policy file's text, valid by construction (checked before it is returned).
    pub text: String,
    pub tools: Vec<ClassifiedTool>,
    /// Resources, then templates, in the server's order; `None` when the server offers none.
    pub resources: Option<Vec<ClassifiedResource>>,
    /// Prompt names (each allowed, class read, risk low); `None` when the server offers none.
    pub prompts: Option<Vec<String>>,
    /// Tools, resources and prompts left out: no name (or URI), a name listed twice (first one
    /// kept), a URI servers would read differently.
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

/// The starter policy for `tools` (a server's `tools/list` entries, all pages) of a server that
/// offers no resources or prompts: [`starter_policy_for`].
pub fn starter_policy(tools: &[Value]) -> Result<StarterPolicy, PolicyError> {
    starter_policy_for(&Offered {
        tools: tools.to_vec(),
        ..Offered::default()
    })
}

/// The starter policy for everything a server lists (see the module docs).
pub fn starter_policy_for(offered: &Offered) -> Result<StarterPolicy, PolicyError> {
    let mut seen = HashSet::new();
    let mut skipped = Vec::new();
    let mut classified = Vec::new();
    for tool in &offered.tools {
        match classify_tool(tool) {
            Some(c) if seen.insert(c.name.clone()) => classified.push(c),
            Some(c) => skipped.push(format!("{} (listed twice)", c.name)),
            None => skipped.push(format!("{} (no name)", inline(tool))),
        }
    }
    // Grouped by class, most harmless first; within a class the server's own order.
    classified.sort_by_key(|c| class_rank(c.class));
    let resources = offered
        .resources
        .is_some()
        .then(|| classify_resources(offered, &mut skipped));
    let prompts = offered.prompts.as_deref().map(|list| prompt_names(list, &mut skipped));

    let mut sections = vec![(
        "tools",
        classified
            .iter()
            .map(|t| (crate::exact_key(&t.name), entry(t.rule, t.class, t.risk)))
            .collect::<Vec<_>>(),
    )];
    if let Some(resources) = &resources {
        let entries = resources
            .iter()
            .map(|r| (r.key.clone(), entry(r.rule, r.class, r.risk)));
        sections.push(("resources", entries.collect()));
    }
    if let Some(prompts) = &prompts {
        let entries = prompts.iter().map(|name| {
            (
                crate::exact_key(name),
                entry(StarterRule::Allow, ToolClass::Read, Risk::Low),
            )
        });
        sections.push(("prompts", entries.collect()));
    }
    let requests = SERVER_REQUESTS.iter();
    sections.push((
        "server_requests",
        requests
            .map(|(name, rule, class, risk)| ((*name).to_owned(), entry(*rule, *class, *risk)))
            .collect(),
    ));
    let text = render(&sections);
    Policy::from_json_str(&text, "starter policy")?;
    Ok(StarterPolicy {
        text,
        tools: classified,
        resources,
        prompts,
        skipped,
    })
}

/// The listed resources, then the templates, each key once (the first kept).
fn classify_resources(offered: &Offered, skipped: &mut Vec<String>) -> Vec<ClassifiedResource> {
    let mut seen = HashSet::new();
    let listed = offered.resources.iter().flatten().map(|r| (r, false));
    let templates = offered.resource_templates.iter().flatten().map(|r| (r, true));
    let mut out = Vec::new();
    for (resource, template) in listed.chain(templates) {
        match classify_resource(resource, template) {
            Ok(c) if seen.insert(c.key.clone()) => out.push(c),
            Ok(c) => skipped.push(format!("resource {} (listed twice)", c.listed)),
            Err(why) => skipped.push(format!("resource {why}")),
        }
    }
    out
}

/// The listed prompts' names, each once.
fn prompt_names(prompts: &[Value], skipped: &mut Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for prompt in prompts {
        match prompt.get("name").and_then(Value::as_str) {
            Some(name) if seen.insert(name.to_owned()) => out.push(name.to_owned()),
            Some(name) => skipped.push(format!("prompt {name} (listed twice)")),
            None => skipped.push(format!("prompt {} (no name)", inline(prompt))),
        }
    }
    out
}

/// The file: `version`, `default`, then each section with one entry per line.
fn render(sections: &[(&str, Vec<(String, Value)>)]) -> String {
    let mut out = String::from("{\n  \"version\": \"1\",\n  \"default\": \"require_approval\"");
    for (section, entries) in sections {
        out.push_str(&format!(",\n  \"{section}\": {{"));
        for (i, (key, entry)) in entries.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str("    ");
            out.push_str(&inline(&Value::String(key.clone())));
            out.push_str(": ");
            out.push_str(&inline(entry));
        }
        out.push_str(if entries.is_empty() { "}" } else { "\n  }" });
    }
    out.push_str("\n}\n");
    out
}

fn entry(rule: StarterRule, class: ToolClass, risk: Risk) -> Value {
    let mut entry = Map::new();
    match rule {
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
    entry.insert("class".into(), json!(class));
    entry.insert("risk".into(), json!(risk));
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

    fn request(policy: &Policy, door: crate::Door, name: &str) -> Action {
        let facts = crate::RequestFacts::new(crate::CallFacts::arguments(&Value::Null));
        policy.evaluate_request(door, name, &facts).action
    }

    #[test]
    fn every_door_is_written_explicitly() {
        let offered = Offered {
            tools: vec![tool("get_x", None)],
            resources: Some(vec![
                json!({"uri": "test://static/resource/1", "name": "one"}),
                json!({"uri": "file:///home/me/.ssh/id_rsa", "name": "key"}),
                json!({"uri": "test://static/resource/1", "name": "again"}),
            ]),
            resource_templates: Some(vec![json!({"uriTemplate": "test://static/resource/{id}", "name": "t"})]),
            prompts: Some(vec![json!({"name": "simple_prompt"}), json!({"name": "complex*"})]),
        };
        let starter = starter_policy_for(&offered).expect("valid");
        let doc: Value = serde_json::from_str(&starter.text).expect("JSON");
        let low_read = json!({"action": "allow", "class": "read", "risk": "low"});
        assert_eq!(doc["resources"]["test://static/resource/1"], low_read);
        assert_eq!(
            doc["resources"]["file:///home/me/.ssh/id_rsa"],
            json!({"action": "require_approval", "class": "read", "risk": "high"})
        );
        assert_eq!(doc["resources"]["test://static/resource/*"], low_read);
        assert_eq!(doc["prompts"]["simple_prompt"], low_read);
        assert_eq!(doc["prompts"]["complex[*]"], low_read, "a prompt name is no pattern");
        assert_eq!(
            doc["server_requests"],
            json!({
                "sampling": {"action": "require_approval", "class": "execute", "risk": "high"},
                "elicitation": {"action": "require_approval", "class": "read", "risk": "medium"},
                "roots": {"action": "allow", "class": "read", "risk": "low"},
            })
        );
        assert_eq!(starter.resources.as_ref().map(Vec::len), Some(3));
        assert_eq!(starter.skipped, ["resource test://static/resource/1 (listed twice)"]);
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["version", "default", "tools", "resources", "prompts", "server_requests"]
        );

        let policy = Policy::from_json_str(&starter.text, "t").expect("loads");
        let read = |uri: &str| {
            policy
                .evaluate_resource(
                    &crate::normalize_uri(uri).unwrap(),
                    crate::CallFacts::arguments(&Value::Null),
                )
                .action
        };
        assert_eq!(
            read("test://static/resource/7"),
            Action::Allow,
            "by the template's glob"
        );
        assert_eq!(read("file:///home/me/.ssh/id_rsa"), Action::RequireApproval);
        assert_eq!(
            read("file:///etc/passwd"),
            Action::RequireApproval,
            "unlisted: the default"
        );
        assert_eq!(request(&policy, crate::Door::Prompts, "simple_prompt"), Action::Allow);
        assert_eq!(
            request(&policy, crate::Door::Prompts, "complex_x"),
            Action::RequireApproval
        );
        assert_eq!(
            request(&policy, crate::Door::Sampling, "sampling"),
            Action::RequireApproval
        );
        assert_eq!(request(&policy, crate::Door::Roots, "roots"), Action::Allow);
    }

    #[test]
    fn a_server_without_resources_or_prompts_gets_no_such_sections() {
        let starter = starter_policy(&[tool("get_x", None)]).expect("valid");
        let doc: Value = serde_json::from_str(&starter.text).expect("JSON");
        assert!(doc.get("resources").is_none() && doc.get("prompts").is_none(), "{doc}");
        assert!(
            doc["server_requests"]["sampling"].is_object(),
            "server requests are always written"
        );
        assert_eq!((starter.resources, starter.prompts), (None, None));
        let empty = starter_policy_for(&Offered {
            resources: Some(Vec::new()),
            prompts: Some(Vec::new()),
            ..Offered::default()
        })
        .expect("valid");
        assert!(
            empty.text.contains("\"resources\": {},\n  \"prompts\": {},"),
            "offered but empty: the sections are there, empty\n{}",
            empty.text
        );
    }
}
