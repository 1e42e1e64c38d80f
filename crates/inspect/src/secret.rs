//! Secrets of well-known shapes, found by one regular expression of alternatives.

use std::sync::LazyLock;

use base64::Engine;
use regex::Regex;

/// Each shape: what it is, and its pattern. A pattern with a group named `v` redacts only that
/// group (the password of a URL, the value after `password=`); otherwise the whole match.
const SHAPES: &[(&str, &str)] = &[
    (
        "private key block",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:(?s:.)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,-]*)",
    ),
    ("AWS access key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    (
        "GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    ),
    ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("Slack token", r"\bxox[bpars]-[A-Za-z0-9-]{10,}"),
    (
        "Slack webhook",
        r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
    ),
    ("JWT", r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*"),
    (
        "password in URL",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#@:]+:(?P<v>[^\s/?#@]+)@[^\s/?#@]",
    ),
    ("bearer token", r"\b[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})"),
    // The word may end a longer name (`DB_PASSWORD`, `client-secret`) but not a word
    // (`spassword`): `find` checks the byte before it, since a leading `\w*` would cost the
    // regex its literal prefilter.
    // TODO(issue 33): share the word list with the audit's redaction (crates/audit/src/redact.rs
    // SECRET_WORDS) once both live in a crate neither depends on the other through.
    (
        "secret assignment",
        r#"(?i:(?:password|passwd|passphrase|secret|api_?key|access_?token|auth_?token|private_?key|secret_?key)\b)["']?\s*[:=]\s*["']?(?P<v>[^\s"'<>{}$*,;]{8,})"#,
    ),
];

/// One regex per shape: each keeps its own literal prefilter (a single alternation of them all
/// has none, and ran the DFA over every byte).
static SECRETS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    SHAPES
        .iter()
        // An ASCII word boundary: a Unicode one makes the regex leave its DFA on non-ASCII text.
        .map(|(_, p)| Regex::new(&p.replace(r"\b", r"(?-u:\b)")).expect("the secret shapes compile"))
        .collect()
});

/// One secret: its byte range and what it is.
pub(crate) struct Secret {
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) what: &'static str,
}

/// Every secret in `text`, in order; where two shapes overlap, the one that starts first (then
/// the longer) is kept.
pub(crate) fn find(text: &str) -> Vec<Secret> {
    let mut out = Vec::new();
    for (regex, &(what, _)) in SECRETS.iter().zip(SHAPES) {
        for caps in regex.captures_iter(text) {
            let Some(m) = caps.name("v").or_else(|| caps.get(0)) else {
                continue;
            };
            if what == "JWT" && !is_jwt(m.as_str()) {
                continue;
            }
            if what == "secret assignment" {
                let word_start = caps.get(0).map_or(0, |w| w.start());
                if text.as_bytes()[..word_start]
                    .last()
                    .is_some_and(u8::is_ascii_alphanumeric)
                {
                    continue;
                }
            }
            out.push(Secret {
                offset: m.start(),
                len: m.len(),
                what,
            });
        }
    }
    out.sort_by_key(|s| (s.offset, std::cmp::Reverse(s.len)));
    let mut end = 0;
    out.retain(|s| {
        let keep = s.offset >= end;
        if keep {
            end = s.offset + s.len;
        }
        keep
    });
    out
}

/// A JWT's first segment decodes to a JSON object with an `alg`.
fn is_jwt(token: &str) -> bool {
    let header = token.split('.').next().unwrap_or("");
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header.trim_end_matches('=')) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes)
        .is_ok_and(|header| header.contains_key("alg"))
}
