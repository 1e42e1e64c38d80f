//! `portcullis clients install | uninstall` on sample config files of each client
//! (tests/fixtures/clients/home is a home directory with all four), run as the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use portcullis_config::config::{Config, ServerConfig};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
        }
    }
}

/// A temp dir holding a copy of the sample home, a data dir and the place of portcullis.json.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        copy_tree(&fixtures().join("home"), &dir.path().join("home"));
        Self { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn gateway_config(&self) -> PathBuf {
        self.dir.path().join("portcullis.json")
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .arg("--home")
            .arg(self.home())
            .arg("--config")
            .arg(self.gateway_config())
            .arg("--data-dir")
            .arg(self.data_dir())
            .env_remove("PORTCULLIS_HOME")
            .env_remove("PORTCULLIS_CONFIG")
            .stdin(Stdio::null())
            .output()
            .expect("run portcullis")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

/// (client id, its file under home, the servers install routes, the server it leaves alone)
const CLIENTS: [(&str, &str, &[&str], Option<&str>); 4] = [
    (
        "claude-desktop",
        ".config/Claude/claude_desktop_config.json",
        &["filesystem", "github"],
        None,
    ),
    ("cursor", ".cursor/mcp.json", &["everything", "remote-docs"], None),
    ("claude-code", ".claude.json", &["git", "postgres"], None),
    ("vscode", ".config/Code/User/mcp.json", &["fetch"], Some("github")),
];

#[test]
fn install_routes_every_server_and_uninstall_restores_the_file_byte_for_byte() {
    for (client, file, routed, left) in CLIENTS {
        let scene = Scene::new();
        let path = scene.home().join(file);
        let original = std::fs::read(&path).expect("fixture");

        let dry = scene.run(&["clients", "install", client, "--dry-run", "--no-policy"]);
        assert!(dry.status.success(), "{client}: {}", text(&dry.stderr));
        let preview = text(&dry.stdout);
        for name in routed {
            assert!(
                preview.contains(&format!(".{name}\n-   ")),
                "{client}: preview shows {name} before:\n{preview}"
            );
        }
        assert!(
            preview.contains("+   {") && preview.contains("\"connect\""),
            "{client}: preview shows after:\n{preview}"
        );
        assert!(
            !preview.contains("sample-token") && !preview.contains("ghp_sample"),
            "{client}: secrets hidden:\n{preview}"
        );
        assert_eq!(
            std::fs::read(&path).expect("read"),
            original,
            "{client}: a dry run writes nothing"
        );

        let unasked = scene.run(&["clients", "install", client, "--no-policy"]);
        assert_eq!(
            unasked.status.code(),
            Some(1),
            "{client}: without a terminal, --yes is required"
        );
        assert!(text(&unasked.stderr).contains("--yes"), "{}", text(&unasked.stderr));
        assert_eq!(
            std::fs::read(&path).expect("read"),
            original,
            "{client}: unconfirmed, nothing written"
        );

        let done = scene.run(&["clients", "install", client, "--yes", "--no-policy"]);
        assert!(done.status.success(), "{client}: {}", text(&done.stderr));
        let undo_hint = format!("uninstall {client} --home '{}'", scene.home().display());
        assert!(
            text(&done.stderr).contains(&undo_hint),
            "{client}: the undo hint names the same home: {}",
            text(&done.stderr)
        );
        let policies = scene.dir.path().join("policies");
        assert_eq!(
            std::fs::read_dir(&policies).map(Iterator::count).ok(),
            Some(0),
            "{client}: --no-policy creates the policies directory and writes nothing in it"
        );
        for name in routed {
            assert!(
                text(&done.stdout).contains(&format!("{name}.json: not written (--no-policy)")),
                "{client}: {name} named:\n{}",
                text(&done.stdout)
            );
        }
        let after = read_json(&path);
        let config = Config::load(&scene.gateway_config()).expect("portcullis.json loads in the gateway");
        for name in routed {
            let entry = find_entry(&after, name).unwrap_or_else(|| panic!("{client}: {name} still listed"));
            let args: Vec<&str> = entry["args"]
                .as_array()
                .expect("args")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(
                entry["command"].as_str(),
                Some(bin_canonical().as_str()),
                "{client}: {name} launches portcullis"
            );
            assert_eq!(args[..2], ["connect", *name], "{client}: {name}");
            assert!(args.contains(&"--data-dir"), "{client}: a chosen data dir is passed on");
            assert!(
                config.servers.contains_key(*name),
                "{client}: {name} imported into portcullis.json"
            );
        }
        if let Some(left) = left {
            let entry = find_entry(&after, left).expect("left entry");
            assert!(
                entry.get("url").is_some(),
                "{client}: {left} is left as it was: {entry}"
            );
        }
        assert_eq!(
            keys(&after),
            keys(&serde_json::from_slice(&original).expect("JSON")),
            "{client}: every other key stays, in order"
        );

        let again = scene.run(&["clients", "install", client, "--yes", "--no-policy"]);
        assert_eq!(again.status.code(), Some(1), "{client}: a second install is refused");
        assert!(text(&again.stderr).contains("uninstall"), "{}", text(&again.stderr));

        let undone = scene.run(&["clients", "uninstall", client, "--yes"]);
        assert!(undone.status.success(), "{client}: {}", text(&undone.stderr));
        assert_eq!(
            std::fs::read(&path).expect("read"),
            original,
            "{client}: byte-identical after uninstall"
        );
        assert!(
            !scene.gateway_config().exists(),
            "{client}: the portcullis.json install created is removed again"
        );
    }
}

fn bin_canonical() -> String {
    Path::new(BIN).canonicalize().expect("binary").display().to_string()
}

fn find_entry<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    let maps = [doc.get("mcpServers"), doc.get("servers")];
    let projects = doc
        .get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values().map(|v| v.get("mcpServers")));
    maps.into_iter().chain(projects).flatten().find_map(|m| m.get(name))
}

fn keys(doc: &Value) -> Vec<String> {
    doc.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn the_imported_server_is_the_one_the_client_ran() {
    let scene = Scene::new();
    let done = scene.run(&["clients", "install", "cursor", "--yes", "--no-policy"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let config = Config::load(&scene.gateway_config()).expect("loads");
    assert_eq!(
        config.servers["everything"],
        ServerConfig::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
            env: Default::default(),
            cwd: None,
        }
    );
    assert!(
        matches!(&config.servers["remote-docs"], ServerConfig::Http { url, .. } if url == "https://docs.example.com/mcp")
    );
    let entry = &read_json(&scene.home().join(".cursor/mcp.json"))["mcpServers"]["everything"];
    assert_eq!(
        entry["disabled"],
        json!(false),
        "the client's own keys stay on the entry: {entry}"
    );
    assert_eq!(entry["autoApprove"], json!([]));
}

#[test]
fn a_file_the_client_rewrote_since_install_is_undone_entry_by_entry() {
    let scene = Scene::new();
    let path = scene.home().join(".claude.json");
    assert!(scene
        .run(&["clients", "install", "claude-code", "--yes", "--no-policy"])
        .status
        .success());
    // Claude Code rewrites its file all the time: a counter moves, a project is added.
    let mut doc = read_json(&path);
    doc["numStartups"] = json!(43);
    doc["projects"]["/home/ada/src/new"] = json!({ "allowedTools": [] });
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("JSON")).expect("write");

    let undone = scene.run(&["clients", "uninstall", "claude-code", "--yes"]);
    assert!(undone.status.success(), "{}", text(&undone.stderr));
    assert!(
        text(&undone.stdout).contains("changed since install"),
        "{}",
        text(&undone.stdout)
    );
    let restored = read_json(&path);
    let original = read_json(&fixtures().join("home/.claude.json"));
    assert_eq!(restored["mcpServers"], original["mcpServers"], "user servers put back");
    assert_eq!(
        restored["projects"]["/home/ada/src/app"]["mcpServers"],
        original["projects"]["/home/ada/src/app"]["mcpServers"],
        "project servers put back"
    );
    assert_eq!(
        restored["numStartups"],
        json!(43),
        "what the client wrote since is kept"
    );
    assert!(restored["projects"].get("/home/ada/src/new").is_some());
}

#[test]
fn a_name_taken_in_portcullis_json_is_a_conflict_and_that_server_stays_as_it_was() {
    let scene = Scene::new();
    let existing = "{\n  \"mcpServers\": {\n    \"github\": { \"command\": \"other-github-server\" }\n  }\n}\n";
    std::fs::write(scene.gateway_config(), existing).expect("write");
    let done = scene.run(&["clients", "install", "claude-desktop", "--yes", "--no-policy"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(
        text(&done.stdout).contains("already has a different server named \"github\""),
        "{}",
        text(&done.stdout)
    );
    let after = read_json(&scene.home().join(".config/Claude/claude_desktop_config.json"));
    assert_eq!(
        after["mcpServers"]["github"]["command"],
        json!("docker"),
        "the conflicting server is not rerouted"
    );
    assert_eq!(after["mcpServers"]["filesystem"]["args"][0], json!("connect"));
    let config = read_json(&scene.gateway_config());
    assert_eq!(
        config["mcpServers"]["github"]["command"],
        json!("other-github-server"),
        "never clobbered"
    );

    assert!(scene
        .run(&["clients", "uninstall", "claude-desktop", "--yes"])
        .status
        .success());
    assert_eq!(
        std::fs::read_to_string(scene.gateway_config()).expect("read"),
        existing,
        "portcullis.json as it was"
    );
}

#[test]
fn a_vscode_file_with_comments_keeps_them_through_install_and_uninstall() {
    let scene = Scene::new();
    let path = scene.home().join(".config/Code/User/mcp.json");
    std::fs::copy(fixtures().join("jsonc/mcp.json"), &path).expect("copy");
    let original = std::fs::read_to_string(&path).expect("read");
    let done = scene.run(&["clients", "install", "vscode", "--yes", "--no-policy"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let installed = std::fs::read_to_string(&path).expect("read");
    for comment in ["// Servers for Copilot agent mode", "// the fetch server"] {
        assert!(installed.contains(comment), "{comment} kept:\n{installed}");
    }
    assert!(installed.contains("\"connect\", \"fetch\""), "routed:\n{installed}");
    let undone = scene.run(&["clients", "uninstall", "vscode", "--yes"]);
    assert!(undone.status.success(), "{}", text(&undone.stderr));
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        original,
        "restored byte for byte"
    );
}

#[test]
fn a_malformed_vscode_file_is_refused_in_one_line_and_left_untouched() {
    let scene = Scene::new();
    let path = scene.home().join(".config/Code/User/mcp.json");
    let broken = std::fs::read_to_string(fixtures().join("jsonc/mcp.json"))
        .expect("read")
        .replace("\"uvx\",", "\"uvx\"");
    std::fs::write(&path, &broken).expect("write");
    let refused = scene.run(&["clients", "install", "vscode", "--yes", "--no-policy"]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("not valid JSON") && stderr.contains("mcp.json") && stderr.lines().count() == 1,
        "one clear line: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), broken, "nothing lost");
    assert!(!scene.gateway_config().exists(), "nothing imported");
}

#[test]
fn list_shows_each_clients_file_and_servers() {
    let scene = Scene::new();
    std::fs::remove_file(scene.home().join(".cursor/mcp.json")).expect("rm");
    assert!(scene
        .run(&["clients", "install", "vscode", "--yes", "--no-policy"])
        .status
        .success());
    let listed = scene.run(&["clients", "list"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let out = text(&listed.stdout);
    let line = |id: &str| {
        out.lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} listed:\n{out}"))
            .to_owned()
    };
    assert!(line("claude-desktop").contains("not installed"), "{out}");
    assert!(line("cursor").contains("no config file"), "{out}");
    let vscode: Vec<String> = line("vscode").split_whitespace().map(str::to_owned).collect();
    assert_eq!(vscode[2..], ["2", "1", "installed"], "{out}");
}

#[test]
fn a_server_that_cannot_start_is_named_and_left_asking_for_every_call() {
    let scene = Scene::new();
    let path = scene.home().join(".cursor/mcp.json");
    let missing = scene.dir.path().join("no-such-server");
    let doc = json!({ "mcpServers": { "gone": { "command": missing.display().to_string() } } });
    std::fs::write(&path, doc.to_string()).expect("write");

    let dry = scene.run(&["clients", "install", "cursor", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let preview = text(&dry.stdout);
    assert!(
        preview.contains("gone.json: not written: cannot start \"gone\" to list its tools")
            && preview.contains(&missing.display().to_string()),
        "the server and why are named:\n{preview}"
    );
    assert!(preview.contains("every call to gone asks you"), "{preview}");
    assert!(!scene.dir.path().join("policies").exists(), "a dry run creates nothing");

    let done = scene.run(&["clients", "install", "cursor", "--yes"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(
        text(&done.stderr).contains("no policy for gone: every call to it asks you"),
        "{}",
        text(&done.stderr)
    );
    let policies = scene.dir.path().join("policies");
    assert!(policies.is_dir(), "the policies directory is created");
    assert!(
        !policies.join("gone.json").exists(),
        "no policy for a server that was not listed"
    );
    let entry = &read_json(&path)["mcpServers"]["gone"];
    assert_eq!(entry["args"][0], json!("connect"), "still routed: {entry}");
}

#[test]
fn an_existing_policy_is_kept_and_its_server_not_started() {
    let scene = Scene::new();
    let path = scene.home().join(".cursor/mcp.json");
    // If install started this server, the preview would say it could not.
    let doc = json!({ "mcpServers": { "kept": { "command": "/no/such/server" } } });
    std::fs::write(&path, doc.to_string()).expect("write");
    let policies = scene.dir.path().join("policies");
    std::fs::create_dir_all(&policies).expect("mkdir");
    let hand_written = "{ \"version\": \"1\", \"default\": \"deny\" }\n";
    std::fs::write(policies.join("kept.json"), hand_written).expect("write");

    let done = scene.run(&["clients", "install", "cursor", "--yes"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let out = text(&done.stdout);
    assert!(out.contains("kept.json: exists, kept as it is"), "{out}");
    assert!(!out.contains("cannot start"), "{out}");
    assert_eq!(
        std::fs::read_to_string(policies.join("kept.json")).expect("read"),
        hand_written
    );
}
