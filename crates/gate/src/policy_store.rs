//! The policy in force for each server, and hot reload.
//!
//! A changed file is loaded and validated before it replaces anything: an invalid file leaves the
//! last good policy in force and says so (log + [`GatewayEvent::PolicyRejected`]). A missing file
//! means "every call requires approval". A file already invalid at start-up has no last good
//! version; that server then refuses every call, with the problems as the reason (fail closed).
//!
//! What is on disk is what is enforced: the store remembers the bytes each policy came from, and
//! [`PolicyStore::watch`] compares them with the file (see `reload`), whatever happened to the
//! directory since start.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use portcullis_policy::{Door, Policy, PolicyError, Problem, RuleRef};
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::events::GatewayEvent;

mod reload;
mod undo;

pub use reload::{ReloadMode, Watch, POLL_INTERVAL};
pub use undo::{PolicyWrite, UndoError, UNDO_WINDOW};

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
    /// What each server's file held when it was last read: a read that finds the same is no change.
    seen: Mutex<HashMap<String, Seen>>,
    /// Held from reading a file to putting its policy in force, so two readers (the watch and the
    /// poll) cannot put an older read in force after a newer one.
    reading: Mutex<()>,
    /// Servers whose file on disk is not what is in force (rejected), until a valid load.
    problems: RwLock<BTreeMap<String, PolicyProblem>>,
    events: broadcast::Sender<GatewayEvent>,
    /// Recent writes made by decisions, for undo.
    writes: Mutex<undo::Ledger>,
    /// How changes reach the store (watched, or polled only, and why).
    mode: RwLock<ReloadMode>,
}

/// A policy file as last read.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Missing,
    Bytes(Vec<u8>),
    /// It exists but could not be read (the error's text).
    Unreadable(String),
}

/// A policy file that could not be put in force, for status views (`GET /control/status`).
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct PolicyProblem {
    pub server: String,
    /// The file that was rejected.
    pub path: String,
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
        let store = Self {
            dir: dir.to_owned(),
            slots: RwLock::default(),
            seen: Mutex::default(),
            reading: Mutex::default(),
            problems: RwLock::default(),
            events,
            writes: Mutex::default(),
            mode: RwLock::new(ReloadMode::NotStarted),
        };
        for server in servers {
            store.add_server(&server);
        }
        store
    }

    pub fn get(&self, server: &str) -> Option<InForce> {
        self.slots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(server)
            .cloned()
    }

    fn slots_mut(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, InForce>> {
        self.slots.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn known(&self) -> Vec<String> {
        let slots = self.slots.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        slots.keys().cloned().collect()
    }

    /// A server added at run time: its policy file is loaded like those of the servers configured
    /// at start (a server already known is re-read).
    pub fn add_server(&self, server: &str) {
        let added = {
            let mut slots = self.slots_mut();
            let added = !slots.contains_key(server);
            if added {
                slots.insert(server.to_owned(), InForce::Broken(Arc::from("not loaded yet")));
            }
            added
        };
        if added {
            self.reload_quietly(server);
        } else {
            self.reload(server);
        }
    }

    /// Policy files not in force, by server.
    pub fn problems(&self) -> Vec<PolicyProblem> {
        self.lock_problems().values().cloned().collect()
    }

    /// Why `server`'s file is not the policy in force, if it is not.
    pub fn problem(&self, server: &str) -> Option<PolicyProblem> {
        self.lock_problems().get(server).cloned()
    }

    fn lock_problems(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, PolicyProblem>> {
        self.problems.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn path(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{server}.json"))
    }

    /// How file changes reach the store.
    pub fn reload_mode(&self) -> ReloadMode {
        self.mode
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Re-reads one server's file and puts what it holds in force (or reports why not).
    pub fn reload(&self, server: &str) {
        self.read_and_apply(server, false, true);
    }

    /// Re-reads one server's file if its bytes differ from the last read; `true` if they did.
    pub(crate) fn reload_if_changed(&self, server: &str) -> bool {
        self.read_and_apply(server, true, true)
    }

    /// As [`PolicyStore::reload`], at start-up: no "reloaded" event or log line.
    fn reload_quietly(&self, server: &str) {
        self.read_and_apply(server, false, false);
    }

    fn read_and_apply(&self, server: &str, only_if_changed: bool, announce: bool) -> bool {
        if !self
            .slots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains_key(server)
        {
            return false;
        }
        let _reading = self.reading.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = self.path(server);
        let seen = read_file(&path);
        {
            let mut all = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if only_if_changed && all.get(server) == Some(&seen) {
                return false;
            }
            all.insert(server.to_owned(), seen.clone());
        }
        match policy_of(&seen, &path) {
            Ok(policy) => self.put_in_force(server, policy, announce),
            Err(e) => self.reject(server, &path, &e),
        }
        true
    }

    fn put_in_force(&self, server: &str, policy: Policy, announce: bool) {
        self.slots_mut().insert(server.to_owned(), InForce::Policy(policy));
        let had_problem = self.lock_problems().remove(server).is_some();
        if announce || had_problem {
            tracing::info!(server, "policy reloaded");
            let _ = self.events.send(GatewayEvent::PolicyReloaded {
                server: server.to_owned(),
            });
        }
    }

    fn reject(&self, server: &str, path: &Path, e: &PolicyError) {
        let last_good = matches!(self.get(server), Some(InForce::Policy(_)));
        if !last_good {
            self.slots_mut().insert(
                server.to_owned(),
                InForce::Broken(Arc::from(format!(
                    "the policy file of {server:?} is invalid ({}); every call is refused until it is fixed",
                    first_problem(e)
                ))),
            );
        }
        self.lock_problems()
            .insert(server.to_owned(), problem_of(server, path, e, last_good));
        let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
        for problem in &problems {
            if last_good {
                tracing::error!(server, "policy change rejected, last good policy kept: {problem}");
            } else {
                tracing::error!(server, "invalid policy, every call refused: {problem}");
            }
        }
        let _ = self.events.send(GatewayEvent::PolicyRejected {
            server: server.to_owned(),
            problems,
        });
    }
}

/// Where a server's policy in force came from, beside its file (`policy explain`, status views).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PolicyState {
    pub server: String,
    /// The policy file, whether or not it exists.
    pub path: String,
    pub source: PolicySource,
    /// Why the file is not in force (empty when it is).
    pub problems: Vec<String>,
}

/// Whether the policy in force is the file's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicySource {
    /// The file as it is now.
    File,
    /// There is no file: every call asks a person.
    NoFile,
    /// The file was rejected; the last valid version stays in force.
    LastGood,
    /// The file was rejected and none was ever valid: every call is refused.
    None,
}

impl PolicyStore {
    /// Where `server`'s policy in force came from; `None` for a server not configured.
    pub fn state(&self, server: &str) -> Option<PolicyState> {
        self.get(server)?;
        let path = self.path(server).display().to_string();
        if let Some(problem) = self.problem(server) {
            let source = if problem.last_good_in_force {
                PolicySource::LastGood
            } else {
                PolicySource::None
            };
            return Some(PolicyState {
                server: server.to_owned(),
                path,
                source,
                problems: problem.problems,
            });
        }
        let missing = matches!(
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(server),
            Some(Seen::Missing)
        );
        Some(PolicyState {
            server: server.to_owned(),
            path,
            source: if missing {
                PolicySource::NoFile
            } else {
                PolicySource::File
            },
            problems: Vec::new(),
        })
    }
}

/// Reads a policy file, following symbolic links (a linked file or directory is read through).
fn read_file(path: &Path) -> Seen {
    match std::fs::read(path) {
        Ok(bytes) => Seen::Bytes(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Missing,
        Err(e) => Seen::Unreadable(e.to_string()),
    }
}

/// The policy a file's contents give: no file asks a person for every call.
fn policy_of(seen: &Seen, path: &Path) -> Result<Policy, PolicyError> {
    let source = path.display().to_string();
    let refused = |message: String| PolicyError {
        problems: vec![Problem {
            file: source.clone(),
            path: "$".to_owned(),
            message,
        }],
    };
    match seen {
        Seen::Missing => Ok(Policy::require_approval_for_all()),
        Seen::Unreadable(why) => Err(refused(format!("cannot read the policy file: {why}"))),
        Seen::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Policy::from_json_str(text, &source),
            Err(_) => Err(refused("the policy file is not UTF-8 text".to_owned())),
        },
    }
}

/// What a policy file gets when there is none: every call still asks a person.
const NEW_POLICY: &str = "{\n  \"version\": \"1\",\n  \"default\": \"require_approval\",\n  \"tools\": {}\n}\n";

/// Policy files are read and shared by people: an existing file keeps its mode, a new one is 0644.
const POLICY_FILE: portcullis_atomic_file::Options =
    portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrShared);

impl PolicyStore {
    /// Sets `tools[tool]` in the server's policy file: [`PolicyStore::write_entry_at`] at
    /// [`Door::Tools`].
    pub fn write_entry(&self, server: &str, tool: &str, entry: Value) -> Result<PolicyWrite, WriteError> {
        self.write_entry_at(server, Door::Tools, tool, entry)
    }

    /// Sets the entry of `name` in `door`'s section of the server's policy file ("always allow" /
    /// "deny always"): `tools[name]`, `resources[uri]` (the URI in normal form), `prompts[name]`,
    /// or `server_requests.<kind>` (`name` not read), under the exact key
    /// ([`portcullis_policy::exact_entry_key`]), changing only that entry's lines, then reloads
    /// it. A server without a file gets one whose default still asks a person. The file's lock is
    /// held from the read to the write, so two decisions at the same moment both land. The write
    /// can be undone for [`UNDO_WINDOW`] ([`PolicyStore::undo`]).
    pub fn write_entry_at(
        &self,
        server: &str,
        door: Door,
        name: &str,
        entry: Value,
    ) -> Result<PolicyWrite, WriteError> {
        let path = self.path(server);
        let key = entry_key(&path, door, name)?;
        self.write_with(server, |path, before| {
            let text = edited(path, before, door, &key, &entry)?;
            Ok((text, key.clone(), entry.clone(), ()))
        })
        .map(|(write, ())| write)
    }

    /// Adds a rule for `name` in `door`'s section ("always" with a condition,
    /// [`portcullis_policy::add_rule`]): read, placed and written under the file's lock like
    /// [`PolicyStore::write_entry_at`], and undoable the same way. Returns the write and the rule
    /// as the evaluator will name it when it decides.
    pub fn write_rule(
        &self,
        server: &str,
        door: Door,
        name: &str,
        rule: &NewRule,
    ) -> Result<(PolicyWrite, RuleRef), WriteError> {
        self.write_with(server, |path, before| {
            let written = ruled(path, before, door, name, rule)?;
            Ok((written.text, written.key, written.entry, written.name))
        })
    }

    /// The text [`PolicyStore::write_rule`] would write, without writing it (a dry run).
    pub fn preview_rule(
        &self,
        server: &str,
        door: Door,
        name: &str,
        rule: &NewRule,
    ) -> Result<portcullis_policy::RuleWrite, WriteError> {
        let path = self.path(server);
        let before = read_if_any(&path)?;
        ruled(&path, before.as_deref(), door, name, rule)
    }

    /// Locks the server's file, lets `edit` turn its bytes into (text, key, entry, what else the
    /// caller returns), writes the text, reloads, and remembers the write for undo.
    fn write_with<T>(
        &self,
        server: &str,
        edit: impl FnOnce(&Path, Option<&[u8]>) -> Result<(String, String, Value, T), WriteError>,
    ) -> Result<(PolicyWrite, T), WriteError> {
        let path = self.path(server);
        let io = |source| WriteError::Io {
            path: path.clone(),
            source,
        };
        let locked = portcullis_atomic_file::lock(&path).map_err(io)?;
        let before = locked.read().map_err(io)?;
        let (new_text, key, entry, made) = edit(&path, before.as_deref())?;
        locked.write(new_text.as_bytes(), POLICY_FILE).map_err(io)?;
        drop(locked);
        self.reload(server);
        let rule_text = entry_text(&key, &entry);
        let write = PolicyWrite {
            write_id: undo::new_write_id(),
            server: server.to_owned(),
            path: path.display().to_string(),
            key,
            rule_text,
            undo_until_ms: crate::clock::now_ms() + i64::try_from(UNDO_WINDOW.as_millis()).unwrap_or(i64::MAX),
        };
        self.lock_writes().remember(undo::Recorded {
            write: write.clone(),
            path,
            before,
            after: new_text.into_bytes(),
            expires: Instant::now() + UNDO_WINDOW,
        });
        Ok((write, made))
    }

    /// Takes back the policy write `write_id`: the file gets its earlier bytes again (or is
    /// removed, if there was none), provided it still holds exactly what was written and the
    /// write is at most [`UNDO_WINDOW`] old at `now`.
    pub fn undo(&self, write_id: &str, now: Instant) -> Result<PolicyWrite, UndoError> {
        let recorded = self.lock_writes().take(write_id, now)?;
        let io = |source| UndoError::Io {
            id: write_id.to_owned(),
            path: recorded.path.clone(),
            source,
        };
        let locked = portcullis_atomic_file::lock(&recorded.path).map_err(io)?;
        if locked.read().map_err(io)?.as_deref() != Some(&recorded.after[..]) {
            return Err(UndoError::Changed {
                id: write_id.to_owned(),
                path: recorded.path.clone(),
            });
        }
        match &recorded.before {
            Some(bytes) => locked.write(bytes, POLICY_FILE),
            None => locked.remove(),
        }
        .map_err(io)?;
        drop(locked);
        self.reload(&recorded.write.server);
        tracing::info!(write = write_id, path = %recorded.path.display(), "policy write undone");
        Ok(recorded.write)
    }

    fn lock_writes(&self) -> std::sync::MutexGuard<'_, undo::Ledger> {
        self.writes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The text [`PolicyStore::write_entry_at`] would write, without writing it (a dry run).
    pub fn preview_entry(&self, server: &str, door: Door, name: &str, entry: Value) -> Result<String, WriteError> {
        let path = self.path(server);
        let key = entry_key(&path, door, name)?;
        let before = read_if_any(&path)?;
        edited(&path, before.as_deref(), door, &key, &entry)
    }
}

/// An argument rule a person chose to write ("always" with a condition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRule {
    pub allow: bool,
    /// The policy `when` object.
    pub when: Value,
    /// Told to the agent when the rule denies.
    pub reason: Option<String>,
}

/// An entry as a person reads it in an undo offer or a dry run: `"key": { … }`.
pub fn entry_text(key: &str, entry: &Value) -> String {
    format!(
        "{}: {}",
        Value::String(key.to_owned()),
        serde_json::to_string_pretty(entry).unwrap_or_default()
    )
}

fn read_if_any(path: &Path) -> Result<Option<Vec<u8>>, WriteError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(WriteError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// `before` (the file's text, or a new file's) with `rule` added for `name` at `door`.
fn ruled(
    path: &Path,
    before: Option<&[u8]>,
    door: Door,
    name: &str,
    rule: &NewRule,
) -> Result<portcullis_policy::RuleWrite, WriteError> {
    let invalid = |problems: String| WriteError::Invalid {
        path: path.to_owned(),
        problems,
    };
    let text = match before {
        Some(bytes) => std::str::from_utf8(bytes).map_err(|_| invalid("the file is not UTF-8 text".into()))?,
        None => NEW_POLICY,
    };
    // A deny always tells the agent why, as "deny always" without a condition does.
    let reason = rule
        .reason
        .as_deref()
        .or((!rule.allow).then_some("denied always by the user"));
    portcullis_policy::add_rule(text, door, name, &rule.when, rule.allow, reason).map_err(|e| invalid(e.to_string()))
}

/// The key that names `name` alone in `door`'s section: a tool called `get_*` must not become a
/// pattern, and a resource is named by its URI in normal form.
fn entry_key(path: &Path, door: Door, name: &str) -> Result<String, WriteError> {
    portcullis_policy::exact_entry_key(door, name).map_err(|e| WriteError::Invalid {
        path: path.to_owned(),
        problems: e.to_string(),
    })
}

/// `before` (the file's bytes, `None` for no file) with the entry `key` of `door`'s section set
/// to `entry`.
fn edited(path: &Path, before: Option<&[u8]>, door: Door, key: &str, entry: &Value) -> Result<String, WriteError> {
    let invalid = |problems: String| WriteError::Invalid {
        path: path.to_owned(),
        problems,
    };
    let text = match before {
        Some(bytes) => std::str::from_utf8(bytes).map_err(|_| invalid("the file is not UTF-8 text".into()))?,
        None => NEW_POLICY,
    };
    portcullis_policy::add_entry(text, door, key, entry.clone()).map_err(|e| invalid(e.to_string()))
}

impl PolicyStore {
    /// The entry "always allow" / "deny always" writes for a request at `door` (a tool call, a
    /// resource read, a prompt, a server request): the entry that asked — its rules and rate
    /// limit kept, so a standing "yes" never loosens the author's deny rules — with `action` set
    /// on it and on the rule that asked, if a rule did. `asked`: the part of the policy that
    /// asked (`None`: not the policy, a changed tool; the entry starts empty). The entry is read
    /// from `door`'s section; a reference to another section's entry is not read.
    pub fn standing_entry(
        &self,
        server: &str,
        door: Door,
        asked: Option<&RuleRef>,
        action: &str,
        reason: Option<&str>,
    ) -> Value {
        let asked = asked.filter(|asked| asked.door() == Some(door));
        let key = asked.and_then(RuleRef::entry_key);
        let rule_index = asked.and_then(RuleRef::rule_index);
        let current = key.and_then(|key| {
            let text = std::fs::read_to_string(self.path(server)).ok()?;
            let file: Value = serde_json::from_str(&text).ok()?;
            file.get(door.section())?.get(key).cloned()
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

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid policy, so it was not changed: {problems}")]
    Invalid { path: PathBuf, problems: String },
}

fn problem_of(server: &str, path: &Path, e: &PolicyError, last_good_in_force: bool) -> PolicyProblem {
    PolicyProblem {
        server: server.to_owned(),
        path: path.display().to_string(),
        problems: e.problems.iter().map(ToString::to_string).collect(),
        since_ms: crate::clock::now_ms(),
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

    fn denies(store: &PolicyStore, tool: &str) -> bool {
        match store.get("s") {
            Some(InForce::Policy(p)) => p.evaluate(tool, &json!({})).action == portcullis_policy::Action::Deny,
            other => panic!("{other:?}"),
        }
    }

    /// The directory missing at start (as `clients install` once left it): a file written later is
    /// read at the next poll, and a poll that finds the same bytes changes nothing.
    #[test]
    fn a_poll_reads_a_directory_created_after_start() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("policies");
        let (events, mut seen) = broadcast::channel(8);
        let store = PolicyStore::load(&dir, ["s".to_owned()], events);
        assert_eq!(store.state("s").unwrap().source, PolicySource::NoFile);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("s.json"), r#"{"version":"1","tools":{"t":{"action":"deny"}}}"#).unwrap();
        store.poll();
        assert!(denies(&store, "t"), "the new file is in force");
        assert_eq!(store.state("s").unwrap().source, PolicySource::File);
        assert!(matches!(seen.try_recv(), Ok(GatewayEvent::PolicyReloaded { .. })));
        store.poll();
        assert!(seen.try_recv().is_err(), "the same bytes are no change");
        std::fs::remove_dir_all(&dir).unwrap();
        store.poll();
        assert!(!denies(&store, "t"), "no file again: every call asks");
        assert_eq!(store.state("s").unwrap().source, PolicySource::NoFile);
    }

    #[test]
    fn a_rejected_edit_is_the_state_until_fixed() {
        let (dir, store) = store_with(r#"{"version":"1","tools":{"t":{"action":"deny"}}}"#);
        std::fs::write(dir.path().join("s.json"), "{ nope").unwrap();
        store.poll();
        let state = store.state("s").unwrap();
        assert_eq!(state.source, PolicySource::LastGood);
        assert!(!state.problems.is_empty() && denies(&store, "t"), "{state:?}");
        std::fs::write(dir.path().join("s.json"), r#"{"version":"1"}"#).unwrap();
        store.poll();
        assert_eq!(store.state("s").unwrap().source, PolicySource::File);
        assert!(!denies(&store, "t"));
    }

    #[test]
    fn a_file_invalid_from_the_start_is_reported_without_a_last_good() {
        let (_dir, store) = store_with("[]");
        let problems = store.problems();
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].last_good_in_force);
    }

    #[test]
    fn always_allow_keeps_the_entrys_deny_rules() {
        let (_dir, store) = store_with(
            r#"{"version":"1","tools":{"probe":{"action":"require_approval","approval_timeout":9,
                "rules":[{"when":{"arguments.m":{"regex":"^rm-"}},"action":"deny","reason":"no rm"}]}}}"#,
        );
        let entry = store.standing_entry("s", Door::Tools, Some(&entry_ref("probe")), "allow", None);
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
        let asked = RuleRef::Rule {
            key: "q".into(),
            index: 0,
        };
        let entry = store.standing_entry("s", Door::Tools, Some(&asked), "allow", None);
        assert_eq!(entry["rules"][0]["action"], "allow", "{entry}");
    }

    #[test]
    fn a_glob_or_default_match_gets_an_exact_entry() {
        let (_dir, store) = store_with(r#"{"version":"1","tools":{"vm_*":{"action":"require_approval"}}}"#);
        let entry = store.standing_entry("s", Door::Tools, Some(&RuleRef::Default), "deny", Some("never"));
        assert_eq!(entry, json!({"action": "deny", "reason": "never"}));
    }

    fn entry_ref(key: &str) -> RuleRef {
        RuleRef::Entry { key: key.into() }
    }

    /// The text `tools.q.rules[0]` names both rule 0 of `q` and the glob entry `q.rules[0]`
    /// (which matches `q.rules0`): parsed back, "always" rewrote `q`'s rule instead of copying
    /// the glob entry that asked. The typed reference says which.
    #[test]
    fn always_from_a_glob_entry_whose_key_reads_like_a_rule_copies_that_entry() {
        let (_dir, store) = store_with(
            r#"{"version":"1","tools":{
                "q": {"rules":[{"when":{"arguments.x":{"eq":1}},"action":"deny"}]},
                "q.rules[0]": {"action":"require_approval","reason":"asks"}}}"#,
        );
        let Some(InForce::Policy(policy)) = store.get("s") else {
            panic!("the policy loads")
        };
        let asked = policy.evaluate("q.rules0", &json!({})).rule;
        assert_eq!(
            (&asked, asked.to_string().as_str()),
            (&entry_ref("q.rules[0]"), "tools.q.rules[0]")
        );
        let entry = store.standing_entry("s", Door::Tools, Some(&asked), "allow", None);
        assert_eq!(entry, json!({}), "a copy of the glob entry, allowing: {entry}");
    }

    #[test]
    fn always_on_a_changed_tool_starts_from_an_empty_entry() {
        let (_dir, store) = store_with(r#"{"version":"1","tools":{"probe":{"action":"require_approval"}}}"#);
        assert_eq!(
            store.standing_entry("s", Door::Tools, None, "deny", None),
            json!({"action": "deny"})
        );
    }

    const HAND: &str = "{\n    \"version\": \"1\",\n    \"default\":   \"require_approval\",\n    \"tools\": {\n        \"a\": {}\n    }\n}\n";

    #[test]
    fn undo_restores_the_files_bytes_and_the_policy() {
        let (dir, store) = store_with(HAND);
        let write = store.write_entry("s", "b", json!({"action": "deny"})).unwrap();
        assert_eq!(write.rule_text, "\"b\": {\n  \"action\": \"deny\"\n}");
        assert_eq!(write.path, dir.path().join("s.json").display().to_string());
        let denied = |store: &PolicyStore| match store.get("s") {
            Some(InForce::Policy(p)) => p.evaluate("b", &json!({})).action == portcullis_policy::Action::Deny,
            other => panic!("{other:?}"),
        };
        assert!(denied(&store), "the written rule is in force");
        store.undo(&write.write_id, Instant::now()).expect("undo");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.json")).unwrap(),
            HAND,
            "byte for byte"
        );
        assert!(!denied(&store), "the policy in force is the earlier one again");
        assert!(
            matches!(store.undo(&write.write_id, Instant::now()), Err(UndoError::Unknown(_))),
            "an undo is done once"
        );
    }

    #[test]
    fn undo_of_a_write_that_created_the_file_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let (events, _) = broadcast::channel(4);
        let store = PolicyStore::load(dir.path(), ["s".to_owned()], events);
        let write = store.write_entry("s", "b", json!({})).unwrap();
        assert!(dir.path().join("s.json").exists());
        store.undo(&write.write_id, Instant::now()).expect("undo");
        assert!(!dir.path().join("s.json").exists(), "no file, as before");
    }

    #[test]
    fn undo_after_an_external_edit_is_refused_and_keeps_the_edit() {
        let (dir, store) = store_with(HAND);
        let write = store.write_entry("s", "b", json!({})).unwrap();
        let edited = std::fs::read_to_string(dir.path().join("s.json"))
            .unwrap()
            .replace("\"a\"", "\"c\"");
        std::fs::write(dir.path().join("s.json"), &edited).unwrap();
        let err = store.undo(&write.write_id, Instant::now()).expect_err("changed since");
        assert!(matches!(err, UndoError::Changed { .. }), "{err}");
        assert!(err.to_string().contains("changed since"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.json")).unwrap(),
            edited,
            "the person's edit stays"
        );
    }

    #[test]
    fn undo_after_its_window_is_refused() {
        let (dir, store) = store_with(HAND);
        let write = store.write_entry("s", "b", json!({})).unwrap();
        let written = std::fs::read(dir.path().join("s.json")).unwrap();
        let later = Instant::now() + UNDO_WINDOW + std::time::Duration::from_secs(1);
        let err = store.undo(&write.write_id, later).expect_err("expired");
        assert!(matches!(err, UndoError::Expired(_)), "{err}");
        assert_eq!(
            std::fs::read(dir.path().join("s.json")).unwrap(),
            written,
            "nothing undone"
        );
    }

    /// Two "always" decisions at the same moment: before the lock, a read-modify-write could
    /// lose one of them.
    #[test]
    fn concurrent_always_writes_all_land() {
        let (dir, store) = store_with(HAND);
        let store = Arc::new(store);
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || store.write_entry("s", &format!("tool_{i}"), json!({})).unwrap())
            })
            .collect();
        let ids: std::collections::HashSet<_> = threads.into_iter().map(|t| t.join().unwrap().write_id).collect();
        assert_eq!(ids.len(), 16, "every write has its own id");
        let text = std::fs::read_to_string(dir.path().join("s.json")).unwrap();
        let policy = Policy::from_json_str(&text, "s.json").expect("the file stays valid");
        for i in 0..16 {
            assert_eq!(
                policy.evaluate(&format!("tool_{i}"), &json!({})).action,
                portcullis_policy::Action::Allow,
                "tool_{i}'s entry survived:\n{text}"
            );
        }
        assert!(
            text.starts_with("{\n    \"version\": \"1\",\n    \"default\":   \"require_approval\",\n"),
            "{text}"
        );
    }

    fn decides(store: &PolicyStore, door: Door, name: &str) -> portcullis_policy::Action {
        let Some(InForce::Policy(policy)) = store.get("s") else {
            panic!("the policy loads")
        };
        let facts = portcullis_policy::RequestFacts::new(portcullis_policy::CallFacts::arguments(&Value::Null));
        if door == Door::Resources {
            let uri = portcullis_policy::normalize_uri(name).unwrap();
            return policy
                .evaluate_resource(&uri, portcullis_policy::CallFacts::arguments(&Value::Null))
                .action;
        }
        policy.evaluate_request(door, name, &facts).action
    }

    /// "Always allow" on a held resource read writes `resources[uri]`, not `tools[uri]`: the
    /// entry is read from and written to the section of the request that asked.
    #[test]
    fn always_allow_of_a_resource_read_writes_the_resources_section() {
        let (dir, store) = store_with(
            r#"{"version":"1","tools":{"file:///x":{"action":"deny"}},
                "resources":{"file:///*":{"action":"require_approval","rate_limit":{"max":3,"window":60}}}}"#,
        );
        let asked = RuleRef::entry(Door::Resources, "file:///*".into());
        let entry = store.standing_entry("s", Door::Resources, Some(&asked), "allow", None);
        assert_eq!(
            entry,
            json!({"rate_limit": {"max": 3, "window": 60}}),
            "the glob entry that asked, allowing"
        );
        let write = store
            .write_entry_at("s", Door::Resources, "FILE:///a/../x", entry)
            .expect("writes");
        assert_eq!(write.key, "file:///x", "the URI in normal form");
        let text = std::fs::read_to_string(dir.path().join("s.json")).unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            file["tools"]["file:///x"],
            json!({"action": "deny"}),
            "the tool entry is untouched"
        );
        assert_eq!(
            decides(&store, Door::Resources, "file:///x"),
            portcullis_policy::Action::Allow
        );
        assert_eq!(
            decides(&store, Door::Resources, "file:///y"),
            portcullis_policy::Action::RequireApproval
        );
    }

    #[test]
    fn deny_always_of_a_prompt_and_of_sampling_write_their_sections() {
        let (dir, store) = store_with(HAND);
        let entry = store.standing_entry("s", Door::Prompts, Some(&RuleRef::Default), "deny", Some("no"));
        store
            .write_entry_at("s", Door::Prompts, "review", entry)
            .expect("writes");
        let asked = RuleRef::entry(Door::Sampling, "sampling".into());
        let entry = store.standing_entry("s", Door::Sampling, Some(&asked), "deny", Some("costly"));
        let write = store
            .write_entry_at("s", Door::Sampling, "sampling", entry)
            .expect("writes");
        assert_eq!(write.key, "sampling");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
        assert_eq!(file["prompts"]["review"], json!({"action": "deny", "reason": "no"}));
        assert_eq!(
            file["server_requests"]["sampling"],
            json!({"action": "deny", "reason": "costly"})
        );
        assert_eq!(
            decides(&store, Door::Prompts, "review"),
            portcullis_policy::Action::Deny
        );
        assert_eq!(
            decides(&store, Door::Sampling, "sampling"),
            portcullis_policy::Action::Deny
        );
        assert_eq!(
            decides(&store, Door::Tools, "review"),
            portcullis_policy::Action::RequireApproval,
            "a prompt's entry is not a tool's"
        );
    }

    #[test]
    fn always_from_a_server_request_rule_changes_that_rule() {
        let (_dir, store) = store_with(
            r#"{"version":"1","server_requests":{"elicitation":{"action":"deny",
                "rules":[{"when":{"mode":{"eq":"url"}},"action":"require_approval"}]}}}"#,
        );
        let asked = RuleRef::rule(Door::Elicitation, "elicitation".into(), 0);
        let entry = store.standing_entry("s", Door::Elicitation, Some(&asked), "allow", None);
        assert_eq!(
            entry,
            json!({"rules": [{"when": {"mode": {"eq": "url"}}, "action": "allow"}]}),
            "{entry}"
        );
        let tools_ref = RuleRef::Entry {
            key: "elicitation".into(),
        };
        assert_eq!(
            store.standing_entry("s", Door::Elicitation, Some(&tools_ref), "deny", None),
            json!({"action": "deny"}),
            "a reference into another section is not read"
        );
    }

    #[test]
    fn a_rule_for_a_resource_is_written_and_named_in_its_section() {
        let (_dir, store) = store_with(HAND);
        let rule = NewRule {
            allow: false,
            when: json!({"uri": {"path_under": "/etc"}}),
            reason: None,
        };
        let preview = store
            .preview_rule("s", Door::Resources, "file:///etc/passwd", &rule)
            .expect("previews");
        let (write, name) = store
            .write_rule("s", Door::Resources, "file:///etc/passwd", &rule)
            .expect("writes");
        assert_eq!(name, preview.name);
        assert_eq!(name.to_string(), "resources.file:///etc/passwd.rules[0]");
        assert_eq!(write.key, "file:///etc/passwd");
        assert_eq!(
            decides(&store, Door::Resources, "file:///etc/passwd"),
            portcullis_policy::Action::Deny
        );
        let text = store
            .preview_entry("s", Door::Prompts, "p", json!({}))
            .expect("a dry run");
        assert!(text.contains("\"prompts\""), "{text}");
    }

    #[test]
    fn a_file_that_cannot_be_edited_safely_is_left_untouched() {
        let broken = "{\n  \"version\": \"1\",\n  \"tools\": {\"a\": {}, \"a\": {}}\n}\n";
        let (dir, store) = store_with(broken);
        let err = store
            .write_entry("s", "b", json!({}))
            .expect_err("a repeated key is refused");
        assert!(matches!(err, WriteError::Invalid { .. }), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.json")).unwrap(),
            broken,
            "not a byte changed"
        );
    }
}
