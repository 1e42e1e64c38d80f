//! Portcullis's own linuxdeploy: the tool Tauri's AppImage bundler (`cargo tauri bundle --bundles
//! appimage`) runs to fill the AppDir it made and turn it into an AppImage. The bundler fetches
//! the upstream linuxdeploy from GitHub unless a file of that name is already in its tools
//! directory; scripts/package.sh puts these two binaries there (with `useLocalToolsDir`, that is
//! `target/.tauri/`), so the bundle is made offline, from source we build.
//!
//! It implements the part of linuxdeploy's interface that the bundler and its GTK plugin use, and
//! refuses anything else:
//!
//! - `portcullis-linuxdeploy` ([`args`]): `--appdir DIR`, `--library FILE` (deploy a library and
//!   what it needs), `--plugin NAME` (run `linuxdeploy-plugin-NAME.sh` or `.AppImage` found beside
//!   itself, which may call it back with `LINUXDEPLOY_PLUGIN_MODE=1`), `--output appimage` (run the
//!   output plugin beside itself), `--verbosity N`. It deploys into `usr/lib` every shared library
//!   that an ELF file in the AppDir needs ([`deploy`], resolved by the host's `ldd`, [`ldd`]) except
//!   those that must come from the host ([`exclude`]), and gives the AppDir's top the desktop entry
//!   and icon the AppImage format asks for ([`root`]).
//! - `portcullis-linuxdeploy-plugin-appimage` ([`pack`]): the output plugin; packs the AppDir as a
//!   squashfs (mksquashfs, gzip) behind packaging/appimage-runtime, marked as AppImage type 2.
//!
//! Libraries are found and copied, never patched: the AppDir's `AppRun` (packaging/appimage/AppRun)
//! puts `usr/lib` on `LD_LIBRARY_PATH`, as AppImageKit's AppRun does, where upstream linuxdeploy
//! also rewrites each file's RUNPATH with patchelf.

pub mod args;
pub mod deploy;
pub mod elf_file;
pub mod exclude;
pub mod ldd;
pub mod log;
pub mod pack;
pub mod root;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The file this process runs from, and the directory it is in (where plugins and the runtime
/// are looked for, as upstream linuxdeploy looks beside itself).
pub fn own_location() -> Result<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe().context("cannot find this program's own file")?;
    let dir = exe
        .parent()
        .map(Path::to_path_buf)
        .context("this program's file has no directory")?;
    Ok((exe, dir))
}

/// The first of `names` that exists in `dir` as a file.
pub fn find_beside(dir: &Path, names: &[String]) -> Option<PathBuf> {
    names.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// An AppDir given on the command line: it must exist (the bundler makes it).
pub fn existing_appdir(dir: &Path) -> Result<PathBuf> {
    if !dir.is_dir() {
        bail!("the AppDir {} does not exist or is not a directory", dir.display());
    }
    std::fs::canonicalize(dir).with_context(|| format!("cannot resolve {}", dir.display()))
}
