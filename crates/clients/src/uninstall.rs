//! `portcullis clients uninstall CLIENT`: undo an install from its record and backup.

use std::path::Path;

use serde_json::Value;

use super::json_file::{sha256, write_atomic};
use super::{display_path, lookup, Client, ClientError, JsonFile, Record, Syntax};

/// How the client's file was put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// The file was as install left it: the backup was copied back, byte for byte.
    FromBackup,
    /// The client had rewritten the file since: the routed entries still as install left them
    /// were put back; the others (changed since) were left as they are.
    Entries { put_back: Vec<String>, left: Vec<String> },
}

/// What uninstall did (or, with `dry_run`, would do).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub record: Record,
    pub restored: Restored,
    /// Servers removed from `portcullis.json` (those changed since install are kept).
    pub removed_imports: Vec<String>,
}

pub fn run(client: Client, data_dir: &Path, dry_run: bool) -> Result<Outcome, ClientError> {
    let record = Record::load(data_dir, client)?.ok_or_else(|| {
        ClientError::new(format!(
            "{} is not routed through Portcullis (no record at {})",
            client.name(),
            Record::path(data_dir, client).display()
        ))
    })?;
    let backup = std::fs::read(&record.backup)
        .map_err(|e| ClientError::new(format!("cannot read the backup {}: {e}", record.backup.display())))?;
    let current = JsonFile::read(&record.config_path, Syntax::Jsonc)?;
    let (restored, bytes) = match &current {
        Some(file) if sha256(&file.bytes) != record.installed_sha256 => put_back_entries(&record, file)?,
        // Unchanged since install, or deleted since: the backup is the answer.
        _ => (Restored::FromBackup, backup),
    };
    let (removed_imports, gateway_edit) = remove_imports(&record)?;
    if !dry_run {
        write_atomic(&record.config_path, &bytes)?;
        match gateway_edit {
            GatewayEdit::None => {}
            GatewayEdit::Write(gateway_bytes) => write_atomic(&record.gateway_config, &gateway_bytes)?,
            GatewayEdit::Remove => std::fs::remove_file(&record.gateway_config)
                .map_err(|e| ClientError::new(format!("cannot remove {}: {e}", record.gateway_config.display())))?,
        }
        let path = Record::path(data_dir, client);
        std::fs::remove_file(&path).map_err(|e| ClientError::new(format!("cannot remove {}: {e}", path.display())))?;
    }
    Ok(Outcome {
        record,
        restored,
        removed_imports,
    })
}

fn put_back_entries(record: &Record, file: &JsonFile) -> Result<(Restored, Vec<u8>), ClientError> {
    let (mut put_back, mut left, mut edits) = (Vec::new(), Vec::new(), Vec::new());
    for routed in &record.routed {
        let label = display_path(&routed.map, &routed.name);
        match lookup(&file.doc, &routed.map).and_then(|m| m.get(&routed.name)) {
            Some(entry) if *entry == routed.after => {
                edits.push((routed.path(), routed.before.clone()));
                put_back.push(label);
            }
            _ => left.push(label),
        }
    }
    let bytes = file.edited(&edits)?;
    Ok((Restored::Entries { put_back, left }, bytes))
}

/// What happens to `portcullis.json`.
enum GatewayEdit {
    None,
    Write(Vec<u8>),
    /// Install created it and nothing changed it since.
    Remove,
}

/// `portcullis.json` without the imported servers: as it was before install if nothing changed
/// it since (its backup, or no file), else without the imports that are still as imported.
fn remove_imports(record: &Record) -> Result<(Vec<String>, GatewayEdit), ClientError> {
    let Some(file) = JsonFile::read(&record.gateway_config, Syntax::Json)? else {
        return Ok((Vec::new(), GatewayEdit::None));
    };
    let imported: Vec<String> = record.imported.iter().map(|(n, _)| n.clone()).collect();
    if record.gateway_config_sha256.as_deref() == Some(sha256(&file.bytes).as_str()) {
        return match &record.gateway_config_backup {
            Some(backup) => {
                let bytes = std::fs::read(backup)
                    .map_err(|e| ClientError::new(format!("cannot read the backup {}: {e}", backup.display())))?;
                Ok((imported, GatewayEdit::Write(bytes)))
            }
            None => Ok((imported, GatewayEdit::Remove)),
        };
    }
    let mut doc = file.doc.clone();
    let mut removed = Vec::new();
    if let Some(Value::Object(servers)) = doc.get_mut("mcpServers") {
        for (name, entry) in &record.imported {
            if servers.get(name) == Some(entry) {
                servers.shift_remove(name);
                removed.push(name.clone());
            }
        }
    }
    if removed.is_empty() {
        return Ok((removed, GatewayEdit::None));
    }
    Ok((removed, GatewayEdit::Write(file.render(&doc)?)))
}
