//! Where the squashfs image starts: right after the runtime's own ELF file, whose last part is
//! its section header table (as the linker and `strip` lay it out). The AppImage type 2 format
//! finds its payload the same way, so `--appimage-offset` answers what other tools expect.

use std::io::{Read, Seek, SeekFrom};

use anyhow::{bail, ensure, Context, Result};

/// The squashfs magic, "hsqs", at the start of the image.
const SQUASHFS_MAGIC: &[u8; 4] = b"hsqs";

/// The offset of the payload in `file`: the end of the ELF section header table, checked to
/// hold a squashfs image.
pub(crate) fn payload_offset(file: &mut (impl Read + Seek)) -> Result<u64> {
    let mut header = [0u8; 64];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut header).context("too short for an ELF header")?;
    let offset = section_table_end(&header)?;
    let mut magic = [0u8; 4];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut magic)
        .with_context(|| format!("no squashfs image after the runtime (the file ends before offset {offset})"))?;
    ensure!(
        &magic == SQUASHFS_MAGIC,
        "no squashfs image after the runtime (offset {offset} holds {magic:02x?}, not \"hsqs\")"
    );
    Ok(offset)
}

/// e_shoff + e_shentsize × e_shnum of a 64-bit little-endian ELF header.
pub(crate) fn section_table_end(header: &[u8; 64]) -> Result<u64> {
    ensure!(header[..4] == *b"\x7fELF", "not an ELF file");
    // EI_CLASS 2 = 64-bit, EI_DATA 1 = little-endian: the only runtime this crate builds.
    if header[4] != 2 || header[5] != 1 {
        bail!(
            "not a 64-bit little-endian ELF file (class {}, data {})",
            header[4],
            header[5]
        );
    }
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([header[at], header[at + 1]]));
    let shoff = u64::from_le_bytes(header[0x28..0x30].try_into().expect("8 bytes"));
    let (shentsize, shnum) = (u16_at(0x3a), u16_at(0x3c));
    ensure!(
        shoff != 0 && shnum != 0,
        "the runtime has no section header table to find its end by"
    );
    Ok(shoff + shentsize * shnum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A 64-bit little-endian ELF header whose section table sits at `shoff`, `shnum` entries.
    fn header(shoff: u64, shnum: u16) -> [u8; 64] {
        let mut h = [0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        h[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        h[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        h
    }

    #[test]
    fn the_payload_starts_where_the_section_table_ends() {
        let mut file = header(100, 3).to_vec();
        file.resize(100 + 3 * 64, 0);
        file.extend_from_slice(b"hsqs and the rest of the image");
        assert_eq!(payload_offset(&mut Cursor::new(file)).unwrap(), 292);
    }

    #[test]
    fn no_squashfs_after_the_runtime_is_a_clear_error() {
        let mut file = header(64, 1).to_vec();
        file.resize(128, 0);
        let short = payload_offset(&mut Cursor::new(file.clone())).unwrap_err().to_string();
        assert!(short.contains("no squashfs image after the runtime"), "{short}");
        file.extend_from_slice(b"sqsh");
        let wrong = payload_offset(&mut Cursor::new(file)).unwrap_err().to_string();
        assert!(
            wrong.contains("offset 128") && wrong.contains("not \"hsqs\""),
            "{wrong}"
        );
    }

    #[test]
    fn other_files_are_refused() {
        let mut not_elf = header(64, 1);
        not_elf[0] = b'#';
        assert_eq!(section_table_end(&not_elf).unwrap_err().to_string(), "not an ELF file");
        let mut elf32 = header(64, 1);
        elf32[4] = 1;
        assert!(section_table_end(&elf32)
            .unwrap_err()
            .to_string()
            .contains("not a 64-bit"));
        assert!(section_table_end(&header(0, 0))
            .unwrap_err()
            .to_string()
            .contains("no section header table"));
    }

    #[test]
    fn a_real_executable_ends_with_its_section_table() {
        // This test binary is an ELF file laid out by the same linker as the runtime.
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let end = section_table_end(exe[..64].try_into().unwrap()).unwrap();
        assert_eq!(end, exe.len() as u64);
    }
}
