//! The policy in force for each server, and hot reload.
//!
//! A changed file is loaded and validated before it replaces anything: an invalid file leaves the
//! last good policy in force and says so (log + [`GatewayEvent::PolicyRejected`]). A missing file
//! means "every call requires approval". A file already invalid at start-up has no last good
//! version; that server then refuses every call, with the problems as the reason (fail closed).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use notify::{RecursiveMode, Watcher};
use portcullis_policy::{Policy, PolicyError};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::events::GatewayEvent;

/// What governs a server's calls right now.
#[derive(Clone, Debug)]
pub enum InForce {
    Policy(Policy),
    /// No valid policy was ever loaded: refuse everything, saying why.
    Broken(Arc<str>),
}

pub struct PolicyStore {
    dir: PathBuf,
    slots: RwLock<HashMap<String, InForce>>,
    /// Servers whose file on disk is not what is in force (rejected), until a valid load.
    problems: RwLock<BTreeMap<String, PolicyProblem>>,
    events: broadcast::Sender<GatewayEvent>,
}

/// A policy file that could not be put in force, for status views (`GET /control/status`).
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct PolicyProblem {
    pub server: String,
    pub problems: Vec<String>,
    /// When the file was rejected (ms since the epoch).
    pub since_ms: i64,
    /// `true`: an earlier valid policy is still in force; `false`: none ever loaded, so every
    /// call of this server is refused.
    pub last_good_in_force: bool,
}

impl PolicyStore {
    /// Loads the policy of every server.
    pub fn load(
        dir: &Path,
        servers: impl IntoIterator<Item = String>,
        events: broadcast::Sender<GatewayEvent>,
    ) -> Self {
        let mut problems = BTreeMap::new();
        let slots = servers
            .into_iter()
            .map(|server| {
                let in_force = match load_file(&dir.join(format!("{server}.json"))) {
                    Ok(policy) => InForce::Policy(policy),
                    Err(e) => {
                        for problem in &e.problems {
                            tracing::error!(server, "invalid policy: {problem}");
                        }
                        problems.insert(server.clone(), problem_of(&server, &e, false));
                        InForce::Broken(Arc::from(format!(
                            "the policy file of {server:?} is invalid ({}); every call is refused until it is fixed",
                            first_problem(&e)
                        )))
                    }
                };
                (server, in_force)
            })
            .collect();
        Self {
            dir: dir.to_owned(),
            slots: RwLock::new(slots),
            problems: RwLock::new(problems),
            events,
        }
    }

    pub fn get(&self, server: &str) -> Option<InForce> {
        self.slots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(server)
            .cloned()
    }

    /// A server added at run time: its policy file is loaded like those of the servers configured
    /// at start (a server already known is re-read).
    pub fn add_server(&self, server: &str) {
        let loaded = Self::load(&self.dir, [server.to_owned()], self.events.clone());
        let slot = loaded.get(server);
        let mut slots = self.slots.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let (Some(in_force), false) = (slot, slots.contains_key(server)) {
            slots.insert(server.to_owned(), in_force);
            drop(slots);
            if let Some(problem) = loaded.problems().into_iter().next() {
                self.lock_problems().insert(server.to_owned(), problem);
            }
            return;
        }
        drop(slots);
        self.reload(server);
    }

    /// Policy files not in force, by server.
    pub fn problems(&self) -> Vec<PolicyProblem> {
        self.lock_problems().values().cloned().collect()
    }

    fn lock_problems(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, PolicyProblem>> {
        self.problems.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn path(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{server}.json"))
    }

    /// Re-reads one server's file.
    pub fn reload(&self, server: &str) {
        let known = self
            .slots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains_key(server);
        if !known {
            return;
        }
        match load_file(&self.path(server)) {
            Ok(policy) => {
                self.slots
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(server.to_owned(), InForce::Policy(policy));
                self.lock_problems().remove(server);
                tracing::info!(server, "policy reloaded");
                let _ = self.events.send(GatewayEvent::PolicyReloaded {
                    server: server.to_owned(),
                });
            }
            Err(e) => {
                let last_good = matches!(self.get(server), Some(InForce::Policy(_)));
                self.lock_problems()
                    .insert(server.to_owned(), problem_of(server, &e, last_good));
                let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
                for problem in &problems {
                    if last_good {
                        tracing::error!(server, "policy change rejected, last good policy kept: {problem}");
                    } else {
                        tracing::error!(server, "policy still invalid, every call refused: {problem}");
                    }
                }
                let _ = self.events.send(GatewayEvent::PolicyRejected {
                    server: server.to_owned(),
                    problems,
                });
            }
        }
    }

    /// Watches the policies directory and reloads changed files until the returned guard drops.
    pub fn watch(self: &Arc<Self>) -> Option<notify::RecommendedWatcher> {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if event.kind.is_access() {
                return;
            }
            for path in event.paths {
                if path.extension().is_some_and(|e| e == "json") {
                    if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                        let _ = tx.send(stem.to_owned());
                    }
                }
            }
        })
        .map_err(|e| tracing::warn!(error = %e, "cannot watch policies; hot reload is off"))
        .ok()?;
        if let Err(e) = watcher.watch(&self.dir, RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "cannot watch the policies directory; hot reload is off");
            return None;
        }
        let store = Arc::clone(self);
        tokio::spawn(async move {
            while let Some(server) = rx.recv().await {
                // Coalesce the burst of events one save produces.
                let mut batch = vec![server];
                while let Ok(more) = rx.try_recv() {
                    batch.push(more);
                }
                batch.sort();
                batch.dedup();
                for server in batch {
                    store.reload(&server);
                }
            }
        });
        Some(watcher)
    }
}

impl PolicyStore {
    /// Sets `tools[tool]` in the server's policy file ("always allow" / "deny always"), keeping
    /// the rest of the file as it was, then reloads it. A server without a file gets one whose
    /// default still asks a person.
    pub fn write_entry(&self, server: &str, tool: &str, entry: serde_json::Value) -> Result<(), WriteError> {
        let path = self.path(server);
        let new_text = self.preview_entry(server, tool, entry)?;
        write_atomically(&path, new_text.as_bytes()).map_err(|source| WriteError::Io {
            path: path.clone(),
            source,
        })?;
        self.reload(server);
        Ok(())
    }

    /// The text [`PolicyStore::write_entry`] would write, without writing it (a dry run).
    pub fn preview_entry(&self, server: &str, tool: &str, entry: serde_json::Value) -> Result<String, WriteError> {
        let path = self.path(server);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                "{\n  \"version\": \"1\",\n  \"default\": \"require_approval\",\n  \"tools\": {}\n}\n".to_owned()
            }
            Err(source) => return Err(WriteError::Io { path, source }),
        };
        // The tool's exact name, escaped: a tool called `get_*` must not become a pattern.
        let key = portcullis_policy::exact_key(tool);
        portcullis_policy::add_tool_entry(&text, &key, entry).map_err(|e| WriteError::Invalid {
            path: path.clone(),
            problems: e.to_string(),
        })
    }
}

impl PolicyStore {
    /// The entry "always allow" / "deny always" writes for a tool: the entry that asked — its
    /// rules and rate limit kept, so a standing "yes" never loosens the author's deny rules —
    /// with `action` set on it and on the rule that asked, if a rule did.
    pub fn standing_entry(&self, server: &str, matched_rule: &str, action: &str, reason: Option<&str>) -> Value {
        let (key, rule_index) = matched_entry(matched_rule);
        let current = key.and_then(|key| {
            let text = std::fs::read_to_string(self.path(server)).ok()?;
            let file: Value = serde_json::from_str(&text).ok()?;
            file.get("tools")?.get(key).cloned()
        });
        let mut entry = match current {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        if let Some(Value::Object(rule)) = rule_index.and_then(|i| entry.get_mut("rules")?.as_array_mut()?.get_mut(i)) {
            rule.insert("action".into(), json!(action));
            rule.remove("reason");
        }
        // `allow` is an entry's default: write `{}` as people do, not `{"action": "allow"}`.
        if action == "allow" {
            entry.remove("action");
        } else {
            entry.insert("action".into(), json!(action));
        }
        entry.remove("approval_timeout");
        match reason {
            Some(reason) => entry.insert("reason".into(), json!(reason)),
            None => entry.remove("reason"),
        };
        Value::Object(entry)
    }
}

/// `tools.<key>` or `tools.<key>.rules[<i>]` → (key, i).
fn matched_entry(rule: &str) -> (Option<&str>, Option<usize>) {
    let Some(rest) = rule.strip_prefix("tools.") else {
        return (None, None);
    };
    if let Some((key, tail)) = rest.rsplit_once(".rules[") {
        if let Some(index) = tail.strip_suffix(']').and_then(|i| i.parse().ok()) {
            return (Some(key), Some(index));
        }
    }
    (Some(rest), None)
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid policy, so it was not changed: {problems}")]
    Invalid { path: PathBuf, problems: String },
}

/// Temp file in the same directory, fsync, rename: readers see the old file or the new one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("policy.json");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

fn load_file(path: &Path) -> Result<Policy, PolicyError> {
    if !path.exists() {
        return Ok(Policy::require_approval_for_all());
    }
    Policy::load_file(path)
}

fn problem_of(server: &str, e: &PolicyError, last_good_in_force: bool) -> PolicyProblem {
    PolicyProblem {
        server: server.to_owned(),
        problems: e.problems.iter().map(ToString::to_string).collect(),
        since_ms: crate::gate::now_ms(),
        last_good_in_force,
    }
}

fn first_problem(e: &PolicyError) -> String {
    let first = e.problems.first().map(ToString::to_string).unwrap_or_default();
    match e.problems.len() {
        0 | 1 => first,
        n => format!("{first}; and {} more", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(policy: &str) -> (tempfile::TempDir, PolicyStore) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), policy).unwrap();
        let (events, _) = broadcast::channel(4);
        let store = PolicyStore::load(dir.path(), ["s".to_owned()], events);
        (dir, store)
    }

    #[test]
    fn a_rejected_file_is_reported_until_a_valid_one_loads() {
        let (dir, store) = store_with(r#"{"version":"1","default":"allow"}"#);
        assert!(store.problems().is_empty());
        std::fs::write(dir.path().join("s.json"), "{ garbage").unwrap();
        store.reload("s");
        let problems = store.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].last_good_in_force && !problems[0].problems.is_empty());
        assert!(
            matches!(store.get("s"), Some(InForce::Policy(_))),
            "the last good policy stays"
        );
        std::fs::write(dir.path().join("s.json"), r#"{"version":"1","default":"deny"}"#).unwrap();
        store.reload("s");
        assert!(store.problems().is_empty());
    }

    #[test]
    fn a_file_invalid_from_the_start_is_reported_without_a_last_good() {
        let (_dir, store) = store_with("[]");
        let problems = store.problems();
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].last_good_in_force);
    }

    #[test]
    fn matched_entry_keys() {
        assert_eq!(matched_entry("tools.vm_start"), (Some("vm_start"), None));
        assert_eq!(matched_entry("tools.a.b.rules[2]"), (Some("a.b"), Some(2)));
        assert_eq!(matched_entry("default"), (None, None));
    }

    #[test]
    fn always_allow_keeps_the_entrys_deny_rules() {
        let (_dir, store) = store_with(
            r#"{"version":"1","tools":{"probe":{"action":"require_approval","approval_timeout":9,
                "rules":[{"when":{"arguments.m":{"regex":"^rm-"}},"action":"deny","reason":"no rm"}]}}}"#,
        );
        let entry = store.standing_entry("s", "tools.probe", "allow", None);
        assert!(entry.get("action").is_none(), "allow is the default action: {entry}");
        assert_eq!(
            entry["rules"][0]["action"], "deny",
            "the author's deny rule survives: {entry}"
        );
        assert!(entry.get("approval_timeout").is_none());
    }

    #[test]
    fn always_allow_from_a_rule_changes_that_rule() {
        let (_dir, store) = store_with(
            r#"{"version":"1","tools":{"q":{"rules":[{"when":{"arguments.x":{"eq":1}},"action":"require_approval"}]}}}"#,
        );
        let entry = store.standing_entry("s", "tools.q.rules[0]", "allow", None);
        assert_eq!(entry["rules"][0]["action"], "allow", "{entry}");
    }

    #[test]
    fn a_glob_or_default_match_gets_an_exact_entry() {
        let (_dir, store) = store_with(r#"{"version":"1","tools":{"vm_*":{"action":"require_approval"}}}"#);
        let entry = store.standing_entry("s", "default", "deny", Some("never"));
        assert_eq!(entry, json!({"action": "deny", "reason": "never"}));
    }
}
