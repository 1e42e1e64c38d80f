//! Adding or changing one `mcpServers` entry of `portcullis.json` from the Servers view: the
//! entry as a form edits it ([`ServerEntry`]), and the file's new text — every other field, key
//! and entry kept in place, the result checked by the gateway's own parser ([`Config::from_str`])
//! before anything is written.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Config, ConfigError, ServerConfig};

/// What the form edits. Fields of the entry it does not show (`cwd`, a `type` of `sse`, keys
/// other tools added) are kept when the transport stays the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "transport", rename_all = "snake_case", deny_unknown_fields)]
pub enum ServerEntry {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP (or, with `"type": "sse"` kept from the file, legacy SSE).
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// Why an entry was not saved, for the form: the field (`name`, `command`, `url`, or a JSON path
/// into the file) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EntryProblem {
    pub field: String,
    pub message: String,
}

/// The entry `name` as the form shows it, from the file's text.
pub fn read_entry(text: &str, name: &str) -> Option<ServerEntry> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let entry = doc.get("mcpServers")?.get(name)?.as_object()?;
    let strings = |key: &str| -> BTreeMap<String, String> {
        entry
            .get(key)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(command) = entry.get("command").and_then(Value::as_str) {
        let args = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        return Some(ServerEntry::Stdio {
            command: command.to_owned(),
            args,
            env: strings("env"),
        });
    }
    let url = entry.get("url").and_then(Value::as_str)?;
    Some(ServerEntry::Http {
        url: url.to_owned(),
        headers: strings("headers"),
    })
}

/// The file's new text with `name` set to `entry`, and the server as the gateway will run it;
/// or every problem found (nothing to write).
pub fn with_entry(
    text: &str,
    path: &Path,
    name: &str,
    entry: &ServerEntry,
) -> Result<(String, ServerConfig), Vec<EntryProblem>> {
    let problems = check(name, entry);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut doc: Value = serde_json::from_str(text).map_err(|e| {
        vec![problem(
            "",
            format!("{} is not valid JSON ({e}); fix it by hand first", path.display()),
        )]
    })?;
    let Some(root) = doc.as_object_mut() else {
        return Err(vec![problem("", format!("{} is not a JSON object", path.display()))]);
    };
    let servers = root.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(vec![problem("$.mcpServers", "mcpServers is not an object".into())]);
    };
    let old = servers
        .get(name)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    servers.insert(name.to_owned(), Value::Object(merge(old, entry)));
    let mut new_text = serde_json::to_string_pretty(&doc).map_err(|e| vec![problem("", e.to_string())])?;
    new_text.push('\n');
    let config = Config::from_str(&new_text, path).map_err(|e| vec![config_problem(&e)])?;
    let server = config
        .servers
        .get(name)
        .cloned()
        .ok_or_else(|| vec![problem("name", format!("{name:?} is not in the new config"))])?;
    Ok((new_text, server))
}

/// The entry's fields over the old ones; a change of transport drops the other transport's keys.
fn merge(mut old: Map<String, Value>, entry: &ServerEntry) -> Map<String, Value> {
    let strings = |m: &BTreeMap<String, String>| {
        Value::Object(m.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
    };
    let set_or_drop = |o: &mut Map<String, Value>, key: &str, value: Value, empty: bool| {
        if empty {
            o.remove(key);
        } else {
            o.insert(key.to_owned(), value);
        }
    };
    match entry {
        ServerEntry::Stdio { command, args, env } => {
            for key in ["url", "headers"] {
                old.remove(key);
            }
            if old.get("type").and_then(Value::as_str) != Some("stdio") {
                old.remove("type");
            }
            old.insert("command".into(), Value::String(command.trim().to_owned()));
            let args = Value::Array(args.iter().cloned().map(Value::String).collect());
            set_or_drop(&mut old, "args", args, false);
            set_or_drop(&mut old, "env", strings(env), env.is_empty());
        }
        ServerEntry::Http { url, headers } => {
            for key in ["command", "args", "env", "cwd"] {
                old.remove(key);
            }
            if !matches!(
                old.get("type").and_then(Value::as_str),
                Some("sse" | "http" | "streamable-http" | "streamableHttp")
            ) {
                old.remove("type");
            }
            old.insert("url".into(), Value::String(url.trim().to_owned()));
            set_or_drop(&mut old, "headers", strings(headers), headers.is_empty());
        }
    }
    old
}

/// What the form can be told field by field, before the gateway's parser sees the file.
fn check(name: &str, entry: &ServerEntry) -> Vec<EntryProblem> {
    let mut problems = Vec::new();
    let name_ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        problems.push(problem(
            "name",
            "a name is letters, digits, '-', '_' and '.' (it becomes the URL /mcp/<name> and the policy file <name>.json)".into(),
        ));
    }
    match entry {
        ServerEntry::Stdio { command, env, .. } => {
            if command.trim().is_empty() {
                problems.push(problem(
                    "command",
                    "the command to start the server is required, e.g. npx".into(),
                ));
            }
            if env.keys().any(|k| k.is_empty() || k.contains('=')) {
                problems.push(problem(
                    "env",
                    "environment names cannot be empty or contain '='".into(),
                ));
            }
        }
        ServerEntry::Http { url, headers } => {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < "http://x".len() {
                problems.push(problem(
                    "url",
                    "the server's URL starts with http:// or https://".into(),
                ));
            }
            if headers
                .keys()
                .any(|k| k.is_empty() || !k.chars().all(|c| c.is_ascii_graphic() && c != ':'))
            {
                problems.push(problem(
                    "headers",
                    "header names are printable ASCII without spaces or ':'".into(),
                ));
            }
        }
    }
    problems
}

fn problem(field: &str, message: String) -> EntryProblem {
    EntryProblem {
        field: field.to_owned(),
        message,
    }
}

fn config_problem(e: &ConfigError) -> EntryProblem {
    match e {
        ConfigError::Invalid { json_path, message, .. } => problem(json_path, message.clone()),
        other => problem("", other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
  "listen": "127.0.0.1:7470",
  "mcpServers": {
    "b": { "command": "node", "args": ["b.js"], "cwd": "srv", "x-note": "kept" },
    "a": { "url": "http://127.0.0.1:9/mcp", "type": "sse" }
  },
  "approval": { "timeout_secs": 30 }
}"#;

    fn path() -> &'static Path {
        Path::new("/tmp/portcullis.json")
    }

    fn stdio(command: &str, args: &[&str]) -> ServerEntry {
        ServerEntry::Stdio {
            command: command.into(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn editing_an_entry_keeps_every_other_key_in_place() {
        let (text, server) = with_entry(FILE, path(), "b", &stdio("npx", &["-y", "srv"])).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["listen", "mcpServers", "approval"]);
        let servers: Vec<&str> = doc["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(servers, ["b", "a"], "entries keep their order");
        assert_eq!(
            doc["mcpServers"]["b"]["cwd"], "srv",
            "fields the form does not show are kept"
        );
        assert_eq!(doc["mcpServers"]["b"]["x-note"], "kept");
        assert_eq!(doc["mcpServers"]["b"]["args"], serde_json::json!(["-y", "srv"]));
        assert_eq!(doc["approval"]["timeout_secs"], 30);
        assert!(matches!(server, ServerConfig::Stdio { ref command, .. } if command == "npx"));
        assert!(text.ends_with("}\n"));
        assert_eq!(read_entry(&text, "b"), Some(stdio("npx", &["-y", "srv"])));
    }

    #[test]
    fn a_new_entry_goes_last_and_a_transport_change_drops_the_old_fields() {
        let entry = ServerEntry::Http {
            url: "https://example.com/mcp".into(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer t".into())]),
        };
        let (text, server) = with_entry(FILE, path(), "new.one", &entry).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let servers: Vec<&str> = doc["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(servers, ["b", "a", "new.one"]);
        assert_eq!(server.transport(), "http");
        let (text, _) = with_entry(FILE, path(), "b", &entry).unwrap();
        let b = &serde_json::from_str::<Value>(&text).unwrap()["mcpServers"]["b"];
        assert_eq!(b.get("command"), None);
        assert_eq!(b.get("cwd"), None);
        assert_eq!(b["url"], "https://example.com/mcp");
        // The legacy SSE type stays when the URL changes.
        let sse = ServerEntry::Http {
            url: "http://127.0.0.1:10/sse".into(),
            headers: BTreeMap::new(),
        };
        let (_, server) = with_entry(FILE, path(), "a", &sse).unwrap();
        assert_eq!(server.transport(), "sse");
    }

    #[test]
    fn bad_entries_are_refused_field_by_field() {
        let fields = |r: Result<(String, ServerConfig), Vec<EntryProblem>>| -> Vec<String> {
            r.unwrap_err().into_iter().map(|p| p.field).collect()
        };
        assert_eq!(
            fields(with_entry(FILE, path(), "bad name", &stdio(" ", &[]))),
            ["name", "command"]
        );
        let url = ServerEntry::Http {
            url: "ftp://x".into(),
            headers: BTreeMap::new(),
        };
        assert_eq!(fields(with_entry(FILE, path(), "ok", &url)), ["url"]);
        assert_eq!(fields(with_entry("{", path(), "ok", &stdio("node", &[]))), [""]);
        assert_eq!(fields(with_entry("[]", path(), "ok", &stdio("node", &[]))), [""]);
    }
}
