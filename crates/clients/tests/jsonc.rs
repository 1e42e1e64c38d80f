//! VS Code's `mcp.json` with comments and trailing commas, through install and uninstall: what
//! the person wrote stays, byte for byte, except the values routing changes.

use std::path::{Path, PathBuf};

use portcullis_clients::{install, uninstall, Client, Places, Record, Setup};
use serde_json::{json, Value};

const MCP_JSON: &str = r#"{
	// Servers for Copilot agent mode
	"inputs": [
		/* asked once, kept by VS Code */
		{ "type": "promptString", "id": "token", "password": true },
	],
	"servers": {
		"fetch": {
			"type": "stdio",
			"command": "uvx", /* from PyPI */
			"args": ["mcp-server-fetch"], // the fetch server
		},
		// needs the client's input: left as it is
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": { "Authorization": "Bearer ${input:token}" },
		},
	},
}
"#;

const COMMENTS: [&str; 5] = [
    "// Servers for Copilot agent mode",
    "/* asked once, kept by VS Code */",
    "/* from PyPI */",
    "// the fetch server",
    "// needs the client's input: left as it is",
];

/// The file as install leaves it: only `fetch`'s command and arguments changed.
fn routed_text() -> String {
    MCP_JSON
        .replace("\"uvx\"", "\"/usr/bin/portcullis\"")
        .replace("[\"mcp-server-fetch\"]", "[\"connect\", \"fetch\"]")
}

struct Scene {
    _dir: tempfile::TempDir,
    setup: Setup,
    mcp_json: PathBuf,
}

impl Scene {
    fn new(text: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let places = Places::new(Some(dir.path().join("home"))).expect("places");
        let mcp_json = Client::VsCode.config_path(&places);
        std::fs::create_dir_all(mcp_json.parent().expect("parent")).expect("mkdir");
        std::fs::write(&mcp_json, text).expect("write mcp.json");
        let setup = Setup {
            portcullis: PathBuf::from("/usr/bin/portcullis"),
            data_dir_arg: None,
            config_arg: None,
            gateway_config: dir.path().join("portcullis.json"),
            data_dir: dir.path().join("data"),
        };
        Self {
            _dir: dir,
            setup,
            mcp_json,
        }
    }

    fn install(&self) -> Result<Record, portcullis_clients::ClientError> {
        let plan = install::plan(Client::VsCode, &self.mcp_json, &self.setup)?;
        install::apply(&plan, &self.setup)
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.mcp_json).expect("read mcp.json")
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

#[test]
fn install_into_jsonc_keeps_every_comment_and_every_other_byte() {
    let scene = Scene::new(MCP_JSON);
    let record = scene.install().expect("installed");
    assert_eq!(scene.text(), routed_text(), "only the routed values changed");
    assert_eq!(
        read_json(&scene.setup.gateway_config)["mcpServers"]["fetch"],
        json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}),
        "the server the client ran is the one imported"
    );
    assert_eq!(record.routed.len(), 1, "github needs the client's input and stays");
    assert_eq!(std::fs::read_to_string(&record.backup).expect("backup"), MCP_JSON);
}

#[test]
fn uninstall_from_an_untouched_jsonc_file_restores_it_byte_for_byte() {
    let scene = Scene::new(MCP_JSON);
    scene.install().expect("installed");
    let outcome = uninstall::run(Client::VsCode, &scene.setup.data_dir, false).expect("uninstalled");
    assert_eq!(outcome.restored, uninstall::Restored::FromBackup);
    assert_eq!(scene.text(), MCP_JSON);
    assert!(
        !scene.setup.gateway_config.exists(),
        "install created portcullis.json; it goes"
    );
}

#[test]
fn uninstall_from_a_jsonc_file_edited_since_puts_the_entry_back_in_place() {
    let scene = Scene::new(MCP_JSON);
    scene.install().expect("installed");
    // The person adds a comment and a server after install: their edit must survive uninstall.
    let hand_edit = |text: &str| {
        text.replace(
            "\t\t// needs the client's input",
            "\t\t/* added by hand */ \"local\": { \"command\": \"node\", },\n\t\t// needs the client's input",
        )
    };
    let edited = hand_edit(&routed_text());
    assert_ne!(edited, routed_text(), "the hand edit applies");
    std::fs::write(&scene.mcp_json, &edited).expect("hand edit");
    let outcome = uninstall::run(Client::VsCode, &scene.setup.data_dir, false).expect("uninstalled");
    assert_eq!(
        outcome.restored,
        uninstall::Restored::Entries {
            put_back: vec!["servers.fetch".into()],
            left: vec![]
        }
    );
    let text = scene.text();
    assert_eq!(
        text,
        hand_edit(MCP_JSON),
        "the original entry back, the hand edit kept, byte for byte"
    );
    for comment in COMMENTS.iter().chain(&["/* added by hand */"]) {
        assert!(text.contains(comment), "{comment} kept");
    }
}

#[test]
fn a_malformed_jsonc_file_is_refused_with_a_clear_error_and_left_unchanged() {
    // A missing comma between two entries: not JSON, with or without comments.
    let broken = MCP_JSON.replace("\t\t},\n\t\t// needs", "\t\t}\n\t\t// needs");
    assert_ne!(broken, MCP_JSON);
    let scene = Scene::new(&broken);
    let err = scene.install().expect_err("refused").to_string();
    assert!(
        err.contains(&scene.mcp_json.display().to_string())
            && err.contains("is not valid JSON (comments and trailing commas are fine)"),
        "says which file and what is wrong: {err}"
    );
    assert!(err.contains("line "), "says where: {err}");
    assert_eq!(scene.text(), broken, "left as it was");
    assert!(!scene.setup.gateway_config.exists(), "nothing imported");
    assert!(
        !Record::path(&scene.setup.data_dir, Client::VsCode).exists(),
        "nothing recorded"
    );
}
