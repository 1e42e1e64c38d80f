//! What this tool needs to know of an ELF file: whether a file is one, and a library's soname
//! (the name the loader looks it up by, so the name it is deployed under: the GTK plugin passes
//! `libgio-2.0.so`, `libgio-2.0.so.0` and `libgio-2.0.so.0.7400.6`, all one library).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use elf::endian::AnyEndian;
use elf::ElfBytes;

/// Whether `path` is a regular file that starts with the ELF magic.
pub fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"\x7fELF")
}

/// The DT_SONAME of the library at `path`, if it has one.
pub fn soname(path: &Path) -> Result<Option<String>> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = ElfBytes::<AnyEndian>::minimal_parse(&data)
        .with_context(|| format!("{} is not an ELF file", path.display()))?;
    let bad = || format!("cannot read the dynamic section of {}", path.display());
    let Some(dynamic) = file.dynamic().with_context(bad)? else {
        return Ok(None);
    };
    let Some(entry) = dynamic.iter().find(|d| d.d_tag == elf::abi::DT_SONAME) else {
        return Ok(None);
    };
    let strtab_header = file
        .section_header_by_name(".dynstr")
        .with_context(bad)?
        .with_context(|| format!("{} has a soname but no .dynstr", path.display()))?;
    let strtab = file.section_data_as_strtab(&strtab_header).with_context(bad)?;
    let offset = usize::try_from(entry.d_val()).with_context(bad)?;
    Ok(Some(strtab.get(offset).with_context(bad)?.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's libc, found through /bin/sh's own needs.
    fn host_libc() -> std::path::PathBuf {
        crate::ldd::needed(Path::new("/bin/sh"))
            .unwrap()
            .into_iter()
            .find(|n| n.name == "libc.so.6")
            .unwrap()
            .path
    }

    #[test]
    fn a_host_library_has_its_soname_and_a_program_none() {
        let libc = std::fs::canonicalize(host_libc()).unwrap();
        assert!(is_elf(&libc));
        assert_eq!(soname(&libc).unwrap().as_deref(), Some("libc.so.6"));
        assert_eq!(soname(Path::new("/bin/sh")).unwrap(), None);
    }

    #[test]
    fn other_files_are_not_elf() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert!(!is_elf(&script) && !is_elf(dir.path()) && !is_elf(&dir.path().join("missing")));
        assert!(soname(&script).unwrap_err().to_string().contains("not an ELF file"));
    }
}
