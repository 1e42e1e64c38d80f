//! The starter policy's `resources` entries: the key of a listed resource or template, and the
//! rule its URI gets.
//!
//! A listed resource is keyed by its URI in normal form, escaped so that `?`, `*` and `[` in it
//! are literal ([`crate::exact_entry_key`], as "always" writes it). A template (RFC 6570,
//! `file:///logs/{date}.txt`) is keyed by a glob: every `{…}` expression becomes `*`, and the rest
//! is brought to normal form (lowercase scheme and host, dot segments removed) and escaped the
//! same way, so `FILE:///Logs/{date}.txt` is `file:///Logs/*.txt`. A `*` matches any run of
//! characters, `/` included, so a template's glob covers at least every URI the template expands
//! to. A template whose glob the loader would refuse is skipped.
//!
//! Reading a resource is class `read`. The rule:
//!
//! | the URI | risk | entry |
//! |---------|------|-------|
//! | a path segment is a dot-directory that holds keys ([`SECRET_DIRS`]: `.ssh`, `.aws`, `.gnupg`, …) or a secret file's name ([`SECRET_FILES`]: `id_rsa`, `.env`, `credentials`, …; also `.env.*`, `*.pem`, `*.key`) | high | require approval |
//! | a `file:` template (its variable names any file the server will open) | high | require approval |
//! | any other | low | allow |
//!
//! Segments are compared as decoded and lowercased (`file:///home/me/.SSH/x` is one too).

use serde_json::Value;

use super::StarterRule;
use crate::model::{Risk, ToolClass};
use crate::{exact_entry_key, normalize_uri, Policy};

/// Directories under a home that hold keys and tokens: a resource under one asks a person.
pub const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".password-store",
    "gcloud",
];

/// File names that hold keys, tokens or passwords.
pub const SECRET_FILES: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    ".env",
    "credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".pgpass",
];

/// Endings of key files' names (compared with the segment lowercased).
const SECRET_SUFFIXES: &[&str] = &[".pem", ".key"];

/// One listed resource or template as the starter policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifiedResource {
    /// The `uri` (or a template's `uriTemplate`) as the server listed it.
    pub listed: String,
    /// The `resources` key written for it.
    pub key: String,
    /// Whether it came from `resources/templates/list` (its key is a glob).
    pub template: bool,
    pub class: ToolClass,
    pub risk: Risk,
    pub rule: StarterRule,
}

/// Classifies one `resources/list` entry (`template: false`) or `resources/templates/list` entry
/// (`template: true`); `Err` says why it is skipped.
pub fn classify_resource(resource: &Value, template: bool) -> Result<ClassifiedResource, String> {
    let field = if template { "uriTemplate" } else { "uri" };
    let Some(listed) = resource.get(field).and_then(Value::as_str) else {
        return Err(format!("{} (no {field})", super::inline(resource)));
    };
    let key = if template {
        template_key(listed)
    } else {
        exact_entry_key(crate::Door::Resources, listed).map_err(|e| e.to_string())
    }
    .map_err(|why| format!("{listed} ({why})"))?;
    let file_template = template && key.starts_with("file:");
    let (risk, rule) = if file_template || is_secret(&key) {
        (Risk::High, StarterRule::RequireApproval)
    } else {
        (Risk::Low, StarterRule::Allow)
    };
    Ok(ClassifiedResource {
        listed: listed.to_owned(),
        key,
        template,
        class: ToolClass::Read,
        risk,
        rule,
    })
}

/// Stands for a template's expression while the rest is normalized: lowercase letters, which
/// normalization leaves as they are in every part of a URI.
const HOLE: &str = "portcullistemplatehole";

/// The glob key of a URI template: expressions as `*`, the rest in normal form and escaped.
fn template_key(template: &str) -> Result<String, String> {
    if template.contains(HOLE) {
        return Err("its text cannot be told from a template variable".to_owned());
    }
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| "an unclosed { in the template".to_owned())?;
        filled.push_str(&rest[..open]);
        filled.push_str(HOLE);
        rest = &rest[open + close + 1..];
    }
    filled.push_str(rest);
    let normal = normalize_uri(&filled).map_err(|problem| format!("the template {problem}"))?;
    let mut key = crate::exact_key(normal.as_str()).replace(HOLE, "*");
    // `**` reads as `*`; two expressions side by side are one run.
    while key.contains("**") {
        key = key.replace("**", "*");
    }
    // The loader's own check: a glob it would refuse is not written.
    let probe = serde_json::json!({ "version": "1", "resources": { &key: {} } });
    Policy::from_json_str(&probe.to_string(), "template").map_err(|e| format!("no key for it: {e}"))?;
    Ok(key)
}

/// Whether a path segment of `key` names a secrets directory or file (see the module docs).
fn is_secret(key: &str) -> bool {
    let path = key.split_once("://").map_or(key, |(_, rest)| rest);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path.split('/').any(|segment| {
        let segment = decode(segment).to_lowercase();
        SECRET_DIRS.contains(&segment.as_str())
            || SECRET_FILES.contains(&segment.as_str())
            || segment.starts_with(".env.")
            || SECRET_SUFFIXES.iter().any(|suffix| segment.ends_with(suffix))
    })
}

/// `segment` with its percent escapes decoded (lossy: only compared with ASCII names).
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::plain("test://static/resource/{id}", "test://static/resource/*")]
    #[case::normalized("FILE:///Logs/./{date}.txt", "file:///Logs/*.txt")]
    #[case::host("HTTPS://Example.COM/{+path}{?q}", "https://example.com/*")]
    #[case::query_is_literal("https://h/a?x=1&y={y}", "https://h/a[?]x=1&y=*")]
    fn a_templates_key_is_a_glob_in_normal_form(#[case] template: &str, #[case] key: &str) {
        assert_eq!(template_key(template).unwrap(), key);
    }

    #[test]
    fn a_template_key_covers_its_expansions() {
        let key = template_key("test://static/resource/{id}").unwrap();
        let text = json!({"version": "1", "default": "deny", "resources": { key: {} }}).to_string();
        let policy = Policy::from_json_str(&text, "t").unwrap();
        let read = |uri: &str| {
            policy
                .evaluate_resource(&normalize_uri(uri).unwrap(), crate::CallFacts::arguments(&Value::Null))
                .action
        };
        assert_eq!(read("test://static/resource/42"), crate::Action::Allow);
        assert_eq!(read("test://static/other/42"), crate::Action::Deny);
    }

    #[rstest]
    #[case("file:///home/me/.ssh/id_rsa", true)]
    #[case("file:///home/me/.SSH/config", true)]
    #[case("file:///home/me/.aws/credentials", true)]
    #[case("file:///srv/app/.env", true)]
    #[case("file:///srv/app/.env.local", true)]
    #[case("file:///srv/app/%2Eenv", true)]
    #[case("file:///etc/tls/server.pem", true)]
    #[case("file:///srv/app/README.md", false)]
    #[case("file:///srv/app/environment.md", false)]
    #[case("test://static/resource/1", false)]
    fn secrets_are_found_by_path_segment(#[case] uri: &str, #[case] secret: bool) {
        assert_eq!(is_secret(uri), secret, "{uri}");
    }

    #[test]
    fn reads_are_allowed_except_secrets_and_file_templates() {
        let c = |r: Value, t| classify_resource(&r, t).unwrap();
        let plain = c(json!({"uri": "test://static/resource/1", "name": "r1"}), false);
        assert_eq!(
            (plain.class, plain.risk, plain.rule),
            (ToolClass::Read, Risk::Low, StarterRule::Allow)
        );
        let key = c(json!({"uri": "file:///home/me/.ssh/id_ed25519"}), false);
        assert_eq!((key.risk, key.rule), (Risk::High, StarterRule::RequireApproval));
        let files = c(json!({"uriTemplate": "file:///{path}"}), true);
        assert_eq!(
            (files.key.as_str(), files.rule),
            ("file:///*", StarterRule::RequireApproval)
        );
        let other = c(json!({"uriTemplate": "test://static/resource/{id}"}), true);
        assert_eq!(other.rule, StarterRule::Allow);
    }

    #[test]
    fn unnamed_and_unnormalizable_resources_are_skipped_with_a_reason() {
        assert!(classify_resource(&json!({"name": "x"}), false)
            .unwrap_err()
            .contains("no uri"));
        let why = classify_resource(&json!({"uri": "file:///a/%2e%2e/b"}), false).unwrap_err();
        assert!(why.starts_with("file:///a/%2e%2e/b ("), "{why}");
        assert!(classify_resource(&json!({"uriTemplate": "x://{a"}), true).is_err());
    }
}
