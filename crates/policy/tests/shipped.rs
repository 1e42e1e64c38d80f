//! The policies shipped in `policies/` load, and record a class and a risk beside every entry.

use std::path::PathBuf;

use portcullis_policy::{Action, Policy};
use serde_json::Value;

/// The PolicyLayer seed record's own file, kept verbatim: it must load unchanged.
const VERBATIM_SEED: &str = "proxmox-seed.json";

fn policies_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies")
}

fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(policies_dir())
        .expect("read policies/")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("policy.schema.json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_policy_loads() {
    let files = shipped();
    assert!(files.len() >= 6, "expected the shipped policies, found {files:?}");
    for file in files {
        if let Err(e) = Policy::load_file(&file) {
            panic!("{} must load: {e}", file.display());
        }
    }
}

#[test]
fn every_entry_records_class_and_risk() {
    for file in shipped().into_iter().filter(|f| !f.ends_with(VERBATIM_SEED)) {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
        let tools = doc["tools"].as_object().expect("a tools object");
        for (key, entry) in tools {
            assert!(
                entry.get("class").is_some() && entry.get("risk").is_some(),
                "{}: tools.{key} must record its class and risk",
                file.display()
            );
        }
    }
}

#[test]
fn shipped_infrastructure_policies_keep_the_seed_records_rules() {
    let dir = policies_dir();
    let decide = |file: &str, tool: &str| {
        Policy::load_file(&dir.join(file))
            .expect("loads")
            .evaluate(tool, &Value::Null)
            .action
    };
    // Each seed record rates its tool a Read tool with low risk, to be allowed.
    for (file, tool) in [
        ("proxmox.json", "pve_get_task_status"),
        ("proxmox.json", "pve_get_vm_status"),
        ("proxmox.json", "pve_get_cluster_status"),
        ("proxmox-mcp-server.json", "vm_agent_exec_status"),
        ("proxmox-seed.json", "vm_agent_exec_status"),
        ("cloudron.json", "cloudron_task_status"),
    ] {
        assert_eq!(decide(file, tool), Action::Allow, "{file}: {tool}");
    }
    for (file, tool) in [
        ("proxmox.json", "pve_delete_vm"),
        ("proxmox-mcp-server.json", "delete_vm"),
        ("cloudron.json", "cloudron_uninstall_app"),
    ] {
        assert_eq!(decide(file, tool), Action::Deny, "{file}: {tool} is destructive");
    }
    for file in ["proxmox.json", "proxmox-mcp-server.json", "cloudron.json"] {
        assert_eq!(
            decide(file, "a_tool_added_later"),
            Action::RequireApproval,
            "{file}: an unlisted tool asks a person"
        );
    }
}

/// policies/SHIPPED.md lists every entry of the smaller policies with the class and risk the
/// file records, so the documented table cannot drift from the files.
#[test]
fn shipped_md_tables_match_the_files() {
    let doc = std::fs::read_to_string(policies_dir().join("SHIPPED.md")).expect("read policies/SHIPPED.md");
    for file in ["everything.json", "filesystem.json", "proxmox.json", "cloudron.json"] {
        let policy: Value =
            serde_json::from_str(&std::fs::read_to_string(policies_dir().join(file)).expect("read")).expect("JSON");
        for (key, entry) in policy["tools"].as_object().expect("tools") {
            let row = format!(
                "| `{key}` | {} | {} |",
                entry["class"].as_str().unwrap_or("?"),
                entry["risk"].as_str().unwrap_or("?")
            );
            assert!(doc.contains(&row), "policies/SHIPPED.md must list {file}: {row}");
        }
    }
}
