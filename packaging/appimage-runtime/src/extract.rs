//! Unpacking the squashfs image into a directory, all or nothing: into a private temporary
//! directory beside the target, renamed into place only when complete. A half-written tree is
//! never seen under the target's name, and when two starts race, the second rename fails, the
//! loser drops its copy and uses the winner's.
//!
//! The image is data from a file anyone could have handed the user, so nothing in it may write
//! outside the target: paths must be plain names below the root, every entry's parent must be a
//! directory this extraction created (never a symlink from the image), files are created new
//! (never through an existing name), and set-id bits are dropped. Device nodes, pipes and
//! sockets have no place in an AppImage and stop the extraction.

use std::collections::HashSet;
use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::io::{self, BufReader, Read, Seek};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use backhand::{FilesystemReader, InnerNode};

/// How `extract_atomically` ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Extracted {
    /// This call unpacked the image and renamed it into place.
    Now,
    /// The target was there already (another start won the race); this call's copy is gone.
    AlreadyThere,
}

/// Unpacks the squashfs image at `offset` in `image` into `target`, which must not exist yet
/// (or must be a complete earlier extraction: then nothing is written).
pub(crate) fn extract_atomically(image: impl Read + Seek + Send, offset: u64, target: &Path) -> Result<Extracted> {
    let parent = target
        .parent()
        .context("the extraction target has no parent directory")?;
    let staging = Staging::new(parent)?;
    extract(image, offset, &staging.0)?;
    match fs::rename(&staging.0, target) {
        Ok(()) => {
            // Renamed away: nothing is left at the temporary name to remove.
            std::mem::forget(staging);
            Ok(Extracted::Now)
        }
        Err(e) if target.is_dir() && lost_the_race(&e) => Ok(Extracted::AlreadyThere),
        Err(e) => Err(e).with_context(|| format!("cannot move the extracted image to {}", target.display())),
    }
}

/// A private `.partial-*` directory (mode 0700, random name) that is removed when dropped, read-only
/// directories from the image included.
struct Staging(PathBuf);

impl Staging {
    fn new(parent: &Path) -> Result<Staging> {
        let dir = tempfile::Builder::new()
            .prefix(".partial-")
            .tempdir_in(parent)
            .with_context(|| format!("cannot make a directory in {}", parent.display()))?;
        Ok(Staging(dir.keep()))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        remove_all(&self.0);
    }
}

/// Removes `dir` and what it holds, first making read-only directories writable again. Best
/// effort: what cannot be removed stays (a stale `.partial-*` is tried again later).
pub(crate) fn remove_all(dir: &Path) {
    fn make_writable(dir: &Path) {
        let _ = fs::set_permissions(dir, Permissions::from_mode(0o700));
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&entry.path());
            }
        }
    }
    make_writable(dir);
    let _ = fs::remove_dir_all(dir);
}

/// rename(2) onto a non-empty directory fails with one of these two.
fn lost_the_race(e: &io::Error) -> bool {
    use nix::errno::Errno;
    e.raw_os_error()
        .is_some_and(|code| code == Errno::ENOTEMPTY as i32 || code == Errno::EEXIST as i32)
}

/// Unpacks every entry of the image at `offset` into the existing, empty directory `root`.
pub(crate) fn extract(image: impl Read + Seek + Send, offset: u64, root: &Path) -> Result<()> {
    let fs = FilesystemReader::from_reader_with_offset(BufReader::new(image), offset)
        .context("cannot read the squashfs image")?;
    // Directories this extraction made: the only places an entry may go. Their modes are set
    // last, so a read-only directory in the image still gets its contents.
    let mut made: HashSet<PathBuf> = HashSet::from([root.to_path_buf()]);
    let mut dir_modes = Vec::new();
    for node in fs.files() {
        let Some(relative) = relative_path(&node.fullpath)? else {
            dir_modes.push((root.to_path_buf(), node.header.permissions));
            continue;
        };
        let path = root.join(&relative);
        let parent = path.parent().expect("below the root");
        if !made.contains(parent) {
            bail!(
                "the image puts {} inside something that is not one of its directories",
                relative.display()
            );
        }
        let mode = u32::from(node.header.permissions) & 0o777;
        match &node.inner {
            InnerNode::Dir(_) => {
                DirBuilder::new()
                    .mode(0o700)
                    .create(&path)
                    .with_context(|| format!("cannot make {}", path.display()))?;
                made.insert(path.clone());
                dir_modes.push((path, node.header.permissions));
            }
            InnerNode::File(file) => {
                let mut out = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                io::copy(&mut fs.file(file).reader(), &mut out)
                    .with_context(|| format!("cannot unpack {}", relative.display()))?;
                out.set_permissions(Permissions::from_mode(mode))?;
            }
            InnerNode::Symlink(link) => std::os::unix::fs::symlink(&link.link, &path)
                .with_context(|| format!("cannot make the symlink {}", path.display()))?,
            _ => bail!(
                "the image holds a device node, pipe or socket at {}; an AppImage has none",
                relative.display()
            ),
        }
    }
    for (dir, permissions) in dir_modes.into_iter().rev() {
        fs::set_permissions(&dir, Permissions::from_mode(u32::from(permissions) & 0o777))?;
    }
    Ok(())
}

/// The image path `/a/b` as `a/b`; `None` for the root itself. Anything but plain names
/// (`..`, `.`, a second root) is refused.
fn relative_path(full: &Path) -> Result<Option<PathBuf>> {
    let mut relative = PathBuf::new();
    for (i, part) in full.components().enumerate() {
        match part {
            Component::RootDir if i == 0 => {}
            Component::Normal(name) => relative.push(name),
            _ => bail!("the image holds an entry with an unsafe path: {}", full.display()),
        }
    }
    Ok((!relative.as_os_str().is_empty()).then_some(relative))
}

#[cfg(test)]
mod tests {
    use super::*;
    use backhand::compression::Compressor;
    use backhand::{FilesystemCompressor, FilesystemWriter, NodeHeader};
    use std::io::Cursor;

    /// A gzip squashfs image holding `usr/bin/app` and whatever `add` puts in.
    fn image(add: impl FnOnce(&mut FilesystemWriter)) -> Vec<u8> {
        let mut fs = FilesystemWriter::default();
        fs.set_compressor(FilesystemCompressor::new(Compressor::Gzip, None).unwrap());
        fs.set_root_mode(0o755);
        let header = NodeHeader::new(0o755, 0, 0, 0);
        fs.push_dir_all("usr/bin", header).unwrap();
        fs.push_file(
            Cursor::new(b"#!/bin/sh\n".to_vec()),
            "usr/bin/app",
            NodeHeader::new(0o4755, 0, 0, 0),
        )
        .unwrap();
        add(&mut fs);
        let mut out = Cursor::new(Vec::new());
        fs.write(&mut out).unwrap();
        out.into_inner()
    }

    #[test]
    fn set_id_bits_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("app");
        let bytes = image(|_| {});
        let read = FilesystemReader::from_reader(Cursor::new(bytes.clone())).unwrap();
        let app = read.files().find(|n| n.fullpath == Path::new("/usr/bin/app")).unwrap();
        assert_eq!(app.header.permissions, 0o4755, "the image holds a setuid file");
        assert_eq!(
            extract_atomically(Cursor::new(bytes), 0, &target).unwrap(),
            Extracted::Now
        );
        let mode = fs::metadata(target.join("usr/bin/app")).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755, "the image said 4755");
    }

    #[test]
    fn an_image_with_a_pipe_or_device_is_refused_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("app");
        let bytes = image(|fs| fs.push_fifo("usr/bin/pipe", NodeHeader::new(0o644, 0, 0, 0)).unwrap());
        let err = extract_atomically(Cursor::new(bytes), 0, &target)
            .unwrap_err()
            .to_string();
        assert!(err.contains("device node, pipe or socket at usr/bin/pipe"), "{err}");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "neither the target nor a partial copy is left"
        );
    }

    #[test]
    fn the_image_is_found_at_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"a runtime of 24 bytes...".to_vec();
        bytes.extend(image(|_| {}));
        extract_atomically(Cursor::new(&bytes), 24, &dir.path().join("app")).unwrap();
        assert_eq!(fs::read(dir.path().join("app/usr/bin/app")).unwrap(), b"#!/bin/sh\n");
        assert!(extract_atomically(Cursor::new(&bytes), 0, &dir.path().join("other")).is_err());
    }

    #[test]
    fn image_paths_become_relative_and_unsafe_ones_are_refused() {
        assert_eq!(relative_path(Path::new("/")).unwrap(), None);
        assert_eq!(
            relative_path(Path::new("/usr/bin/x")).unwrap(),
            Some(PathBuf::from("usr/bin/x"))
        );
        assert_eq!(relative_path(Path::new("usr")).unwrap(), Some(PathBuf::from("usr")));
        for bad in ["/usr/../../etc/passwd", "/..", "/a//../b"] {
            let err = relative_path(Path::new(bad)).unwrap_err().to_string();
            assert!(err.contains("unsafe path"), "{bad}: {err}");
        }
    }
}
