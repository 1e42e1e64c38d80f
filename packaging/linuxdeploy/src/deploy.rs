//! Deploying shared libraries into the AppDir's `usr/lib`, each under its soname (the name the
//! loader looks for on `LD_LIBRARY_PATH`), except those that come from the host ([`crate::exclude`]).
//! A library already in `usr/lib` is never replaced: the first copy wins, so a later pass does
//! not undo what a plugin did to it (the GTK plugin rewrites paths inside libwebkit2gtk).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::{elf_file, exclude, ldd, log};

pub struct Deployer {
    appdir: PathBuf,
    lib_dir: PathBuf,
}

impl Deployer {
    /// A deployer into `appdir` (an existing directory); makes its `usr/lib`.
    pub fn new(appdir: &Path) -> Result<Deployer> {
        let lib_dir = appdir.join("usr/lib");
        fs::create_dir_all(&lib_dir).with_context(|| format!("cannot make {}", lib_dir.display()))?;
        Ok(Deployer {
            appdir: appdir.to_path_buf(),
            lib_dir,
        })
    }

    /// Deploys the library `file` and every library it needs.
    pub fn library(&self, file: &Path) -> Result<()> {
        let name = match elf_file::soname(file)? {
            Some(name) => name,
            None => file_name(file)?,
        };
        self.place(&name, file)?;
        self.needs_of(file)
    }

    /// Deploys every library that an ELF file in the AppDir needs; returns how many files it read.
    pub fn needs_of_appdir(&self) -> Result<usize> {
        let files = elf_files(&self.appdir)?;
        for file in &files {
            self.needs_of(file)?;
        }
        Ok(files.len())
    }

    fn needs_of(&self, file: &Path) -> Result<()> {
        for needed in ldd::needed(file)? {
            self.place(&needed.name, &needed.path)
                .with_context(|| format!("needed by {}", file.display()))?;
        }
        Ok(())
    }

    /// Copies `source` to `usr/lib/NAME` unless the library comes from the host or is there.
    fn place(&self, name: &str, source: &Path) -> Result<()> {
        if exclude::from_host(name) {
            log::debug(format_args!("{name}: from the host, not deployed"));
            return Ok(());
        }
        let target = self.lib_dir.join(name);
        if target.symlink_metadata().is_ok() {
            return Ok(());
        }
        log::info(format_args!("deploying {name} from {}", source.display()));
        // Copied under a temporary name and renamed, so an interrupted run leaves no half file
        // that a later run would take for deployed.
        let partial = self.lib_dir.join(format!(".{name}.partial"));
        fs::copy(source, &partial)
            .and_then(|_| fs::rename(&partial, &target))
            .with_context(|| format!("cannot copy {} to {}", source.display(), target.display()))?;
        Ok(())
    }
}

fn file_name(path: &Path) -> Result<String> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .with_context(|| format!("{} has no file name", path.display()))
}

/// The ELF files under `dir` (regular files only: a symlink names a file counted elsewhere or
/// outside the AppDir), in a stable order.
fn elf_files(dir: &Path) -> Result<BTreeSet<PathBuf>> {
    let mut found = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() && elf_file::is_elf(&entry.path()) {
                found.insert(entry.path());
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_programs_libraries_are_deployed_except_the_hosts() {
        let appdir = tempfile::tempdir().unwrap();
        let bin = appdir.path().join("usr/bin");
        fs::create_dir_all(&bin).unwrap();
        // A program of the host with libraries beyond glibc: ls needs libselinux (and it
        // libpcre2), which the host has and a bare system may not.
        fs::copy("/bin/ls", bin.join("ls")).unwrap();
        symlink("/bin/ls", bin.join("link-outside")).unwrap();
        fs::write(bin.join("script"), "#!/bin/sh\n").unwrap();
        let deployer = Deployer::new(appdir.path()).unwrap();
        assert_eq!(deployer.needs_of_appdir().unwrap(), 1, "one ELF file: ls");
        let lib = appdir.path().join("usr/lib");
        let mut deployed: Vec<String> = fs::read_dir(&lib)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        deployed.sort();
        let expected: Vec<String> = ldd::needed(Path::new("/bin/ls"))
            .unwrap()
            .into_iter()
            .map(|n| n.name)
            .filter(|n| !exclude::from_host(n))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert!(!expected.is_empty(), "ls needs a library beyond glibc here");
        assert_eq!(deployed, expected);
        assert!(!lib.join("libc.so.6").exists());
    }

    #[test]
    fn a_library_goes_in_under_its_soname_and_a_deployed_one_is_kept() {
        let appdir = tempfile::tempdir().unwrap();
        let deployer = Deployer::new(appdir.path()).unwrap();
        let needed = ldd::needed(Path::new("/bin/ls")).unwrap();
        // Preferably one whose file has a longer name than its soname (libpcre2-8.so.0 is
        // libpcre2-8.so.0.11.2 on Debian): given by its file, it goes in by its soname.
        let carried = |n: &&ldd::Needed| !exclude::from_host(&n.name);
        let versioned = |n: &&ldd::Needed| fs::canonicalize(&n.path).unwrap().file_name().unwrap() != n.name.as_str();
        let carried = needed
            .iter()
            .filter(carried)
            .find(versioned)
            .or_else(|| needed.iter().find(carried))
            .unwrap();
        let real = fs::canonicalize(&carried.path).unwrap();
        let target = appdir.path().join("usr/lib").join(&carried.name);
        fs::write(&target, "patched by a plugin").unwrap();
        deployer.library(&real).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "patched by a plugin");
        fs::remove_file(&target).unwrap();
        deployer.library(&real).unwrap();
        assert_eq!(fs::read(&target).unwrap(), fs::read(&real).unwrap());
        let real_name = real.file_name().unwrap();
        assert!(
            real_name == target.file_name().unwrap() || !appdir.path().join("usr/lib").join(real_name).exists(),
            "deployed once, under the soname"
        );
    }
}
