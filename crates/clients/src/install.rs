//! `portcullis clients install CLIENT`: plan the change (shown as a preview), then apply it.

use std::path::Path;

use serde_json::{Map, Value};

use super::json_file::{back_up, render, sha256, write_atomic};
use super::{
    display_path, entries, is_routed, preview_entry, Client, ClientError, JsonFile, Record, Routed, Setup, Syntax,
    TRANSPORT_KEYS,
};
use portcullis_config::config::{Config, ConfigError, ServerConfig};

/// A routed server's policy file, as the gateway will look for it after the install.
#[derive(Debug, Clone)]
pub struct PolicyTarget {
    pub server: String,
    /// How to start the server (to list its tools for a starter policy).
    pub config: ServerConfig,
    pub path: std::path::PathBuf,
    /// The file exists already: install leaves it as it is.
    pub exists: bool,
}

/// The change install would make; nothing is written until [`apply`].
#[derive(Debug, Clone)]
pub struct Plan {
    pub client: Client,
    pub file: JsonFile,
    pub new_bytes: Vec<u8>,
    pub routed: Vec<Routed>,
    /// Servers to add to `portcullis.json` (some routed servers are there already, unchanged).
    pub imports: Vec<(String, Value)>,
    /// Entries left as they are, and why.
    pub skipped: Vec<(String, String)>,
    pub gateway_config: GatewayConfigEdit,
}

/// `portcullis.json` before and after the imports.
#[derive(Debug, Clone)]
pub struct GatewayConfigEdit {
    pub path: std::path::PathBuf,
    /// `None`: the file does not exist yet.
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.routed.is_empty()
    }

    /// The policies directory of `portcullis.json` as the install leaves it.
    pub fn policies_dir(&self) -> Result<std::path::PathBuf, ClientError> {
        Ok(self.gateway_config_after()?.policies_dir)
    }

    /// Each routed server once, with its policy file and whether that exists.
    pub fn policy_targets(&self) -> Result<Vec<PolicyTarget>, ClientError> {
        let config = self.gateway_config_after()?;
        let mut targets: Vec<PolicyTarget> = Vec::new();
        for r in &self.routed {
            if targets.iter().any(|t| t.server == r.name) {
                continue;
            }
            let server = config
                .servers
                .get(&r.name)
                .ok_or_else(|| ClientError::new(format!("{:?} is routed but not in portcullis.json", r.name)))?;
            let path = config.policy_path(&r.name);
            targets.push(PolicyTarget {
                server: r.name.clone(),
                config: server.clone(),
                exists: path.exists(),
                path,
            });
        }
        Ok(targets)
    }

    fn gateway_config_after(&self) -> Result<Config, ClientError> {
        let edit = &self.gateway_config;
        Config::from_str(&String::from_utf8_lossy(&edit.after), &edit.path)
            .map_err(|e| ClientError::new(format!("the imported config would be invalid: {e}")))
    }

    /// A diff-like account of the change: each routed entry before and after, the servers
    /// added to `portcullis.json`, and what was left alone. Env and header values are hidden.
    pub fn preview(&self) -> String {
        let mut out = vec![
            format!("--- {}", self.file.path.display()),
            format!("+++ {}", self.file.path.display()),
        ];
        for r in &self.routed {
            out.push(format!("  {}", display_path(&r.map, &r.name)));
            out.push(format!("-   {}", preview_entry(&r.before)));
            out.push(format!("+   {}", preview_entry(&r.after)));
        }
        if !self.imports.is_empty() {
            let path = self.gateway_config.path.display();
            out.push(format!("--- {path}"));
            out.push(format!("+++ {path}"));
            for (name, entry) in &self.imports {
                out.push(format!("+ mcpServers.{name}  {}", preview_entry(entry)));
            }
        }
        for (name, why) in &self.skipped {
            out.push(format!("  unchanged: {name}: {why}"));
        }
        out.join("\n")
    }
}

/// Works out the change for `client`. Refuses when the client was installed already (uninstall
/// first), has no config file, or its file is not JSON (comments and trailing commas allowed).
pub fn plan(client: Client, config_path: &Path, setup: &Setup) -> Result<Plan, ClientError> {
    if let Some(record) = Record::load(&setup.data_dir, client)? {
        return Err(ClientError::new(format!(
            "{} was already routed through Portcullis on {}; run `portcullis clients uninstall {}` first",
            client.name(),
            record.installed_at,
            client.id()
        )));
    }
    let file = JsonFile::read(config_path, Syntax::Jsonc)?.ok_or_else(|| {
        ClientError::new(format!(
            "{} has no config at {}; nothing to route",
            client.name(),
            config_path.display()
        ))
    })?;
    let gateway = GatewayFileState::read(&setup.gateway_config)?;

    let mut routed = Vec::new();
    let mut imports: Vec<(String, Value)> = Vec::new();
    let mut skipped = Vec::new();
    for (map, name, entry) in entries(client, &file.doc) {
        let label = display_path(&map, &name);
        let transport = match importable(&name, &entry) {
            Ok(t) => t,
            Err(why) => {
                skipped.push((label, why));
                continue;
            }
        };
        let known = gateway
            .servers
            .get(&name)
            .or_else(|| imports.iter().find(|(n, _)| *n == name).map(|(_, v)| v));
        match known {
            Some(existing) if *existing != transport => {
                skipped.push((
                    label,
                    format!("portcullis.json already has a different server named {name:?}; rename one of them"),
                ));
                continue;
            }
            Some(_) => {}
            None => imports.push((name.clone(), transport)),
        }
        let extras: Map<String, Value> = entry
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(k, _)| !TRANSPORT_KEYS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let after = client.routed_entry(setup, &name, &extras);
        routed.push(Routed {
            map,
            name,
            before: entry,
            after,
        });
    }
    let new_bytes = file.edited(&routed.iter().map(|r| (r.path(), r.after.clone())).collect::<Vec<_>>())?;
    let gateway_config = gateway.with_imports(&imports)?;
    Ok(Plan {
        client,
        file,
        new_bytes,
        routed,
        imports,
        skipped,
        gateway_config,
    })
}

/// Writes the plan: backup, `portcullis.json`, the client's file, then the record. Returns the
/// record (its `backup` says where the original is).
pub fn apply(plan: &Plan, setup: &Setup) -> Result<Record, ClientError> {
    let stamp = stamp();
    // Nothing changed on disk since the plan was made, or the plan would be stale.
    let now = std::fs::read(&plan.file.path)
        .map_err(|e| ClientError::new(format!("cannot read {}: {e}", plan.file.path.display())))?;
    if now != plan.file.bytes {
        return Err(ClientError::new(format!(
            "{} changed while the change was being prepared; run install again",
            plan.file.path.display()
        )));
    }
    let backup = back_up(&plan.file.path, &plan.file.bytes, &stamp)?;
    let edit = &plan.gateway_config;
    let (mut gateway_config_sha256, mut gateway_config_backup) = (None, None);
    if !plan.imports.is_empty() {
        if let Some(before) = &edit.before {
            gateway_config_backup = Some(back_up(&edit.path, before, &stamp)?);
        }
        write_atomic(&edit.path, &edit.after)?;
        gateway_config_sha256 = Some(sha256(&edit.after));
    }
    write_atomic(&plan.file.path, &plan.new_bytes)?;
    let record = Record {
        client: plan.client.id().to_owned(),
        config_path: plan.file.path.clone(),
        backup,
        installed_sha256: sha256(&plan.new_bytes),
        routed: plan.routed.clone(),
        gateway_config: edit.path.clone(),
        imported: plan.imports.clone(),
        gateway_config_sha256,
        gateway_config_backup,
        installed_at: stamp,
    };
    let text = serde_json::to_vec_pretty(&record).map_err(|e| ClientError::new(e.to_string()))?;
    write_atomic(&Record::path(&setup.data_dir, plan.client), &text)?;
    Ok(record)
}

/// The part of a client's entry `portcullis.json` takes, if the gateway can run it as is.
fn importable(name: &str, entry: &Value) -> Result<Value, String> {
    if is_routed(entry) {
        return Err("already goes through Portcullis".to_owned());
    }
    let Value::Object(fields) = entry else {
        return Err("not an object".to_owned());
    };
    if fields.contains_key("envFile") {
        return Err("reads its environment from an envFile, which only the client loads".to_owned());
    }
    let transport: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| TRANSPORT_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let transport = Value::Object(transport);
    if transport.to_string().contains("${") {
        return Err("uses ${...} variables that only the client fills in".to_owned());
    }
    let probe = serde_json::json!({ "mcpServers": { name: transport } });
    Config::from_str(&probe.to_string(), Path::new("portcullis.json")).map_err(|e| match e {
        ConfigError::Invalid { message, .. } => format!("Portcullis cannot run it: {message}"),
        other => other.to_string(),
    })?;
    Ok(transport)
}

/// `portcullis.json` as install finds it.
struct GatewayFileState {
    path: std::path::PathBuf,
    file: Option<JsonFile>,
    servers: Map<String, Value>,
}

impl GatewayFileState {
    fn read(path: &Path) -> Result<Self, ClientError> {
        let file = JsonFile::read(path, Syntax::Json)?;
        let servers = match file.as_ref().map(|f| f.doc.get("mcpServers")) {
            Some(Some(Value::Object(s))) => s.clone(),
            Some(Some(_)) => {
                return Err(ClientError::new(format!(
                    "{}: \"mcpServers\" is not an object",
                    path.display()
                )))
            }
            _ => Map::new(),
        };
        Ok(Self {
            path: path.to_owned(),
            file,
            servers,
        })
    }

    fn with_imports(&self, imports: &[(String, Value)]) -> Result<GatewayConfigEdit, ClientError> {
        let mut doc = self
            .file
            .as_ref()
            .map_or_else(|| serde_json::json!({ "mcpServers": {} }), |f| f.doc.clone());
        let root = doc
            .as_object_mut()
            .ok_or_else(|| ClientError::new(format!("{} is not a JSON object", self.path.display())))?;
        let servers = root.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(servers) = servers {
            for (name, entry) in imports {
                servers.insert(name.clone(), entry.clone());
            }
        }
        let after = match &self.file {
            Some(f) => f.render(&doc)?,
            None => render(&doc, b"  ", true)?,
        };
        // Never write a config the gateway would refuse.
        let text = String::from_utf8_lossy(&after);
        Config::from_str(&text, &self.path)
            .map_err(|e| ClientError::new(format!("the imported config would be invalid: {e}")))?;
        Ok(GatewayConfigEdit {
            path: self.path.clone(),
            before: self.file.as_ref().map(|f| f.bytes.clone()),
            after,
        })
    }
}

/// A UTC timestamp usable in file names on every platform: `20261130T172000Z`.
fn stamp() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace(['-', ':'], "")
}
