//! A client's JSON file: read with its exact bytes, written back in its own indentation,
//! atomically, with its permissions.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::ser::PrettyFormatter;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ClientError;

/// A parsed JSON file and the bytes it came from.
#[derive(Debug, Clone)]
pub struct JsonFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Parsed with key order kept (serde_json `preserve_order`).
    pub doc: Value,
}

impl JsonFile {
    /// `Ok(None)` when there is no file. A file that is not plain JSON — VS Code files may
    /// hold comments and trailing commas (JSONC) — is refused rather than rewritten without them.
    pub fn read(path: &Path) -> Result<Option<Self>, ClientError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ClientError::new(format!("cannot read {}: {e}", path.display()))),
        };
        let doc = parse(path, &bytes)?;
        Ok(Some(Self {
            path: path.to_owned(),
            bytes,
            doc,
        }))
    }

    /// `doc` as text in this file's indentation, with a final newline if the file had one.
    pub fn render(&self, doc: &Value) -> Result<Vec<u8>, ClientError> {
        render(doc, &indent_of(&self.bytes), self.bytes.ends_with(b"\n"))
    }
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Value, ClientError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let text = String::from_utf8_lossy(bytes);
        // Comment starts outside strings are what JSONC adds (a URL's `//` is inside a string).
        let comment = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("//") || l.starts_with("/*") || l.contains(", //") || l.contains(" /*")
        });
        let jsonc = comment || e.to_string().contains("trailing comma");
        if jsonc {
            ClientError::new(format!(
                "{} is not plain JSON ({e}); it looks like JSON with comments or trailing commas, which \
                 Portcullis will not rewrite (the comments would be lost): remove them, or route the servers by hand",
                path.display()
            ))
        } else {
            ClientError::new(format!("{} is not valid JSON: {e}", path.display()))
        }
    })
}

/// The indentation of the first indented line (two spaces if none).
fn indent_of(bytes: &[u8]) -> Vec<u8> {
    bytes
        .split(|b| *b == b'\n')
        .skip(1)
        .map(|line| {
            line.iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .copied()
                .collect::<Vec<u8>>()
        })
        .find(|indent| !indent.is_empty())
        .unwrap_or_else(|| b"  ".to_vec())
}

pub(crate) fn render(doc: &Value, indent: &[u8], final_newline: bool) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(indent));
    doc.serialize(&mut serializer)
        .map_err(|e| ClientError::new(format!("cannot write JSON: {e}")))?;
    if final_newline {
        out.push(b'\n');
    }
    Ok(out)
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Replaces `path` with `bytes` through a temporary file beside it, keeping the old file's
/// permissions (a new file gets 0600: these files hold tokens). A symlink (dotfile managers
/// link these files) stays a symlink: its target is what gets replaced.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ClientError> {
    use portcullis_atomic_file::{Options, Permissions};
    let options = Options::new(Permissions::KeepOrPrivate).follow_symlink();
    portcullis_atomic_file::write(path, bytes, options)
        .map_err(|e| ClientError::new(format!("cannot write {}: {e}", path.display())))
}

/// Copies `path` to `<path>.portcullis-backup-<stamp>` (`-2`, `-3`, … when taken), never over
/// an existing file.
pub(crate) fn back_up(path: &Path, bytes: &[u8], stamp: &str) -> Result<PathBuf, ClientError> {
    for n in 1..100 {
        let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(format!(".portcullis-backup-{stamp}"));
        if n > 1 {
            name.push(format!("-{n}"));
        }
        let backup = path.with_file_name(name);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let fail = |e: std::io::Error| ClientError::new(format!("cannot back up to {}: {e}", backup.display()));
        match options.open(&backup) {
            Ok(mut file) => {
                file.write_all(bytes).and_then(|()| file.sync_all()).map_err(fail)?;
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(e)),
        }
    }
    Err(ClientError::new(format!(
        "cannot find a free backup name beside {}",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rendering_keeps_the_files_indentation_and_final_newline() {
        let four = b"{\n    \"a\": 1\n}\n";
        let file = JsonFile {
            path: "x".into(),
            bytes: four.to_vec(),
            doc: json!({"a": 1}),
        };
        assert_eq!(file.render(&file.doc).expect("renders"), four);
        let tabs = b"{\n\t\"a\": 1\n}";
        assert_eq!(
            render(&json!({"a": 1}), &indent_of(tabs), false).expect("renders"),
            tabs
        );
    }

    #[cfg(unix)]
    #[test]
    fn writing_through_a_symlink_keeps_the_link() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("dotfiles-mcp.json");
        let link = dir.path().join("mcp.json");
        std::fs::write(&target, b"{}").expect("write");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        write_atomic(&link, b"{\"a\": 1}").expect("written");
        assert!(std::fs::symlink_metadata(&link).expect("meta").file_type().is_symlink());
        assert_eq!(std::fs::read(&target).expect("read"), b"{\"a\": 1}");
    }

    #[test]
    fn jsonc_is_refused_with_a_reason() {
        let err = parse(Path::new("settings.json"), b"{\n  // a comment\n  \"a\": 1,\n}\n").expect_err("refused");
        assert!(err.0.contains("comments"), "{err}");
        let err = parse(Path::new("mcp.json"), b"{\"url\": \"https://x\" \"y\"}").expect_err("refused");
        assert!(err.0.contains("not valid JSON"), "a URL is not a comment: {err}");
    }
}
