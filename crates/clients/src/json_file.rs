//! A client's JSON file: read with its exact bytes; edited in place, every byte the edit does
//! not touch kept (comments, trailing commas, spacing, key order); written atomically, with its
//! permissions.
//!
//! Clients' files may be JSONC: VS Code's `mcp.json` takes `//` and `/* */` comments and
//! trailing commas. They are read as JSONC and edited through a concrete syntax tree
//! (`jsonc-parser`), so nothing a person wrote there is lost. `portcullis.json` is read as plain
//! JSON: the gateway reads nothing else.

use std::io::Write;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstObject, CstObjectProp, CstRootNode};
use jsonc_parser::ParseOptions;
use serde::Serialize;
use serde_json::ser::PrettyFormatter;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{lookup_mut, ClientError};

/// What a file may hold besides plain JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// RFC 8259 JSON (`portcullis.json`).
    Json,
    /// JSON with comments and trailing commas, as VS Code reads it; nothing more lenient.
    Jsonc,
}

/// A parsed JSON file and the bytes it came from.
#[derive(Debug, Clone)]
pub struct JsonFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Parsed with key order kept (serde_json `preserve_order`).
    pub doc: Value,
    pub syntax: Syntax,
}

/// One change: the value at a key path (e.g. `["servers", "fetch"]`) becomes `value`.
pub type Edit = (Vec<String>, Value);

impl JsonFile {
    /// `Ok(None)` when there is no file; an error that says where when it is not valid `syntax`.
    pub fn read(path: &Path, syntax: Syntax) -> Result<Option<Self>, ClientError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ClientError::new(format!("cannot read {}: {e}", path.display()))),
        };
        let doc = parse(path, &bytes, syntax)?;
        Ok(Some(Self {
            path: path.to_owned(),
            bytes,
            doc,
            syntax,
        }))
    }

    /// `doc` as text in this file's indentation, with a final newline if the file had one: the
    /// whole file written anew, for plain JSON only (comments would be lost).
    pub fn render(&self, doc: &Value) -> Result<Vec<u8>, ClientError> {
        if self.syntax != Syntax::Json {
            return Err(ClientError::new(format!(
                "{} would lose its comments if rewritten whole",
                self.path.display()
            )));
        }
        render(doc, &indent_of(&self.bytes), self.bytes.ends_with(b"\n"))
    }

    /// The file's bytes with `edits` made in place. Only the keys whose values change are
    /// touched: a changed key's value is replaced, a key the new value lacks is removed (with a
    /// comment on its line), a new key is appended; every other byte stays as it was. The result
    /// is read back and must be the document meant, or nothing is returned (duplicate keys,
    /// say, would make the edit land elsewhere than the reader looks).
    pub fn edited(&self, edits: &[Edit]) -> Result<Vec<u8>, ClientError> {
        let fail = |why: &str| ClientError::new(format!("cannot edit {}: {why}", self.path.display()));
        let text = std::str::from_utf8(&self.bytes).map_err(|_| fail("not UTF-8"))?;
        let root = CstRootNode::parse(text, &options(self.syntax)).map_err(|e| fail(&e.to_string()))?;
        let mut meant = self.doc.clone();
        for (path, value) in edits {
            let (last, parents) = path.split_last().ok_or_else(|| fail("an edit names no key"))?;
            let slot = lookup_mut(&mut meant, path).ok_or_else(|| fail("an edited key is not in the file"))?;
            let prop = find_prop(&root, parents, last).ok_or_else(|| fail("an edited key is not in the file"))?;
            set(&prop, slot, value);
            *slot = value.clone();
        }
        let bytes = root.to_string().into_bytes();
        if parse(&self.path, &bytes, self.syntax)? != meant {
            return Err(fail(
                "the edited text does not read back as the change (duplicate keys?)",
            ));
        }
        Ok(bytes)
    }
}

/// Exactly comments and trailing commas on top of JSON: the parser's other leniencies (single
/// quotes, unquoted keys, hex numbers, …) are VS Code's no more than JSON's.
fn options(syntax: Syntax) -> ParseOptions {
    let jsonc = syntax == Syntax::Jsonc;
    ParseOptions {
        allow_comments: jsonc,
        allow_trailing_commas: jsonc,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn parse(path: &Path, bytes: &[u8], syntax: Syntax) -> Result<Value, ClientError> {
    let invalid = |e: &dyn std::fmt::Display| match syntax {
        Syntax::Json => ClientError::new(format!("{} is not valid JSON: {e}", path.display())),
        Syntax::Jsonc => ClientError::new(format!(
            "{} is not valid JSON (comments and trailing commas are fine): {e}; fix it and run this again",
            path.display()
        )),
    };
    match syntax {
        Syntax::Json => serde_json::from_slice(bytes).map_err(|e| invalid(&e)),
        Syntax::Jsonc => {
            let text = std::str::from_utf8(bytes).map_err(|e| invalid(&e))?;
            match jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &options(syntax)) {
                Ok(Some(doc)) => Ok(doc),
                Ok(None) => Err(invalid(&"the file is empty")),
                Err(e) => Err(invalid(&e)),
            }
        }
    }
}

/// The property at `parents` + `name`, through objects only.
fn find_prop(root: &CstRootNode, parents: &[String], name: &str) -> Option<CstObjectProp> {
    let mut object: CstObject = root.object_value()?;
    for key in parents {
        object = object.object_value(key)?;
    }
    object.get(name)
}

/// Makes `prop`'s value `new`, where it is now `old`: objects key by key (so what is unchanged
/// inside them, comments included, stays), anything else replaced whole if it differs.
fn set(prop: &CstObjectProp, old: &Value, new: &Value) {
    if old == new {
        return;
    }
    let (Value::Object(old), Value::Object(new), Some(object)) = (old, new, prop.object_value()) else {
        prop.set_value(cst_value(new));
        return;
    };
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        if let Some(gone) = object.get(key) {
            gone.remove();
        }
    }
    for (key, value) in new {
        match (old.get(key), object.get(key)) {
            (Some(was), Some(child)) => set(&child, was, value),
            _ => {
                object.append(key, cst_value(value));
            }
        }
    }
}

fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect()),
    }
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
        let mut name = path.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
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
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
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

    /// VS Code's own kind of file: line and block comments, trailing commas, tabs.
    const MCP_JSON: &str = "{\n\t// Servers for Copilot agent mode\n\t\"servers\": {\n\t\t\"fetch\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"uvx\", /* from PyPI */\n\t\t\t\"args\": [\"mcp-server-fetch\"], // the fetch server\n\t\t},\n\t\t\"other\": { \"url\": \"http://127.0.0.1:9/mcp\" },\n\t},\n}\n";

    fn jsonc(text: &str) -> JsonFile {
        JsonFile {
            path: "mcp.json".into(),
            bytes: text.as_bytes().to_vec(),
            doc: parse(Path::new("mcp.json"), text.as_bytes(), Syntax::Jsonc).expect("parses"),
            syntax: Syntax::Jsonc,
        }
    }

    fn key_path(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    #[test]
    fn rendering_keeps_the_files_indentation_and_final_newline() {
        let four = b"{\n    \"a\": 1\n}\n";
        let file = JsonFile {
            path: "x".into(),
            bytes: four.to_vec(),
            doc: json!({"a": 1}),
            syntax: Syntax::Json,
        };
        assert_eq!(file.render(&file.doc).expect("renders"), four);
        let tabs = b"{\n\t\"a\": 1\n}";
        assert_eq!(
            render(&json!({"a": 1}), &indent_of(tabs), false).expect("renders"),
            tabs
        );
    }

    #[test]
    fn a_jsonc_file_is_never_rendered_whole() {
        let file = jsonc(MCP_JSON);
        let err = file.render(&file.doc).expect_err("refused");
        assert!(err.0.contains("comments"), "{err}");
    }

    #[test]
    fn an_edit_touches_only_the_keys_that_change() {
        let file = jsonc(MCP_JSON);
        let routed = json!({"type": "stdio", "command": "/usr/bin/portcullis", "args": ["connect", "fetch"]});
        let bytes = file
            .edited(&[(key_path(&["servers", "fetch"]), routed.clone())])
            .expect("edited");
        let text = String::from_utf8(bytes).expect("UTF-8");
        let expected = MCP_JSON
            .replace("\"uvx\"", "\"/usr/bin/portcullis\"")
            .replace("[\"mcp-server-fetch\"]", "[\"connect\", \"fetch\"]");
        assert_eq!(text, expected, "every other byte, comments and trailing commas kept");
        assert_eq!(
            parse(Path::new("mcp.json"), text.as_bytes(), Syntax::Jsonc).expect("parses")["servers"]["fetch"],
            routed
        );
    }

    #[test]
    fn an_edit_removes_and_appends_keys_in_place_and_undoes_itself() {
        let file = jsonc(MCP_JSON);
        let before = file.doc["servers"]["other"].clone();
        let after = json!({"command": "/usr/bin/portcullis", "args": ["connect", "other"]});
        let edited = file
            .edited(&[(key_path(&["servers", "other"]), after.clone())])
            .expect("edited");
        let edited = jsonc(std::str::from_utf8(&edited).expect("UTF-8"));
        assert_eq!(edited.doc["servers"]["other"], after);
        assert!(!String::from_utf8_lossy(&edited.bytes).contains("\"url\""));
        let back = edited
            .edited(&[(key_path(&["servers", "other"]), before.clone())])
            .expect("edited back");
        let back = jsonc(std::str::from_utf8(&back).expect("UTF-8"));
        assert_eq!(back.doc, file.doc, "the same document again");
        for comment in [
            "// Servers for Copilot agent mode",
            "/* from PyPI */",
            "// the fetch server",
        ] {
            assert!(String::from_utf8_lossy(&back.bytes).contains(comment), "{comment} kept");
        }
    }

    #[test]
    fn an_edit_that_would_not_read_back_is_refused() {
        // Two "fetch" keys: a reader takes the last, the edit would land on the first.
        let file = jsonc("{\"servers\": {\"fetch\": {\"command\": \"a\"}, \"fetch\": {\"command\": \"b\"}}}");
        let err = file
            .edited(&[(key_path(&["servers", "fetch"]), json!({"command": "c"}))])
            .expect_err("refused");
        assert!(err.0.contains("does not read back"), "{err}");
    }

    #[test]
    fn malformed_files_are_refused_with_where_and_why() {
        let err = parse(Path::new("mcp.json"), b"{\n  \"a\": 1,,\n}\n", Syntax::Jsonc).expect_err("refused");
        assert!(
            err.0
                .starts_with("mcp.json is not valid JSON (comments and trailing commas are fine)"),
            "{err}"
        );
        assert!(err.0.contains("line 2"), "says where: {err}");
        let err = parse(Path::new("mcp.json"), b"{'a': 1}", Syntax::Jsonc).expect_err("refused");
        assert!(err.0.contains("not valid JSON"), "single quotes are not JSONC: {err}");
        let err = parse(
            Path::new("portcullis.json"),
            b"{\n  // a comment\n  \"a\": 1\n}\n",
            Syntax::Json,
        )
        .expect_err("refused");
        assert!(
            err.0.contains("portcullis.json is not valid JSON"),
            "the gateway's file stays plain JSON: {err}"
        );
        assert!(parse(Path::new("mcp.json"), b"{\"url\": \"https://x\"}", Syntax::Jsonc).is_ok());
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
}
