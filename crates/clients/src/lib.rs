//! Routing an MCP client's servers through Portcullis, and undoing it: the work behind
//! `portcullis clients` and the desktop app's Clients view. It edits files (the client's config,
//! `portcullis.json`, its own records) and runs nothing; it knows the gateway only through the
//! file contract of `portcullis-config`.
//!
//! Four clients, each with one JSON config file that holds maps of server name → entry:
//!
//! | client         | file (Linux)                                  | maps                                        |
//! |----------------|-----------------------------------------------|---------------------------------------------|
//! | claude-desktop | `~/.config/Claude/claude_desktop_config.json` | `mcpServers`                                |
//! | cursor         | `~/.cursor/mcp.json`                          | `mcpServers`                                |
//! | claude-code    | `~/.claude.json`                              | `mcpServers`, `projects.<dir>.mcpServers`   |
//! | vscode         | `~/.config/Code/User/mcp.json`                | `servers`                                   |
//!
//! (The config-dir files follow the platform: `~/Library/Application Support` on macOS,
//! `%APPDATA%` on Windows.)
//!
//! Install ([`install::plan`], then [`install::apply`]): every entry the gateway can run is
//! imported into `portcullis.json` under its name and replaced in the client's file by a stdio
//! entry that launches `portcullis connect NAME` — stdio rather than the HTTP URL because the
//! gateway's bearer token changes at every start, so a URL entry would stop working after a
//! restart. Keys the client itself reads (`disabled`, `autoApprove`, …) stay on the entry, other
//! keys and the order of everything are kept. The file is edited in place ([`JsonFile::edited`]):
//! comments and trailing commas (JSONC, VS Code's `mcp.json`) and every byte not routed stay. The file is backed up beside itself first, and a
//! record of the change goes to `<data dir>/clients/<client>.json`.
//!
//! Uninstall ([`uninstall::run`]): if the file is still exactly what install wrote, the backup
//! is copied back (byte for byte); if the client has rewritten it since (Claude Code rewrites
//! `~/.claude.json` all the time), only the routed entries that are still as install left them
//! are put back, and the rest of the file is kept. Imported servers still unchanged in
//! `portcullis.json` are removed.

pub mod install;
mod json_file;
pub mod progress;
pub mod uninstall;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use json_file::{Edit, JsonFile, Syntax};

/// Something a person must fix or decide; the message says what.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClientError(pub String);

impl ClientError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// The MCP clients Portcullis knows how to route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    Cursor,
    ClaudeCode,
    VsCode,
}

/// Where the clients keep their files: the home directory and the platform config directory.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    pub config_dir: PathBuf,
}

impl Places {
    /// The real places of this user (`dirs`), or under `home` for tests and other homes
    /// (`home/.config` as the config dir, the Linux layout).
    pub fn new(home: Option<PathBuf>) -> Result<Self, ClientError> {
        if let Some(home) = home {
            Ok(Self {
                config_dir: home.join(".config"),
                home,
            })
        } else {
            let home = dirs::home_dir().ok_or_else(|| ClientError::new("cannot tell the home directory"))?;
            let config_dir = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
            Ok(Self { home, config_dir })
        }
    }
}

/// What install needs besides the client: how to launch `connect`, and the gateway's files.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Absolute path of the `portcullis` binary the client will launch.
    pub portcullis: PathBuf,
    /// `--data-dir` for `connect` when the data dir is not the default one.
    pub data_dir_arg: Option<PathBuf>,
    /// `--config` for `connect` when the config is not the default one: `connect` runs the gate
    /// and starts the server from it.
    pub config_arg: Option<PathBuf>,
    /// `portcullis.json`, created if missing.
    pub gateway_config: PathBuf,
    /// Where install records what it changed.
    pub data_dir: PathBuf,
}

impl Client {
    pub const ALL: [Client; 4] = [
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::ClaudeCode,
        Client::VsCode,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "claude-desktop",
            Self::Cursor => "cursor",
            Self::ClaudeCode => "claude-code",
            Self::VsCode => "vscode",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::ClaudeCode => "Claude Code",
            Self::VsCode => "VS Code",
        }
    }

    pub fn from_id(id: &str) -> Result<Self, ClientError> {
        Self::ALL.into_iter().find(|c| c.id() == id).ok_or_else(|| {
            let ids: Vec<&str> = Self::ALL.iter().map(|c| c.id()).collect();
            ClientError::new(format!("unknown client {id:?}; known: {}", ids.join(", ")))
        })
    }

    pub fn config_path(self, places: &Places) -> PathBuf {
        match self {
            Self::ClaudeDesktop => places.config_dir.join("Claude").join("claude_desktop_config.json"),
            Self::Cursor => places.home.join(".cursor").join("mcp.json"),
            Self::ClaudeCode => places.home.join(".claude.json"),
            Self::VsCode => places.config_dir.join("Code").join("User").join("mcp.json"),
        }
    }

    /// The key paths of the server maps in `doc`, e.g. `["projects", "/src/app", "mcpServers"]`.
    fn server_maps(self, doc: &Value) -> Vec<Vec<String>> {
        let top = match self {
            Self::VsCode => "servers",
            _ => "mcpServers",
        };
        let mut maps = vec![vec![top.to_owned()]];
        if self == Self::ClaudeCode {
            if let Some(Value::Object(projects)) = doc.get("projects") {
                for (dir, project) in projects {
                    if project.get("mcpServers").is_some_and(Value::is_object) {
                        maps.push(vec!["projects".to_owned(), dir.clone(), "mcpServers".to_owned()]);
                    }
                }
            }
        }
        maps
    }

    /// The entry that launches `portcullis connect NAME`; `extras` are the client's own keys.
    fn routed_entry(self, setup: &Setup, name: &str, extras: &Map<String, Value>) -> Value {
        let mut args = vec![Value::from("connect"), Value::from(name)];
        if let Some(config) = &setup.config_arg {
            args.push(Value::from("--config"));
            args.push(Value::from(config.display().to_string()));
        }
        if let Some(dir) = &setup.data_dir_arg {
            args.push(Value::from("--data-dir"));
            args.push(Value::from(dir.display().to_string()));
        }
        let mut entry = Map::new();
        if matches!(self, Self::ClaudeCode | Self::VsCode) {
            entry.insert("type".into(), Value::from("stdio"));
        }
        entry.insert("command".into(), Value::from(setup.portcullis.display().to_string()));
        entry.insert("args".into(), Value::Array(args));
        for (k, v) in extras {
            entry.insert(k.clone(), v.clone());
        }
        Value::Object(entry)
    }
}

/// Keys of a client's entry that say how to reach the server; they move to `portcullis.json`.
/// Everything else on the entry is the client's own and stays.
const TRANSPORT_KEYS: &[&str] = &["type", "command", "args", "env", "cwd", "url", "headers", "envFile"];

/// One routed server, as recorded for uninstall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Routed {
    /// Key path of the server map the entry is in.
    pub map: Vec<String>,
    pub name: String,
    pub before: Value,
    pub after: Value,
}

/// What install changed, kept in `<data dir>/clients/<client>.json` for uninstall.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub client: String,
    pub config_path: PathBuf,
    pub backup: PathBuf,
    /// SHA-256 of the file as install wrote it.
    pub installed_sha256: String,
    pub routed: Vec<Routed>,
    pub gateway_config: PathBuf,
    /// Servers added to `portcullis.json` (name, entry as added).
    pub imported: Vec<(String, Value)>,
    /// SHA-256 of `portcullis.json` as install wrote it; `None` when install did not write it.
    #[serde(default)]
    pub gateway_config_sha256: Option<String>,
    /// The backup of `portcullis.json`; `None` when install created the file.
    #[serde(default)]
    pub gateway_config_backup: Option<PathBuf>,
    pub installed_at: String,
}

impl Routed {
    /// The key path of the entry itself, e.g. `["servers", "fetch"]`.
    fn path(&self) -> Vec<String> {
        let mut path = self.map.clone();
        path.push(self.name.clone());
        path
    }
}

impl Record {
    pub fn path(data_dir: &Path, client: Client) -> PathBuf {
        data_dir.join("clients").join(format!("{}.json", client.id()))
    }

    pub fn load(data_dir: &Path, client: Client) -> Result<Option<Self>, ClientError> {
        let path = Self::path(data_dir, client);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| ClientError::new(format!("{} is damaged: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ClientError::new(format!("cannot read {}: {e}", path.display()))),
        }
    }
}

/// One line of `clients list`.
#[derive(Debug, Clone)]
pub struct Status {
    pub client: Client,
    pub config_path: PathBuf,
    /// `None`: no config file.
    pub servers: Option<usize>,
    /// Entries that already launch `portcullis connect`.
    pub routed: usize,
    /// The `portcullis.json` names those entries connect to, in file order, each once.
    pub routed_names: Vec<String>,
    /// Why the file cannot be read, if it cannot.
    pub problem: Option<String>,
    pub installed: bool,
}

/// The state of every client.
pub fn list(places: &Places, data_dir: &Path) -> Vec<Status> {
    Client::ALL
        .into_iter()
        .map(|client| {
            let config_path = client.config_path(places);
            let installed = Record::path(data_dir, client).exists();
            let mut status = Status {
                client,
                config_path: config_path.clone(),
                servers: None,
                routed: 0,
                routed_names: Vec::new(),
                problem: None,
                installed,
            };
            match JsonFile::read(&config_path, Syntax::Jsonc) {
                Ok(None) => {}
                Ok(Some(file)) => {
                    let entries = entries(client, &file.doc);
                    status.servers = Some(entries.len());
                    status.routed = entries.iter().filter(|(_, _, e)| is_routed(e)).count();
                    for name in entries.iter().filter_map(|(_, _, e)| routed_name(e)) {
                        if !status.routed_names.iter().any(|n| n == name) {
                            status.routed_names.push(name.to_owned());
                        }
                    }
                }
                Err(e) => status.problem = Some(e.0),
            }
            status
        })
        .collect()
}

/// Every server entry of a client's document: (map path, name, entry).
fn entries(client: Client, doc: &Value) -> Vec<(Vec<String>, String, Value)> {
    let mut out = Vec::new();
    for map in client.server_maps(doc) {
        if let Some(Value::Object(servers)) = lookup(doc, &map) {
            for (name, entry) in servers {
                out.push((map.clone(), name.clone(), entry.clone()));
            }
        }
    }
    out
}

/// Whether an entry already launches `portcullis connect`.
fn is_routed(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let first_arg = entry.get("args").and_then(|a| a.get(0)).and_then(Value::as_str);
    let program = Path::new(command).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    program == "portcullis" && first_arg == Some("connect")
}

/// The `portcullis.json` server a routed entry connects to (`portcullis connect NAME`).
fn routed_name(entry: &Value) -> Option<&str> {
    if !is_routed(entry) {
        return None;
    }
    entry.get("args").and_then(|a| a.get(1)).and_then(Value::as_str)
}

fn lookup<'a>(doc: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, key| v.get(key))
}

fn lookup_mut<'a>(doc: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(doc, |v, key| v.get_mut(key))
}

/// `mcpServers.github` / `projects["/src/app"].mcpServers.github`, for previews.
fn display_path(map: &[String], name: &str) -> String {
    let mut out = String::new();
    for key in map.iter().map(String::as_str).chain(std::iter::once(name)) {
        if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(key);
        } else {
            out.push_str(&format!("[{}]", Value::from(key)));
        }
    }
    out
}

/// An entry on one line for previews, with env and header values hidden (they hold secrets).
fn preview_entry(entry: &Value) -> String {
    let mut shown = entry.clone();
    for key in ["env", "headers"] {
        if let Some(Value::Object(map)) = shown.get_mut(key) {
            for value in map.values_mut() {
                *value = Value::from("…");
            }
        }
    }
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_code_lists_user_and_project_servers() {
        let doc = json!({
            "numStartups": 3,
            "mcpServers": { "a": { "command": "x" } },
            "projects": { "/src/app": { "mcpServers": { "b": { "type": "stdio", "command": "y" } } }, "/other": {} }
        });
        let names: Vec<String> = entries(Client::ClaudeCode, &doc)
            .into_iter()
            .map(|(map, name, _)| display_path(&map, &name))
            .collect();
        assert_eq!(names, ["mcpServers.a", "projects[\"/src/app\"].mcpServers.b"]);
    }

    #[test]
    fn routed_entries_are_recognised_by_program_and_first_argument() {
        assert!(is_routed(
            &json!({"command": "/usr/bin/portcullis", "args": ["connect", "x"]})
        ));
        assert!(!is_routed(&json!({"command": "npx", "args": ["connect"]})));
        assert!(!is_routed(
            &json!({"command": "/usr/bin/portcullis", "args": ["serve"]})
        ));
    }

    #[test]
    fn previews_hide_env_and_header_values() {
        let text = preview_entry(&json!({"command": "x", "env": {"TOKEN": "s3cret"}, "headers": {"A": "b"}}));
        assert!(!text.contains("s3cret") && text.contains("TOKEN"), "{text}");
    }
}
