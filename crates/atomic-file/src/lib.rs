//! Replacing a file whole, and read-modify-write under a lock: the one way Portcullis rewrites
//! its files (policy files, `pins.json`, `gateway.json`, `portcullis.json`, the app's settings,
//! MCP clients' config files).
//!
//! - [`write()`] replaces a file through a temporary file in the same directory
//!   ([`tempfile::NamedTempFile`]: random name, created with `O_EXCL`, mode 0600), fsynced, then
//!   renamed over the target ([`tempfile::NamedTempFile::persist`]). A reader sees the old bytes or
//!   the new ones, never a mix; a failed write leaves the old file and no temporary behind.
//! - [`lock`] takes an exclusive advisory lock ([`fs4`]) on a sidecar `.<name>.lock` beside the
//!   file and gives a [`Locked`] that reads and writes the file. Hold it across a
//!   read-modify-write: two writers at the same moment (two "always" decisions, or the gateway and
//!   the app) then run one after the other and neither loses the other's change.
//!
//! Why a sidecar and not the file itself: the rename that makes a write atomic replaces the
//! file's inode, so a lock on the file would be a lock on the old inode that a waiting writer then
//! takes on a file no longer in place. The sidecar is never renamed or removed (removing it would
//! let two writers lock two different inodes); it is empty and hidden. The lock is advisory: it
//! orders Portcullis's own processes and threads, not other programs.
//!
//! This crate depends on nothing of Portcullis, so the gateway, the CLI and the desktop app all
//! use it (it sits below them all in the layering).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use fs4::FileExt;

/// The permissions a written file gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permissions {
    /// Mode 0600, whatever the old file had (files that hold tokens: `gateway.json`, pins).
    Private,
    /// The old file's permissions; a new file gets 0600 (config files that may hold tokens).
    KeepOrPrivate,
    /// The old file's permissions; a new file gets 0644 before the umask (policy files, which
    /// people read and share).
    KeepOrShared,
}

/// How [`write()`] replaces the file.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub permissions: Permissions,
    /// Replace the target of a symlink rather than the link (dotfile managers link config files).
    pub follow_symlink: bool,
    /// Fail with [`io::ErrorKind::AlreadyExists`] instead of replacing an existing file.
    pub no_clobber: bool,
}

impl Options {
    pub const fn new(permissions: Permissions) -> Self {
        Self {
            permissions,
            follow_symlink: false,
            no_clobber: false,
        }
    }

    #[must_use]
    pub const fn follow_symlink(mut self) -> Self {
        self.follow_symlink = true;
        self
    }

    #[must_use]
    pub const fn no_clobber(mut self) -> Self {
        self.no_clobber = true;
        self
    }
}

/// Replaces `path` with `bytes` atomically (see the crate doc). Creates the directory if needed.
/// Takes no lock: use [`lock`] when the new bytes were computed from the old ones.
pub fn write(path: &Path, bytes: &[u8], options: Options) -> io::Result<()> {
    let resolved = options
        .follow_symlink
        .then(|| std::fs::canonicalize(path).ok())
        .flatten();
    let path = resolved.as_deref().unwrap_or(path);
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
    let old = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut file = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    set_permissions(file.as_file(), old, options.permissions)?;
    file.as_file().sync_all()?;
    persist(file, path, options.no_clobber)
}

/// Renames the temporary file over `path`. On Windows a rename over a file that another handle
/// holds open (a reader in this process, a virus scanner, an indexer, an editor) fails with
/// "access denied" for as long as that handle lives, usually milliseconds: the rename is tried
/// again for up to [`RENAME_PATIENCE`] before the error is returned.
fn persist(mut file: tempfile::NamedTempFile, path: &Path, no_clobber: bool) -> io::Result<()> {
    let deadline = std::time::Instant::now() + RENAME_PATIENCE;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let persisted = if no_clobber {
            file.persist_noclobber(path)
        } else {
            file.persist(path)
        };
        match persisted {
            Ok(_) => return Ok(()),
            Err(e)
                if cfg!(windows)
                    && e.error.kind() == io::ErrorKind::PermissionDenied
                    && std::time::Instant::now() < deadline =>
            {
                file = e.file;
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            // On error the temporary file is removed when the returned NamedTempFile drops.
            Err(e) => return Err(e.error),
        }
    }
}

/// How long a rename refused because another handle holds the target open is tried again: long
/// enough for a scanner or an indexer on a loaded machine (2 s was once not, under Wine in CI).
const RENAME_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Takes the exclusive lock of `path` (blocking until the holder lets go), creating the sidecar
/// lock file and the directory if needed.
pub fn lock(path: &Path) -> io::Result<Locked> {
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
    let name = file_name(path);
    let lock_path = dir.join(format!(".{name}.lock"));
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)?;
    // Qualified: std's newer inherent `File::lock` would shadow it (and needs Rust 1.89).
    FileExt::lock(&lock)?;
    Ok(Locked {
        path: path.to_owned(),
        _lock: lock,
    })
}

/// A file whose lock this process holds; the lock is released when this drops.
#[derive(Debug)]
pub struct Locked {
    path: PathBuf,
    // Closing the handle releases the lock.
    _lock: File,
}

impl Locked {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes, `None` if it does not exist.
    pub fn read(&self) -> io::Result<Option<Vec<u8>>> {
        match std::fs::read(&self.path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The file's text, `None` if it does not exist; not UTF-8 is an [`io::ErrorKind::InvalidData`].
    pub fn read_to_string(&self) -> io::Result<Option<String>> {
        self.read()?
            .map(|bytes| String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)))
            .transpose()
    }

    /// Replaces the file with `bytes` (see [`write()`]).
    pub fn write(&self, bytes: &[u8], options: Options) -> io::Result<()> {
        write(&self.path, bytes, options)
    }

    /// Removes the file (a missing one is fine).
    pub fn remove(&self) -> io::Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned())
}

fn temp_prefix(path: &Path) -> String {
    format!(".{}.", file_name(path))
}

#[cfg(unix)]
fn set_permissions(file: &File, old: Option<std::fs::Permissions>, wanted: Permissions) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let permissions = match (wanted, old) {
        (Permissions::Private, _) | (Permissions::KeepOrPrivate, None) => std::fs::Permissions::from_mode(0o600),
        (Permissions::KeepOrShared, None) => std::fs::Permissions::from_mode(0o644 & !umask()),
        (_, Some(old)) => old,
    };
    file.set_permissions(permissions)
}

#[cfg(not(unix))]
fn set_permissions(file: &File, old: Option<std::fs::Permissions>, wanted: Permissions) -> io::Result<()> {
    match (wanted, old) {
        (Permissions::Private, _) | (_, None) => Ok(()),
        (_, Some(old)) => file.set_permissions(old),
    }
}

/// The process's umask, read without changing it for long: a new shared file gets what
/// `File::create` would have given it. Read from /proc where it is there; else the common 022.
#[cfg(unix)]
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests;
