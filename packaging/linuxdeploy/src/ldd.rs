//! The shared libraries an ELF file needs, as the host's dynamic loader resolves them: `ldd FILE`,
//! which lists the whole closure (the libraries' own needs too) with the file each name resolves
//! to. Run with the loader's environment cleared (`LD_LIBRARY_PATH`, `LD_PRELOAD`), so the answer
//! is the host's system libraries, not whatever the caller's shell points at. ldd runs the file's
//! loader on it; the files here are this build's own and the host's libraries.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// One line of ldd's answer: a needed name and the file it resolved to.
#[derive(Debug, PartialEq, Eq)]
pub struct Needed {
    pub name: String,
    pub path: PathBuf,
}

/// The libraries `file` needs (all of them, transitively); empty for a static file. A name the
/// loader cannot resolve is an error: the AppImage would not start.
pub fn needed(file: &Path) -> Result<Vec<Needed>> {
    let out = Command::new("ldd")
        .arg(file)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .env("LC_ALL", "C")
        .output()
        .context("cannot run ldd (Debian package libc-bin)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // A static executable or a file that is not dynamic at all needs nothing.
        if stdout.contains("not a dynamic executable") || stderr.contains("not a dynamic executable") {
            return Ok(Vec::new());
        }
        bail!("ldd {} failed: {}", file.display(), stderr.trim());
    }
    parse(&stdout).with_context(|| format!("in the libraries {} needs", file.display()))
}

/// Parses ldd's lines: `name => /path (0x…)`; lines without `=>` (the vDSO, the loader itself,
/// `statically linked`) name no file to deploy.
pub fn parse(text: &str) -> Result<Vec<Needed>> {
    let mut needed = Vec::new();
    let mut missing = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some((name, rest)) = line.split_once(" => ") else {
            continue;
        };
        let target = rest.rsplit_once(" (0x").map_or(rest, |(path, _)| path).trim();
        if target == "not found" {
            missing.push(name.to_owned());
        } else if target.starts_with('/') {
            needed.push(Needed {
                name: name.to_owned(),
                path: PathBuf::from(target),
            });
        } else {
            bail!("cannot read ldd's line {line:?}");
        }
    }
    if !missing.is_empty() {
        bail!(
            "the host has no {} (install the package that provides it)",
            missing.join(", ")
        );
    }
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolved_names_are_read_and_the_loader_and_vdso_skipped() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd6d3f2000)\n\
                    \tlibwebkit2gtk-4.1.so.0 => /lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0 (0x00007f0e9c000000)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0e9be1f000)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f0ea2d1c000)\n";
        assert_eq!(
            parse(text).unwrap(),
            vec![
                Needed {
                    name: "libwebkit2gtk-4.1.so.0".into(),
                    path: "/lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0".into()
                },
                Needed {
                    name: "libc.so.6".into(),
                    path: "/lib/x86_64-linux-gnu/libc.so.6".into()
                },
            ]
        );
        assert!(parse("\tstatically linked\n").unwrap().is_empty());
    }

    #[test]
    fn a_library_the_host_lacks_is_an_error_naming_it() {
        let text = "\tlibfoo.so.1 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x1)\n\tlibbar.so.2 => not found\n";
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains("no libfoo.so.1, libbar.so.2"), "{err}");
    }

    #[test]
    fn the_real_ldd_resolves_a_host_program() {
        let sh = needed(Path::new("/bin/sh")).unwrap();
        assert!(sh.iter().any(|n| n.name == "libc.so.6" && n.path.is_file()), "{sh:?}");
        let not_elf = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(not_elf.path(), "#!/bin/sh\n").unwrap();
        assert!(needed(not_elf.path()).unwrap().is_empty());
    }
}
