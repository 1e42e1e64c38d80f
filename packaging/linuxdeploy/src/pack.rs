//! The AppImage file: an AppImage type 2 is an ELF runtime marked "AI\x02" at offset 8 of its
//! ELF header, then a squashfs image of the AppDir. The runtime is packaging/appimage-runtime
//! (it finds the image after its own ELF file, unpacks it once into a per-user cache and runs
//! AppRun); the image is made by mksquashfs with gzip, the one compressor the runtime reads, and
//! owners squashed to root (a user's uid means nothing on another machine). The output appears
//! whole or not at all: it is written under a temporary name and renamed.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// What an AppImage type 2 runtime carries at offset 8 of its ELF header.
pub const MAGIC: &[u8; 3] = b"AI\x02";

/// Packs `appdir` behind the runtime at `runtime` into `output` (mode 0755); returns its size.
pub fn pack(appdir: &Path, runtime: &Path, output: &Path) -> Result<u64> {
    let mut head =
        fs::read(runtime).with_context(|| format!("cannot read the AppImage runtime {}", runtime.display()))?;
    if !head.starts_with(b"\x7fELF") || head.len() < 16 {
        bail!("{} is not an ELF file, so no AppImage runtime", runtime.display());
    }
    head[8..11].copy_from_slice(MAGIC);
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let name = output
        .file_name()
        .with_context(|| format!("OUTPUT {} names no file", output.display()))?
        .to_string_lossy();
    let image = dir.join(format!(".{name}.squashfs.partial"));
    let partial = dir.join(format!(".{name}.partial"));
    let result = squash(appdir, &image).and_then(|()| join(&head, &image, &partial, output));
    let _ = fs::remove_file(&image);
    if result.is_err() {
        let _ = fs::remove_file(&partial);
    }
    result
}

/// mksquashfs `appdir` into `image`.
fn squash(appdir: &Path, image: &Path) -> Result<()> {
    let _ = fs::remove_file(image);
    let status = Command::new("mksquashfs")
        .arg(appdir)
        .arg(image)
        .args(["-comp", "gzip", "-all-root", "-noappend", "-quiet", "-no-progress"])
        .status()
        .context("cannot run mksquashfs (Debian package squashfs-tools)")?;
    if !status.success() {
        bail!("mksquashfs {} failed ({status})", appdir.display());
    }
    Ok(())
}

/// Writes `head` then `image` to `partial`, makes it executable and renames it to `output`.
fn join(head: &[u8], image: &Path, partial: &PathBuf, output: &Path) -> Result<u64> {
    let mut out = fs::File::create(partial).with_context(|| format!("cannot write {}", partial.display()))?;
    out.write_all(head)?;
    std::io::copy(&mut fs::File::open(image)?, &mut out)?;
    out.sync_all()?;
    drop(out);
    fs::set_permissions(partial, fs::Permissions::from_mode(0o755))?;
    fs::rename(partial, output).with_context(|| format!("cannot write {}", output.display()))?;
    Ok(fs::metadata(output)?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_appimage_is_the_marked_runtime_then_a_squashfs() {
        let dir = tempfile::tempdir().unwrap();
        let appdir = dir.path().join("App.AppDir");
        fs::create_dir_all(appdir.join("usr/bin")).unwrap();
        fs::write(appdir.join("AppRun"), "#!/bin/sh\n").unwrap();
        let output = dir.path().join("out/App.AppImage");
        let size = pack(&appdir, Path::new("/bin/true"), &output).unwrap();
        let bytes = fs::read(&output).unwrap();
        let runtime = fs::read("/bin/true").unwrap();
        assert_eq!(size, bytes.len() as u64);
        assert_eq!(&bytes[..8], &runtime[..8]);
        assert_eq!(&bytes[8..11], MAGIC);
        assert_eq!(&bytes[11..runtime.len()], &runtime[11..]);
        assert_eq!(&bytes[runtime.len()..runtime.len() + 4], b"hsqs");
        assert_eq!(fs::metadata(&output).unwrap().permissions().mode() & 0o777, 0o755);
        let left: Vec<_> = fs::read_dir(dir.path().join("out")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary files left: {left:?}");
    }

    #[test]
    fn a_runtime_that_is_no_elf_is_refused_and_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("runtime");
        fs::write(&runtime, "#!/bin/sh\n").unwrap();
        let output = dir.path().join("App.AppImage");
        let err = pack(dir.path(), &runtime, &output).unwrap_err().to_string();
        assert!(err.contains("not an ELF file"), "{err}");
        assert!(!output.exists());
    }
}
