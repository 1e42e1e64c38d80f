//! Tool pinning: a defence against an MCP server that changes a tool after the person trusted it
//! (a "rug pull": a harmless description at first, instructions to the model later).
//!
//! - **Trust on first use.** The first time a tool's definition — `name`, `title`, `description`,
//!   `inputSchema`, `annotations` — passes through in a `tools/list` answer, its canonical digest
//!   ([`portcullis_wire::canonical::digest`]) and the definition itself are pinned. Nothing
//!   vouches for that first definition; pinning only notices what changes after it.
//! - **A change is held.** A definition with another digest is recorded beside the pin (both
//!   are kept, so a person sees what changed); the gate then holds every call to that tool for
//!   approval until the person accepts the new definition ([`PinStore::accept`]), which becomes
//!   the pin. A change is sticky: a server that shows the pinned definition again (to another
//!   session, say) does not clear it; only acceptance does.
//! - **Per server, not per session.** Every session of a server — its own child process or the
//!   shared stateless one — feeds the same pins, so what one session saw holds calls in all.
//!   Hidden tools are pinned too (the full answer is read before hidden tools are removed).
//! - A tool missing from a later list keeps its pin; it is not held when it comes back unchanged.
//!
//! Stored in `pins.json` in the data dir, a small JSON file rather than a table in `audit.db`: it
//! is state a person may read, back up or delete (to pin everything afresh), not a record of
//! decisions, and it keeps the audit writer's schema and thread to themselves. It is written
//! atomically (temp file, fsync, rename) whenever a pin is added, a change seen or accepted. A
//! file that cannot be read or parsed stops the gateway from starting, naming the file, like a
//! broken config: starting with no pins would silently trust every changed tool afresh.

mod diff;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use portcullis_wire::canonical;

use crate::listed_tool::Listed;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use diff::{DiffEntry, DiffKind};

pub const PINS_FILE: &str = "pins.json";

/// The audit rule of a call held because its tool changed.
pub const PIN_RULE: &str = "pin:changed";

const FORMAT_VERSION: u32 = 1;

/// The fields of a tool that are pinned. Others (`outputSchema`, `icons`, `_meta`) are not: they
/// do not tell the model what the tool does or what to send it.
const PINNED_FIELDS: [&str; 5] = ["name", "title", "description", "inputSchema", "annotations"];

#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot read the tool pins {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{path} is not a valid tool pins file ({why}); fix it, or move it away to pin every tool \
         afresh at next sight"
    )]
    Invalid { path: PathBuf, why: String },
    #[error("cannot write the tool pins {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("no tool {tool:?} of server {server:?} has been seen")]
    UnknownTool { server: String, tool: String },
    #[error("tool {tool:?} of server {server:?} has not changed since it was pinned")]
    NotChanged { server: String, tool: String },
    #[error("tool {tool:?} of server {server:?} changed again (now {current}); review the new change first")]
    Stale {
        server: String,
        tool: String,
        current: String,
    },
}

/// One tool's pin as the control API and the desktop app show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolPin {
    pub server: String,
    pub tool: String,
    pub digest: String,
    pub pinned_at: String,
    /// Set while the server presents a definition other than the pinned one.
    pub change: Option<PinChange>,
}

/// A pinned tool the server now describes differently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PinChange {
    /// Top-level fields that differ: `description`, `inputSchema`, `annotations`, `title`.
    pub fields: Vec<String>,
    pub old_digest: String,
    pub new_digest: String,
    /// The pinned definition.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub old: Value,
    /// The definition the server presents now.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub new: Value,
    pub diff: Vec<DiffEntry>,
    pub pinned_at: String,
    pub seen_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pinned {
    digest: String,
    definition: Value,
    pinned_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changed: Option<Seen>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Seen {
    digest: String,
    definition: Value,
    seen_at: String,
}

/// `pins.json`: server → tool → pin.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PinFile {
    version: u32,
    servers: BTreeMap<String, BTreeMap<String, Pinned>>,
}

impl Default for PinFile {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            servers: BTreeMap::new(),
        }
    }
}

pub struct PinStore {
    path: PathBuf,
    state: Mutex<PinFile>,
    /// Per server and tool, the exact text of the definition last observed in a `tools/list`
    /// page ([`PinStore::observe_listed`]): a page that repeats it changes nothing, so it is not
    /// digested again. Cleared when a pin is accepted (then the same text may be a change).
    /// Locked before `state` wherever both are held.
    seen: Mutex<HashMap<String, HashMap<String, Box<str>>>>,
}

impl PinStore {
    /// Reads `pins.json` in `data_dir`; none yet is an empty store.
    pub fn open(data_dir: &Path) -> Result<Self, PinError> {
        let path = data_dir.join(PINS_FILE);
        let state = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text).map_err(|why| PinError::Invalid {
                path: path.clone(),
                why,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => PinFile::default(),
            Err(source) => return Err(PinError::Read { path, source }),
        };
        Ok(Self {
            path,
            state: Mutex::new(state),
            seen: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PinFile> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Compares the tools of one `tools/list` page with the pins: new tools are pinned, changed
    /// ones recorded. Returns the names of tools found changed by this page.
    pub fn observe(&self, server: &str, tools: &[Value]) -> Vec<String> {
        self.observe_each(server, tools)
    }

    /// [`PinStore::observe`] for a page read from its bytes: a tool whose text is exactly what
    /// this store last observed for it is skipped (observing the same definition again changes
    /// nothing), so a repeated list costs a comparison per tool. `None` when a tool to observe
    /// cannot be read as a JSON value; then nothing is observed.
    pub(crate) fn observe_listed(&self, server: &str, tools: &[Listed<'_>]) -> Option<Vec<String>> {
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let known = seen.entry(server.to_owned()).or_default();
        let fresh: Vec<&Listed<'_>> = tools
            .iter()
            .filter(|t| known.get(&*t.name).map(|raw| &**raw) != Some(t.raw))
            .collect();
        if fresh.is_empty() {
            return Some(Vec::new());
        }
        let values = fresh.iter().map(|t| t.value()).collect::<Option<Vec<&Value>>>()?;
        let changed = self.observe_each(server, values);
        for tool in fresh {
            known.insert(tool.name.to_string(), Box::from(tool.raw));
        }
        Some(changed)
    }

    fn observe_each<'v>(&self, server: &str, tools: impl IntoIterator<Item = &'v Value>) -> Vec<String> {
        let now = now_text();
        let mut state = self.lock();
        let known = state.servers.entry(server.to_owned()).or_default();
        let (mut added, mut changed) = (0usize, Vec::new());
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let definition = definition_of(tool);
            let digest = canonical::digest(&definition);
            match known.get_mut(name) {
                None => {
                    added += 1;
                    known.insert(
                        name.to_owned(),
                        Pinned {
                            digest,
                            definition,
                            pinned_at: now.clone(),
                            changed: None,
                        },
                    );
                }
                Some(pin) if pin.digest == digest => {}
                Some(pin) if pin.changed.as_ref().is_some_and(|c| c.digest == digest) => {}
                Some(pin) => {
                    tracing::warn!(server, tool = name, pinned = %pin.digest, now = %digest, "tool definition changed since it was pinned; calls to it are held until the change is accepted");
                    pin.changed = Some(Seen {
                        digest,
                        definition,
                        seen_at: now.clone(),
                    });
                    changed.push(name.to_owned());
                }
            }
        }
        if added > 0 || !changed.is_empty() {
            if added > 0 {
                tracing::info!(server, added, "pinned tools seen for the first time");
            }
            // A pin that is not written is still in force until the gateway stops; a change
            // not written is seen again at the next list, since the old pin is what is on disk.
            if let Err(e) = write_file(&self.path, &state) {
                tracing::error!(error = %e, "could not save the tool pins");
            }
        }
        changed
    }

    /// What `check` makes of the pinned `inputSchema` of `tool` (read under the lock, not
    /// copied: this runs on every decided call); `None` when the tool has no pinned schema.
    pub fn with_pinned_schema<T>(
        &self,
        server: &str,
        tool: &str,
        check: impl FnOnce(&Value) -> Option<T>,
    ) -> Option<T> {
        let state = self.lock();
        let pin = state.servers.get(server)?.get(tool)?;
        check(pin.definition.get("inputSchema")?)
    }

    /// The pending change of a tool, if the server presented one.
    pub fn change(&self, server: &str, tool: &str) -> Option<PinChange> {
        let state = self.lock();
        let pin = state.servers.get(server)?.get(tool)?;
        pin.changed.as_ref().map(|seen| change_view(pin, seen))
    }

    /// Every pin, by server and tool.
    pub fn list(&self) -> Vec<ToolPin> {
        let state = self.lock();
        state
            .servers
            .iter()
            .flat_map(|(server, tools)| tools.iter().map(move |(tool, pin)| pin_view(server, tool, pin)))
            .collect()
    }

    /// The pins with a pending change.
    pub fn changed(&self) -> Vec<ToolPin> {
        self.list().into_iter().filter(|p| p.change.is_some()).collect()
    }

    /// Pins the changed definition of `tool`. With `digest`, only if that is still the change
    /// (what the person reviewed is what gets pinned). Saved before it takes effect.
    pub fn accept(&self, server: &str, tool: &str, digest: Option<&str>) -> Result<ToolPin, PinError> {
        let unknown = || PinError::UnknownTool {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut state = self.lock();
        // What was observed may be a change again once another definition is the pin.
        seen.clear();
        let pin = state
            .servers
            .get(server)
            .and_then(|t| t.get(tool))
            .ok_or_else(unknown)?;
        let Some(seen) = pin.changed.clone() else {
            return Err(PinError::NotChanged {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        };
        if digest.is_some_and(|d| d != seen.digest) {
            return Err(PinError::Stale {
                server: server.to_owned(),
                tool: tool.to_owned(),
                current: seen.digest,
            });
        }
        let mut next = state.clone();
        let accepted = Pinned {
            digest: seen.digest,
            definition: seen.definition,
            pinned_at: now_text(),
            changed: None,
        };
        next.servers
            .entry(server.to_owned())
            .or_default()
            .insert(tool.to_owned(), accepted.clone());
        write_file(&self.path, &next)?;
        *state = next;
        tracing::info!(server, tool, digest = %accepted.digest, "changed tool definition accepted");
        Ok(pin_view(server, tool, &accepted))
    }
}

/// The pinned part of a tool from `tools/list`, fields absent stay absent.
fn definition_of(tool: &Value) -> Value {
    let fields: Map<String, Value> = PINNED_FIELDS
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), tool.get(*k)?.clone())))
        .collect();
    Value::Object(fields)
}

fn pin_view(server: &str, tool: &str, pin: &Pinned) -> ToolPin {
    ToolPin {
        server: server.to_owned(),
        tool: tool.to_owned(),
        digest: pin.digest.clone(),
        pinned_at: pin.pinned_at.clone(),
        change: pin.changed.as_ref().map(|seen| change_view(pin, seen)),
    }
}

fn change_view(pin: &Pinned, seen: &Seen) -> PinChange {
    PinChange {
        fields: diff::changed_fields(&pin.definition, &seen.definition),
        old_digest: pin.digest.clone(),
        new_digest: seen.digest.clone(),
        old: pin.definition.clone(),
        new: seen.definition.clone(),
        diff: diff::diff(&pin.definition, &seen.definition),
        pinned_at: pin.pinned_at.clone(),
        seen_at: seen.seen_at.clone(),
    }
}

fn parse(text: &str) -> Result<PinFile, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let file: PinFile = serde_path_to_error::deserialize(&mut de).map_err(|e| match e.path().to_string() {
        p if p == "." => e.inner().to_string(),
        p => format!("at {p}: {}", e.inner()),
    })?;
    if file.version != FORMAT_VERSION {
        return Err(format!("version {} is not {FORMAT_VERSION}", file.version));
    }
    // A hand-edited definition whose digest no longer matches could hide a change; refuse it.
    for (server, tools) in &file.servers {
        for (tool, pin) in tools {
            let seen = std::iter::once((&pin.digest, &pin.definition))
                .chain(pin.changed.as_ref().map(|c| (&c.digest, &c.definition)));
            for (digest, definition) in seen {
                if *digest != canonical::digest(definition) {
                    return Err(format!("the digest of {server}/{tool} does not match its definition"));
                }
            }
        }
    }
    Ok(file)
}

/// Replaced whole, mode 0600 (`portcullis-atomic-file`): a reader sees the old file or the new one.
fn write_file(path: &Path, file: &PinFile) -> Result<(), PinError> {
    let err = |source| PinError::Write {
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(file).map_err(|e| err(std::io::Error::other(e)))?;
    text.push('\n');
    let private = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::Private);
    portcullis_atomic_file::write(path, text.as_bytes(), private).map_err(err)
}

fn now_text() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests;
