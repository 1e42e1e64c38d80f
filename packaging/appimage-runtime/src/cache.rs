//! The per-user cache the image is extracted into once:
//! `$XDG_CACHE_HOME/portcullis-appimage/<key>` (or `~/.cache/…`), where the key is a digest of
//! the image file's size and modification time and of its squashfs superblock (which holds the
//! image's size and build time). A new or rebuilt AppImage gets a new key; starting the same one
//! again finds its directory and skips the extraction. The cache directory is the user's own,
//! mode 0700: a directory that other users can write to could swap the program being run.

use std::fs::{self, DirBuilder, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// The squashfs superblock's size in bytes.
const SUPERBLOCK_LEN: usize = 96;
/// A `.partial-*` directory older than this was left by a start that died mid-extraction.
const STALE_PARTIAL: Duration = Duration::from_secs(3600);

/// The cache directory for AppImages: `$XDG_CACHE_HOME` (when absolute) or `$HOME/.cache`,
/// then `portcullis-appimage`, made 0700 if missing and checked to be private if present.
pub(crate) fn cache_root() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .context("neither XDG_CACHE_HOME nor HOME is set")?;
            Path::new(&home).join(".cache")
        }
    };
    fs::create_dir_all(&base).with_context(|| format!("cannot make {}", base.display()))?;
    let root = base.join("portcullis-appimage");
    if let Err(e) = DirBuilder::new().mode(0o700).create(&root) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e).with_context(|| format!("cannot make {}", root.display()));
        }
    }
    check_private(&root)?;
    Ok(root)
}

/// Refuses a cache directory that is a symlink, not the user's, or open to others.
fn check_private(dir: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if !meta.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    if meta.uid() != nix::unistd::getuid().as_raw() {
        bail!(
            "{} belongs to another user (uid {}); remove it",
            dir.display(),
            meta.uid()
        );
    }
    if mode & 0o077 != 0 {
        bail!("{} is open to other users (mode {mode:o}); chmod 700 it", dir.display());
    }
    Ok(())
}

/// The cache key of the image whose squashfs starts at `offset` in `file`.
pub(crate) fn key(file: &mut File, offset: u64) -> Result<String> {
    let meta = file.metadata()?;
    let mut superblock = [0u8; SUPERBLOCK_LEN];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut superblock)
        .context("the squashfs image is cut short")?;
    let mut digest = Sha256::new();
    digest.update(meta.len().to_le_bytes());
    digest.update(meta.mtime().to_le_bytes());
    digest.update(meta.mtime_nsec().to_le_bytes());
    digest.update(offset.to_le_bytes());
    digest.update(superblock);
    Ok(hex::encode(&digest.finalize()[..16]))
}

/// Removes `.partial-*` directories in `root` that starts which died mid-extraction left
/// behind. Best effort: one that cannot be removed now is tried again next time.
pub(crate) fn remove_stale_partials(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > STALE_PARTIAL);
        if old && entry.file_name().to_string_lossy().starts_with(".partial-") {
            crate::extract::remove_all(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `bytes` as the image, with the mtime `mtime` seconds after the epoch, and its key.
    fn key_of(path: &Path, bytes: &[u8], mtime: u64) -> Result<String> {
        fs::write(path, bytes).unwrap();
        let file = File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(mtime))
            .unwrap();
        key(&mut File::open(path).unwrap(), 50)
    }

    #[test]
    fn the_key_follows_the_image_and_its_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.AppImage");
        let bytes = [7u8; 200];
        let first = key_of(&path, &bytes, 1_000).unwrap();
        assert_eq!(first.len(), 32);
        assert_eq!(
            key_of(&path, &bytes, 1_000).unwrap(),
            first,
            "the same file, the same key"
        );
        assert_ne!(
            key_of(&path, &bytes, 2_000).unwrap(),
            first,
            "another mtime, another key"
        );
        let mut rebuilt = bytes;
        rebuilt[60] = 8;
        assert_ne!(
            key_of(&path, &rebuilt, 1_000).unwrap(),
            first,
            "another superblock, another key"
        );
        let err = key_of(&path, &bytes[..100], 1_000).unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
    }

    #[test]
    fn the_cache_is_private_and_refused_when_shared() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("portcullis-appimage");
        DirBuilder::new().mode(0o700).create(&dir).unwrap();
        check_private(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let err = check_private(&dir).unwrap_err().to_string();
        assert!(err.contains("open to other users (mode 755)"), "{err}");
        let link = home.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(check_private(&link)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
    }

    #[test]
    fn stale_partial_extractions_are_removed_and_others_kept() {
        let root = tempfile::tempdir().unwrap();
        let stale = root.path().join(".partial-dead");
        fs::create_dir_all(stale.join("ro/inner")).unwrap();
        fs::set_permissions(stale.join("ro"), fs::Permissions::from_mode(0o555)).unwrap();
        File::open(&stale)
            .unwrap()
            .set_modified(SystemTime::now() - 2 * STALE_PARTIAL)
            .unwrap();
        let fresh = root.path().join(".partial-running");
        fs::create_dir(&fresh).unwrap();
        let done = root.path().join("0123abcd");
        fs::create_dir(&done).unwrap();
        File::open(&done)
            .unwrap()
            .set_modified(SystemTime::now() - 2 * STALE_PARTIAL)
            .unwrap();
        remove_stale_partials(root.path());
        assert!(!stale.exists() && fresh.exists() && done.exists());
    }
}
