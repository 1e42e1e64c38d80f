//! The per-install key of the argument digests (`digest.key` in the data dir).
//!
//! Audit rows and approval grants carry an HMAC of the call's unredacted arguments
//! ([`ArgumentDigester`]); this file is its key: 32 random bytes, mode 0600, created once and
//! never replaced. Whoever can read it can test guesses against the digests in an audit export, so
//! it lives next to `audit.db`, owner-only, and is not part of any export.
//!
//! A file that is there but not exactly what this module writes (another size, readable by group
//! or others, a symlink, a directory) is refused with an error that says what to do. Using it
//! would weaken the digests; replacing it silently would make every digest recorded so far
//! unmatchable without anyone knowing why.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use portcullis_wire::canonical::{ArgumentDigester, ARGUMENTS_KEY_LEN};
use rand::RngCore;

pub const DIGEST_KEY_FILE: &str = "digest.key";

#[derive(Debug, thiserror::Error)]
pub enum DigestKeyError {
    #[error("cannot read the digest key {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot create the digest key {path}: {source}")]
    Create { path: PathBuf, source: std::io::Error },
    #[error(
        "refusing the digest key {path}: {problem}; it must be a regular file of {ARGUMENTS_KEY_LEN} bytes \
         readable only by its owner (mode 0600). Fix its mode with `chmod 600` if it is the original; \
         otherwise remove it and a new key is made at the next start (argument digests recorded \
         before then will no longer match new ones)"
    )]
    Unfit { path: PathBuf, problem: String },
}

/// Loads the key from `data_dir`, creating it on first use.
pub fn load_or_create(data_dir: &Path) -> Result<ArgumentDigester, DigestKeyError> {
    let path = data_dir.join(DIGEST_KEY_FILE);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => load(&path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(data_dir, &path),
        Err(source) => Err(DigestKeyError::Read { path, source }),
    }
}

fn load(path: &Path) -> Result<ArgumentDigester, DigestKeyError> {
    let unfit = |problem: String| DigestKeyError::Unfit {
        path: path.to_owned(),
        problem,
    };
    let read = |source| DigestKeyError::Read {
        path: path.to_owned(),
        source,
    };
    // symlink_metadata: a link could point the gateway at a file someone else controls.
    let meta = std::fs::symlink_metadata(path).map_err(read)?;
    if !meta.file_type().is_file() {
        return Err(unfit("it is not a regular file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(unfit(format!("its mode is {mode:04o}, so others can read it")));
        }
    }
    if meta.len() != ARGUMENTS_KEY_LEN as u64 {
        return Err(unfit(format!("it is {} bytes long", meta.len())));
    }
    let mut key = [0u8; ARGUMENTS_KEY_LEN];
    let mut file = std::fs::File::open(path).map_err(read)?;
    file.read_exact(&mut key).map_err(read)?;
    // The size was checked above; a file that grew since is not the one that was checked.
    if file.read(&mut [0u8; 1]).map_err(read)? != 0 {
        return Err(unfit("it changed while being read".into()));
    }
    Ok(ArgumentDigester::new(key))
}

/// Writes a fresh key to a private temporary file and links it into place, so the key file
/// appears whole or not at all, and never over an existing one: two processes starting at once
/// both end up with whichever key was linked first.
fn create(dir: &Path, path: &Path) -> Result<ArgumentDigester, DigestKeyError> {
    let err = |source| DigestKeyError::Create {
        path: path.to_owned(),
        source,
    };
    let mut key = [0u8; ARGUMENTS_KEY_LEN];
    rand::rng().fill_bytes(&mut key);
    let tmp = dir.join(format!(
        ".{DIGEST_KEY_FILE}.{}.{:016x}.tmp",
        std::process::id(),
        rand::random::<u64>()
    ));
    let written = write_new(&tmp, &key).and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match written {
        Ok(()) => Ok(ArgumentDigester::new(key)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load(path),
        Err(e) => Err(err(e)),
    }
}

/// Creates `path` exclusively (O_EXCL) with mode 0600 and writes `bytes` durably.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_is_created_once_and_loaded_after() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"pin": "4821"});
        let first = load_or_create(dir.path()).unwrap().digest(&args);
        let bytes = std::fs::read(dir.path().join(DIGEST_KEY_FILE)).unwrap();
        assert_eq!(bytes.len(), ARGUMENTS_KEY_LEN);
        assert_ne!(bytes, [0u8; ARGUMENTS_KEY_LEN]);
        let again = load_or_create(dir.path()).unwrap().digest(&args);
        assert_eq!(first, again, "the same install keeps its key");
        assert_eq!(
            std::fs::read(dir.path().join(DIGEST_KEY_FILE)).unwrap(),
            bytes,
            "not rewritten"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [DIGEST_KEY_FILE], "no temporary file is left behind");
    }

    #[test]
    fn two_installs_digest_the_same_arguments_differently() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let args = json!({"pin": "4821", "to": "savings"});
        assert_ne!(
            load_or_create(a.path()).unwrap().digest(&args),
            load_or_create(b.path()).unwrap().digest(&args)
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        load_or_create(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(DIGEST_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn creation_is_exclusive() {
        // An existing key is never overwritten by a second creation, even one that did not see
        // it (two processes starting together): the second gets the first one's key.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DIGEST_KEY_FILE);
        let first = create(dir.path(), &path).unwrap();
        let on_disk = std::fs::read(&path).unwrap();
        let second = create(dir.path(), &path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), on_disk);
        let args = json!({"x": 1});
        assert_eq!(first.digest(&args), second.digest(&args));
        let err = write_new(&path, &[0; ARGUMENTS_KEY_LEN]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    }

    #[cfg(unix)]
    #[test]
    fn a_key_others_can_read_is_refused_not_used_or_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        load_or_create(dir.path()).unwrap();
        let path = dir.path().join(DIGEST_KEY_FILE);
        let before = std::fs::read(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(matches!(err, DigestKeyError::Unfit { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("0644") && text.contains("chmod 600"), "{text}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "left as it was");
    }

    #[test]
    fn a_key_of_the_wrong_size_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DIGEST_KEY_FILE);
        write_new(&path, b"short").unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("5 bytes long"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"short", "left as it was");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        write_new(&elsewhere, &[7; ARGUMENTS_KEY_LEN]).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join(DIGEST_KEY_FILE)).unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
