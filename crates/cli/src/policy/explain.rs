//! `portcullis policy explain SERVER TOOL [--arguments JSON]`: which entry or rule decides a call
//! and why, from the policy evaluator itself ([`portcullis_policy::Policy::explain`]).
//!
//! It reports the decision of the policy the running gateway holds (asked through the control
//! API), and the file's too when the two differ (a rejected edit, a gateway started from another
//! config). With no gateway running, the file's decision, read as the gateway reads it (no file:
//! every call requires approval). An invalid file is reported, exit 1.

use std::path::Path;

use portcullis_audit::neutralize::terminal as clean;
use portcullis_config::config::Config;
use portcullis_policy::{CallFacts, Explanation, Policy};
use serde_json::{json, Value};

use crate::control::{ApiError, ControlClient};

use crate::exit::{Failure, Outcome};
use crate::text::write_stdout;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Server name from the config's mcpServers
    pub server: String,
    /// Tool name as the agent calls it
    pub tool: String,
    /// The call's arguments, a JSON object (default: none)
    #[arg(long, value_name = "JSON")]
    pub arguments: Option<String>,
    /// The client's self-reported name, for `client.name` conditions
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// The client's self-reported version, for `client.version` conditions
    #[arg(long, value_name = "VERSION")]
    pub client_version: Option<String>,
    /// Print the explanation as JSON (what the policy editor reads)
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(config_path: &Path, data_dir: &Path, args: &Args) -> Outcome {
    let config = Config::load(config_path).map_err(Failure::user)?;
    if !config.servers.contains_key(&args.server) {
        return Err(super::unknown_server(&config, config_path, &args.server));
    }
    let arguments = match args.arguments.as_deref() {
        None => Value::Null,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ (Value::Object(_) | Value::Null)) => value,
            Ok(_) => return Err(Failure::user("--arguments must be a JSON object")),
            Err(e) => return Err(Failure::user(format!("--arguments is not JSON: {e}"))),
        },
    };
    let path = config.policy_path(&args.server);
    let file = FileExplanation::of(&path, args, &arguments);
    let gate = gate_explanation(data_dir, args, &arguments);
    if args.json {
        return print_json(args, &path, &file, &gate);
    }
    print_text(&path, &file, &gate);
    match file.problems {
        Some(problems) => Err(Failure::Report(problems)),
        None => Ok(()),
    }
}

/// The file's own answer: its explanation, or why it cannot be read as a policy.
struct FileExplanation {
    source: String,
    explanation: Option<Explanation>,
    problems: Option<Vec<String>>,
}

impl FileExplanation {
    fn of(path: &Path, args: &Args, arguments: &Value) -> Self {
        let (policy, source) = if path.exists() {
            match Policy::load_file(path) {
                Ok(policy) => (policy, path.display().to_string()),
                Err(e) => {
                    return Self {
                        source: path.display().to_string(),
                        explanation: None,
                        problems: Some(e.problems.iter().map(ToString::to_string).collect()),
                    }
                }
            }
        } else {
            (
                Policy::require_approval_for_all(),
                format!("{} (no such file)", path.display()),
            )
        };
        let mut facts = CallFacts::arguments(arguments);
        facts.client_name = args.client_name.as_deref();
        facts.client_version = args.client_version.as_deref();
        Self {
            source,
            explanation: Some(policy.explain(&args.tool, &facts)),
            problems: None,
        }
    }
}

/// What the running gateway says, or why it could not be asked.
enum Gate {
    Answered(Value),
    NotRunning,
    Unreachable(String),
}

/// Asks the running gateway how the policy it holds decides the call.
fn gate_explanation(data_dir: &Path, args: &Args, arguments: &Value) -> Gate {
    let client = match ControlClient::from_data_dir(data_dir) {
        Ok(client) => client,
        Err(Failure::NoGateway(_)) => return Gate::NotRunning,
        Err(Failure::User(why)) => return Gate::Unreachable(why),
        Err(Failure::Report(lines)) => return Gate::Unreachable(lines.join("; ")),
    };
    let body = json!({
        "server": args.server,
        "tool": args.tool,
        "arguments": arguments,
        "client_name": args.client_name,
        "client_version": args.client_version,
    });
    let Ok(runtime) = crate::exit::runtime() else {
        return Gate::Unreachable("cannot start the async runtime".to_owned());
    };
    match runtime.block_on(client.post_json(&["control", "policy", "explain"], &body)) {
        Ok(answer) => Gate::Answered(answer),
        Err(ApiError::Unreachable { .. }) => Gate::NotRunning,
        Err(e) => Gate::Unreachable(e.to_string()),
    }
}

/// The decision (action and deciding rule) an explanation reaches, to tell whether two differ.
fn decision(explanation: &Value) -> (Option<&Value>, Option<&Value>) {
    let evaluation = explanation.get("evaluation");
    (
        evaluation.and_then(|e| e.get("action")),
        evaluation.and_then(|e| e.get("rule")),
    )
}

fn print_text(path: &Path, file: &FileExplanation, gate: &Gate) {
    let print_file_lines = || {
        for line in file.explanation.as_ref().map(Explanation::lines).unwrap_or_default() {
            write_stdout(&clean(&line));
        }
    };
    let Gate::Answered(answer) = gate else {
        let why = match gate {
            Gate::Unreachable(why) => format!("the running gateway could not be asked ({why})"),
            _ => "no gateway is running".to_owned(),
        };
        write_stdout(&format!(
            "policy: {} — {why}; this is the file's decision",
            clean(&file.source)
        ));
        print_file_lines();
        return;
    };
    let state = &answer["state"];
    let gate_path = state["path"].as_str().unwrap_or("?");
    let source = match state["source"].as_str() {
        Some("file") => "the file as it is now",
        Some("no_file") => "no policy file: every call asks the user",
        Some("last_good") => "the LAST GOOD version: the file on disk was rejected",
        Some("none") => "NONE: the file was rejected and none was ever valid, so every call is refused",
        _ => "unknown",
    };
    write_stdout(&format!(
        "policy in force (running gateway): {} — {source}",
        clean(gate_path)
    ));
    for problem in state["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        write_stdout(&format!("  rejected: {}", clean(problem)));
    }
    if answer["reload"]["mode"] == "polling" {
        let reason = answer["reload"]["reason"].as_str().unwrap_or("?");
        let every = answer["reload"]["poll_ms"].as_u64().unwrap_or(0);
        write_stdout(&format!(
            "  the gateway cannot watch the policies directory ({}); it re-reads the files every {every} ms",
            clean(reason)
        ));
    }
    for line in answer["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        write_stdout(&clean(line));
    }
    let file_decision = file.explanation.as_ref().and_then(|e| serde_json::to_value(e).ok());
    let differs = gate_path != path.display().to_string()
        || match (&file_decision, answer.get("explanation")) {
            (Some(f), Some(g)) => decision(f) != decision(g),
            _ => true,
        };
    if file.problems.is_some() {
        write_stdout("");
        write_stdout(&format!(
            "the policy file is not valid, so it is not in force: {}",
            clean(&file.source)
        ));
    } else if differs {
        write_stdout("");
        write_stdout(&format!("the policy file decides differently: {}", clean(&file.source)));
        print_file_lines();
    }
}

fn print_json(args: &Args, path: &Path, file: &FileExplanation, gate: &Gate) -> Outcome {
    let mut value = match &file.explanation {
        Some(explanation) => serde_json::to_value(explanation).map_err(Failure::user)?,
        None => json!({ "problems": file.problems }),
    };
    if let Value::Object(map) = &mut value {
        map.insert("server".into(), Value::String(args.server.clone()));
        map.insert("policy_file".into(), Value::String(path.display().to_string()));
        let gate = match gate {
            Gate::Answered(answer) => answer.clone(),
            Gate::NotRunning => json!({ "error": "no gateway is running" }),
            Gate::Unreachable(why) => json!({ "error": why }),
        };
        map.insert("gate".into(), gate);
    }
    write_stdout(&serde_json::to_string_pretty(&value).map_err(Failure::user)?);
    match &file.problems {
        Some(problems) => Err(Failure::Report(problems.clone())),
        None => Ok(()),
    }
}
