//! The commands through Tauri's IPC on the mock runtime, with the app's real capabilities: argument
//! keys as the UI sends them, `{code, message}` errors, and which window may invoke what.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

use crate::command_names::COMMANDS;
use crate::host::{Host, Phase};
use crate::Paths;

pub(super) struct Fixture {
    pub(super) dir: tempfile::TempDir,
    pub(super) app: App<MockRuntime>,
    pub(super) host: Arc<Host>,
}

pub(super) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("portcullis.json");
    std::fs::write(
        &config,
        r#"{"listen": "127.0.0.1:0", "mcpServers": {"fs": {"command": "true"}}}"#,
    )
    .unwrap();
    let mut host = Host::new(Paths {
        config,
        data_dir: dir.path().join("data"),
    });
    // Start at login writes under this temp dir, never the real ~/.config.
    host.autostart = crate::settings::Autostart::new(Box::new(TempConfigHome(dir.path().join("xdg"))));
    let host = Arc::new(host);
    let (running, _listener) = tauri::async_runtime::block_on(host.start()).unwrap();
    host.set_phase(Phase::Running(running));
    let app = crate::configure(mock_builder(), host.clone())
        .build(tauri::generate_context!(test = true))
        .unwrap();
    Fixture { dir, app, host }
}

/// An environment whose only variable is `XDG_CONFIG_HOME`.
pub(super) struct TempConfigHome(pub(super) std::path::PathBuf);

impl portcullis_config::paths::Environment for TempConfigHome {
    fn var(&self, key: &str) -> Option<std::ffi::OsString> {
        (key == "XDG_CONFIG_HOME").then(|| self.0.clone().into_os_string())
    }
}

pub(super) fn window(app: &App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    let page = if label == "prompt" { "prompt.html" } else { "index.html" };
    WebviewWindowBuilder::new(app, label, WebviewUrl::App(page.into()))
        .build()
        .unwrap()
}

pub(super) fn invoke(w: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(w, request).map(|b| b.deserialize::<Value>().unwrap())
}

/// An ACL refusal (the command never ran), as opposed to the command's own `{code, message}`.
pub(super) fn refused_by_acl(result: &Result<Value, Value>) -> bool {
    matches!(result, Err(Value::String(s)) if s.contains("not allowed"))
}

#[test]
fn commands_answer_with_the_ui_contract() {
    let f = fixture();
    let main = window(&f.app, "main");
    assert_eq!(invoke(&main, "list_approvals", json!({})), Ok(json!([])));
    let decided = invoke(
        &main,
        "decide_approval",
        json!({"id": "9", "choice": {"approve": "once"}}),
    );
    assert_eq!(
        decided,
        Err(json!({"code": "unknown_approval", "message": "no pending approval 9"}))
    );
    let rows = invoke(&main, "query_audit", json!({"filter": {"before": [1, 1]}, "limit": 10}));
    assert_eq!(rows, Ok(json!([])));
    let hist = invoke(
        &main,
        "audit_histogram",
        json!({"filter": {"since_ms": 0, "until_ms": 7_200_000}, "bucket_ms": 3_600_000}),
    );
    assert_eq!(
        hist,
        Ok(json!([{"start_ms": 0, "counts": {}}, {"start_ms": 3_600_000, "counts": {}}]))
    );
    let path = f.dir.path().join("audit.csv");
    let save = json!({"filter": {}, "format": "csv", "path": path, "replace": false});
    let saved = invoke(&main, "save_audit_export", save.clone()).unwrap();
    assert_eq!(saved["rows"], 0, "{saved}");
    let csv = std::fs::read_to_string(&path).unwrap();
    assert!(csv.starts_with("id,time_ms,time,session"), "{csv}");
    let again = invoke(&main, "save_audit_export", save).unwrap_err();
    assert_eq!(
        again["code"], "export_exists",
        "a second save asks before replacing: {again}"
    );
    let suggested = invoke(&main, "suggest_export_path", json!({"format": "jsonl"})).unwrap();
    let suggested = std::path::Path::new(suggested.as_str().unwrap());
    assert_eq!(
        suggested.extension().and_then(|e| e.to_str()),
        Some("jsonl"),
        "{suggested:?}"
    );
    let policy = invoke(&main, "read_policy", json!({"server": "fs"})).unwrap();
    assert_eq!(policy["text"], Value::Null, "no policy file yet");
    let bad = invoke(
        &main,
        "save_policy",
        json!({"server": "fs", "text": "{\"version\": \"2\"}"}),
    )
    .unwrap();
    assert!(!bad["problems"].as_array().unwrap().is_empty(), "{bad}");
    assert!(
        !Path::new(policy["path"].as_str().unwrap()).exists(),
        "an invalid policy is not written"
    );
    let good = invoke(
        &main,
        "save_policy",
        json!({"server": "fs", "text": "{\"version\": \"1\", \"default\": \"deny\"}"}),
    );
    assert_eq!(good, Ok(json!({"problems": []})));
    assert!(Path::new(policy["path"].as_str().unwrap()).exists());
    let unknown = invoke(&main, "read_policy", json!({"server": "nope"})).unwrap_err();
    assert_eq!(unknown["code"], "unknown_server");
    let settings = invoke(&main, "get_settings", json!({})).unwrap();
    assert_eq!(
        settings,
        json!({"approval_timeout_secs": 45, "notifications": true, "theme": "system"})
    );
    let zero = invoke(
        &main,
        "set_settings",
        json!({"settings": {"approval_timeout_secs": 0, "notifications": false, "theme": "dark"}}),
    );
    assert_eq!(zero.unwrap_err()["code"], "invalid_settings");
    assert_eq!(invoke(&main, "set_paused", json!({"paused": true})), Ok(Value::Null));
    assert!(f.host.paused());
    assert_eq!(invoke(&main, "get_paused", json!({})), Ok(json!(true)));
    assert!(
        f.host.running_now().unwrap().gateway.paused(),
        "the gateway itself is paused"
    );
}

#[test]
fn a_server_saved_from_the_form_is_written_and_served_at_once() {
    let f = fixture();
    let main = window(&f.app, "main");
    assert_eq!(
        invoke(&main, "read_server", json!({"server": "fs"})),
        Ok(json!({"transport": "stdio", "command": "true", "args": [], "env": {}}))
    );
    assert_eq!(invoke(&main, "read_server", json!({"server": "nope"})), Ok(Value::Null));
    let entry = json!({"transport": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}});
    let saved = invoke(&main, "save_server", json!({"name": "web", "entry": entry}));
    assert_eq!(saved, Ok(json!([])));
    let text = std::fs::read_to_string(&f.host.paths.config).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["mcpServers"]["web"]["headers"]["X-Key"], "k");
    assert_eq!(doc["listen"], "127.0.0.1:0", "the rest of the file is kept");
    let gateway = f.host.running_now().unwrap().gateway.clone();
    assert_eq!(
        gateway.transport("web"),
        Some("http"),
        "the gateway serves it without a restart"
    );
    let servers = invoke(&main, "list_servers", json!({})).unwrap();
    let names: Vec<&str> = servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fs", "web"]);
    let bad = invoke(
        &main,
        "save_server",
        json!({"name": "web", "entry": {"transport": "stdio", "command": " "}}),
    )
    .unwrap();
    assert_eq!(bad[0]["field"], "command", "{bad}");
    assert_eq!(
        std::fs::read_to_string(&f.host.paths.config).unwrap(),
        text,
        "nothing written"
    );
}

#[test]
fn deciding_needs_its_own_grant_and_the_prompt_gets_only_what_it_uses() {
    let f = fixture();
    let prompt = window(&f.app, "prompt");
    let stranger = window(&f.app, "stranger");
    let decide = json!({"id": "1", "choice": {"deny": {"reason": null, "always": false}}});
    assert!(
        !refused_by_acl(&invoke(&prompt, "decide_approval", decide.clone())),
        "the prompt may decide"
    );
    assert!(
        refused_by_acl(&invoke(&stranger, "decide_approval", decide)),
        "a window without the grant may not"
    );
    assert!(!refused_by_acl(&invoke(&prompt, "list_approvals", json!({}))));
    for cmd in [
        "query_audit",
        "save_policy",
        "set_paused",
        "set_settings",
        "restart_server",
    ] {
        assert!(
            refused_by_acl(&invoke(&prompt, cmd, json!({}))),
            "the prompt must not reach {cmd}"
        );
    }
}

/// The app's Undo after an "always": the command takes back the write the decision named, once,
/// and only windows that may decide may undo.
#[test]
fn undo_policy_write_takes_back_an_always_write_once() {
    let f = fixture();
    let prompt = window(&f.app, "prompt");
    let stranger = window(&f.app, "stranger");
    let gateway = f.host.running_now().unwrap().gateway.clone();
    let path = gateway.policy_path("fs");
    assert!(!path.exists());
    let write = gateway
        .write_policy_entry_for_test("fs", "write_file", json!({}))
        .unwrap();
    assert!(path.exists(), "the always wrote the file");
    let args = json!({"write_id": write.write_id});
    assert!(refused_by_acl(&invoke(&stranger, "undo_policy_write", args.clone())));
    let undone = invoke(&prompt, "undo_policy_write", args.clone()).unwrap();
    assert_eq!(undone["write_id"], json!(write.write_id), "{undone}");
    assert_eq!(undone["rule_text"], "\"write_file\": {}");
    assert!(!path.exists(), "undone: no file, as before");
    let again = invoke(&prompt, "undo_policy_write", args).unwrap_err();
    assert_eq!(again["code"], "unknown_write", "{again}");
}

/// The app lists the standing grants in force and revokes one; a window that may not decide may
/// list nothing and revoke nothing.
#[test]
fn grants_are_listed_and_revoked_once() {
    use portcullis_keeper::standing::{Effect, NewGrant, Which};
    let f = fixture();
    let main = window(&f.app, "main");
    let stranger = window(&f.app, "stranger");
    let gateway = f.host.running_now().unwrap().gateway.clone();
    let now = portcullis_gate::clock::now_ms();
    let grant = NewGrant {
        server: "fs".into(),
        tool: "write_file".into(),
        effect: Effect::Allow,
        reason: None,
        session: None,
        which: Which::Any,
        expires_at_ms: Some(now + 300_000),
    };
    let id = gateway.add_standing_grant_for_test(grant, now);
    assert!(refused_by_acl(&invoke(&stranger, "list_grants", json!({}))));
    let listed = invoke(&main, "list_grants", json!({})).unwrap();
    assert_eq!(listed[0]["id"], json!(id), "{listed}");
    assert_eq!(
        (listed[0]["tool"].clone(), listed[0]["which"].clone()),
        (json!("write_file"), json!("any"))
    );
    assert!(refused_by_acl(&invoke(&stranger, "revoke_grant", json!({"id": id}))));
    invoke(&main, "revoke_grant", json!({"id": id})).unwrap();
    assert_eq!(invoke(&main, "list_grants", json!({})).unwrap(), json!([]));
    let again = invoke(&main, "revoke_grant", json!({"id": id})).unwrap_err();
    assert_eq!(again["code"], "unknown_grant", "{again}");
}

/// Every command is granted to a named window, one permission at a time, and deciding only in
/// its own capability file.
#[test]
fn capabilities_grant_each_command_explicitly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
    let mut granted = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let cap: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let windows = cap["windows"].as_array().unwrap();
        assert!(
            windows.iter().all(|w| w.as_str().is_some_and(|w| !w.contains('*'))),
            "{path:?}: named windows only"
        );
        for p in cap["permissions"].as_array().unwrap() {
            let p = p.as_str().expect("plain permission identifiers, no scopes");
            assert!(
                !p.ends_with(":default") && !p.contains("allow-all"),
                "{path:?}: {p} is not one command"
            );
            if let Some(cmd) = p.strip_prefix("allow-") {
                let cmd = cmd.replace('-', "_");
                assert!(
                    COMMANDS.contains(&cmd.as_str()),
                    "{path:?} grants an undeclared command {cmd}"
                );
                if cmd == "decide_approval" {
                    assert_eq!(path.file_name().unwrap(), "decide.json", "deciding has its own grant");
                }
                granted.push(cmd);
            }
        }
    }
    for cmd in COMMANDS {
        assert!(
            granted.iter().any(|g| g == cmd),
            "{cmd} is declared but granted to no window"
        );
    }
}

/// The names the front end invokes (`ui/src/lib/backend.ts`, `COMMANDS`) are exactly the commands
/// declared here: a rename on either side fails this test, not the app.
#[test]
fn the_front_end_invokes_exactly_the_declared_commands() {
    let backend =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/backend.ts")).unwrap();
    let block = backend
        .split("export const COMMANDS = {")
        .nth(1)
        .unwrap()
        .split("} as const")
        .next()
        .unwrap();
    let mut invoked: Vec<&str> = block.lines().filter_map(|l| l.split('\'').nth(1)).collect();
    invoked.sort_unstable();
    let mut declared = COMMANDS.to_vec();
    declared.sort_unstable();
    assert_eq!(invoked, declared);
}

/// A pending call's tray entry (or notification click) points the prompt at that call.
#[test]
fn a_tray_entry_shows_the_prompt_on_its_call() {
    use tauri::Listener;
    let f = fixture();
    let _prompt = window(&f.app, "prompt");
    let (tx, rx) = std::sync::mpsc::channel();
    f.app.listen_any("ShowApproval", move |event| {
        let _ = tx.send(event.payload().to_owned());
    });
    let entry = format!("{}42", crate::tray::menu_model::APPROVAL_PREFIX);
    crate::on_tray_entry(f.app.handle(), &entry);
    let payload = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&payload).unwrap(), json!({"id": "42"}));
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn start_at_login_writes_and_removes_the_apps_autostart_entry() {
    let f = fixture();
    let main = window(&f.app, "main");
    let entry = f.dir.path().join("xdg/autostart/portcullis.desktop");
    assert_eq!(invoke(&main, "get_autostart", json!({})), Ok(json!(false)));
    assert_eq!(
        invoke(&main, "set_autostart", json!({"enabled": true})),
        Ok(Value::Null)
    );
    let text = std::fs::read_to_string(&entry).expect("the entry is written");
    let exe = std::env::current_exe().unwrap();
    assert!(
        text.contains(&format!("Exec=\"{}\"\n", exe.display())),
        "starts this app:\n{text}"
    );
    assert!(text.contains("X-Portcullis-Kind=desktop"), "{text}");
    assert_eq!(invoke(&main, "get_autostart", json!({})), Ok(json!(true)));
    assert_eq!(
        invoke(&main, "set_autostart", json!({"enabled": true})),
        Ok(Value::Null)
    );
    assert_eq!(
        std::fs::read_to_string(&entry).unwrap(),
        text,
        "on twice: the same entry"
    );
    assert_eq!(
        invoke(&main, "set_autostart", json!({"enabled": false})),
        Ok(Value::Null)
    );
    assert!(!entry.exists(), "off removes it");
    assert_eq!(invoke(&main, "get_autostart", json!({})), Ok(json!(false)));
    std::fs::write(&entry, "[Desktop Entry]\nExec=mine\n").unwrap();
    let refused = invoke(&main, "set_autostart", json!({"enabled": true})).unwrap_err();
    assert_eq!(refused["code"], "autostart_refused", "{refused}");
    assert_eq!(
        std::fs::read_to_string(&entry).unwrap(),
        "[Desktop Entry]\nExec=mine\n",
        "not ours: kept"
    );
}

/// The policy editor's `explain_policy`: how unsaved text decides each tool, through the IPC with
/// the UI's argument keys; nothing is written, and an invalid text answers with its problems.
#[test]
fn explain_policy_answers_for_unsaved_text_without_writing_it() {
    let f = fixture();
    let main = window(&f.app, "main");
    let text = r#"{"version": "1", "default": "deny", "hide": ["drop_*"],
        "tools": {"read_*": {}, "read_secret": {"action": "require_approval"}}}"#;
    let answer = invoke(
        &main,
        "explain_policy",
        json!({"server": "fs", "text": text, "tools": ["read_file", "read_secret", "drop_db", "other"]}),
    )
    .unwrap();
    assert_eq!(answer["problems"], json!([]));
    let got: Vec<(Value, Value, Value)> = answer["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["tool"].clone(), t["decider"].clone(), t["action"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                json!("read_file"),
                json!({"kind": "glob", "key": "read_*"}),
                json!("allow")
            ),
            (
                json!("read_secret"),
                json!({"kind": "entry", "key": "read_secret"}),
                json!("require_approval")
            ),
            (
                json!("drop_db"),
                json!({"kind": "hide", "pattern": "drop_*"}),
                json!("hide")
            ),
            (json!("other"), json!({"kind": "default"}), json!("deny")),
        ]
    );
    let policy = invoke(&main, "read_policy", json!({"server": "fs"})).unwrap();
    assert_eq!(policy["text"], Value::Null, "explaining writes nothing");

    let bad = invoke(
        &main,
        "explain_policy",
        json!({"server": "fs", "text": "{\"version\": \"2\"}", "tools": ["a"]}),
    )
    .unwrap();
    assert!(!bad["problems"].as_array().unwrap().is_empty(), "{bad}");
    assert_eq!(bad["tools"], json!([]));
    let unknown = invoke(
        &main,
        "explain_policy",
        json!({"server": "nope", "text": "{}", "tools": []}),
    )
    .unwrap_err();
    assert_eq!(unknown["code"], "unknown_server");
}

/// The Servers view reads the gateway's own state: a rejected edit shows the file is not in force
/// (the last valid version is) until a valid file is read, with no event needed in between.
#[test]
fn the_servers_view_says_when_the_policy_file_is_not_in_force() {
    let f = fixture();
    let main = window(&f.app, "main");
    let gateway = f.host.running_now().unwrap().gateway.clone();
    let path = gateway.policy_path("fs");
    let policy_of_fs = || {
        let servers = invoke(&main, "list_servers", json!({})).unwrap();
        servers.as_array().unwrap().iter().find(|s| s["name"] == "fs").unwrap()["policy"].clone()
    };
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, r#"{"version":"1","default":"allow"}"#).unwrap();
    gateway.reload_policy("fs");
    assert_eq!(policy_of_fs()["state"], "ok");
    std::fs::write(&path, r#"{"version":"1","default":"alow"}"#).unwrap();
    gateway.reload_policy("fs");
    let shown = policy_of_fs();
    assert_eq!(shown["state"], "invalid", "{shown}");
    let problems = shown["problems"].to_string();
    assert!(
        problems.contains("alow") && problems.contains("last valid version stays in force"),
        "{shown}"
    );
    std::fs::write(&path, r#"{"version":"1","default":"deny"}"#).unwrap();
    gateway.reload_policy("fs");
    assert_eq!(policy_of_fs(), json!({"state": "ok", "problems": []}));
}
