//! The viewer's export: the text is `portcullis_audit::export`'s, the same CSV and JSONL as
//! `portcullis audit --format csv|jsonl`, saved where the person chose.
//!
//! Saving never surprises: the path must be absolute and its folder must exist (a typo does not
//! create directories), an existing file is replaced only when the person confirmed it, and the
//! file is written whole or not at all, readable by its owner only (it holds call arguments).

use std::io;
use std::path::{Path, PathBuf};

use portcullis_atomic_file::{Options, Permissions};
use portcullis_audit::{export, AuditRow};
use serde::{Deserialize, Serialize};

use crate::ipc::IpcError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ExportFormat")]
pub enum Format {
    Csv,
    Jsonl,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }
}

/// What a save wrote, for the confirmation the person reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "SavedExport")]
pub struct Saved {
    pub path: String,
    pub rows: usize,
    pub bytes: usize,
}

/// One header line (CSV) then one line per row; no trailing newline. The audit crate's
/// formatting, shared with the CLI.
pub(crate) fn render(rows: &[AuditRow], format: Format) -> String {
    match format {
        Format::Csv => export::csv(rows),
        Format::Jsonl => export::jsonl(rows),
    }
}

/// Where an export goes unless the person picks another place: the Downloads folder (else the
/// home folder), named by the time, e.g. `portcullis-audit-2026-12-01T16-40-12.csv`.
pub(crate) fn suggested_path(format: Format, now_ms: i64, folder: Option<PathBuf>) -> PathBuf {
    // `:` is not allowed in file names on some file systems people copy exports to.
    let stamp: String = export::iso_time(now_ms)
        .chars()
        .take(19)
        .map(|c| if c == ':' { '-' } else { c })
        .collect();
    let name = format!("portcullis-audit-{stamp}.{}", format.extension());
    folder.unwrap_or_else(|| PathBuf::from("/tmp")).join(name)
}

/// The person's Downloads folder when it exists, else their home.
pub(crate) fn default_folder() -> Option<PathBuf> {
    dirs::download_dir().filter(|d| d.is_dir()).or_else(dirs::home_dir)
}

/// Writes `text` to `path` as the person asked (see the module doc for the rules).
pub(crate) fn save(path: &str, text: &str, rows: usize, replace: bool) -> Result<Saved, IpcError> {
    let target = Path::new(path.trim());
    if !target.is_absolute() {
        return Err(IpcError::new(
            "export_path_not_absolute",
            format!(
                "{path:?} is not a full path: start it with / (for example {})",
                suggested_hint()
            ),
        ));
    }
    let folder = target.parent().filter(|p| p.is_dir());
    if folder.is_none() || target.file_name().is_none() {
        return Err(IpcError::new(
            "export_no_folder",
            format!(
                "the folder of {} does not exist: pick an existing folder",
                target.display()
            ),
        ));
    }
    if target.is_dir() {
        return Err(IpcError::new(
            "export_is_folder",
            format!("{} is a folder: add a file name", target.display()),
        ));
    }
    let mut options = Options::new(Permissions::KeepOrPrivate);
    if !replace {
        options = options.no_clobber();
    }
    portcullis_atomic_file::write(target, text.as_bytes(), options).map_err(|e| write_error(target, &e))?;
    Ok(Saved {
        path: target.display().to_string(),
        rows,
        bytes: text.len(),
    })
}

fn write_error(target: &Path, e: &io::Error) -> IpcError {
    if e.kind() == io::ErrorKind::AlreadyExists {
        return IpcError::new(
            "export_exists",
            format!(
                "{} already exists: replace it, or choose another name",
                target.display()
            ),
        );
    }
    IpcError::new("export_write_failed", format!("cannot write {}: {e}", target.display()))
}

fn suggested_hint() -> String {
    default_folder()
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggested_name_carries_the_time_without_colons() {
        let path = suggested_path(Format::Jsonl, 1_764_607_212_345, Some("/home/ada/Downloads".into()));
        assert_eq!(
            path,
            Path::new("/home/ada/Downloads/portcullis-audit-2025-12-01T16-40-12.jsonl")
        );
    }

    #[test]
    fn a_save_replaces_only_when_asked_and_keeps_the_file_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        let p = path.to_str().unwrap();
        let saved = save(p, "id,time_ms\n1,2", 1, false).unwrap();
        assert_eq!((saved.rows, saved.bytes), (1, 14));
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let again = save(p, "other", 0, false).unwrap_err();
        assert_eq!(again.code, "export_exists", "{again}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "id,time_ms\n1,2",
            "nothing lost"
        );
        save(p, "other", 0, true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "other");
    }

    #[test]
    fn bad_places_are_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let relative = save("audit.csv", "x", 0, false).unwrap_err();
        assert_eq!(relative.code, "export_path_not_absolute");
        let missing = dir.path().join("no/such/folder/a.csv");
        assert_eq!(
            save(missing.to_str().unwrap(), "x", 0, false).unwrap_err().code,
            "export_no_folder"
        );
        assert!(!dir.path().join("no").exists(), "no folder was created");
        assert_eq!(
            save(dir.path().to_str().unwrap(), "x", 0, false).unwrap_err().code,
            "export_is_folder"
        );
    }
}
