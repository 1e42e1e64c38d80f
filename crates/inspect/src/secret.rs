//! Secrets of well-known shapes, one regular expression each.

use std::sync::LazyLock;

use base64::Engine;

use crate::pattern::{spec, Pattern, Spec};

/// Each shape: what it is, and its pattern. A pattern with a group named `v` redacts only that
/// group (the password of a URL, the value after `password=`); otherwise the whole match.
const SHAPES: &[Spec] = &[
    spec(
        "private key block",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:(?s:.)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,-]*)",
    ),
    spec("AWS access key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    // Two regexes for one shape: each keeps a literal prefilter that rules a text out about
    // twice as fast as the six literals of one regex for both.
    spec("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    spec("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    spec("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    spec("Slack token", r"\bxox[bpars]-[A-Za-z0-9-]{10,}"),
    // The regex's prefilter keys on `:` and `/`, which most answers are full of.
    spec(
        "Slack webhook",
        r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
    )
    .needing("hooks.slack.com/services/"),
    spec("JWT", r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*"),
    spec(
        "password in URL",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#@:]+:(?P<v>[^\s/?#@]+)@[^\s/?#@]",
    ),
    // Two leading literals (`Bearer`, `bearer`) make a two-pattern prefilter, three times slower
    // to rule a text out than one search for what both hold.
    spec("bearer token", r"\b[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})").needing("earer"),
    // The word may end a longer name (`DB_PASSWORD`, `client-secret`) but not a word
    // (`spassword`): `find` checks the byte before it, since a leading `\w*` would cost the
    // regex its literal prefilter.
    // TODO(issue 33): share the word list with the audit's redaction (crates/audit/src/redact.rs
    // SECRET_WORDS) once both live in a crate neither depends on the other through.
    spec(
        "secret assignment",
        r#"(?i:(?:password|passwd|passphrase|secret|api_?key|access_?token|auth_?token|private_?key|secret_?key)\b)["']?\s*[:=]\s*["']?(?P<v>[^\s"'<>{}$*,;]{8,})"#,
    ),
];

static SECRETS: LazyLock<Vec<Pattern>> = LazyLock::new(|| SHAPES.iter().map(|s| Pattern::new(s, s.pattern)).collect());

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
    for shape in SECRETS.iter().filter(|p| p.may_match(text)) {
        let what = shape.what;
        for caps in shape.regex.captures_iter(text) {
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

#[cfg(test)]
mod tests {
    #[test]
    fn each_needle_is_written_in_its_shape() {
        crate::pattern::assert_needles_are_in_their_patterns(super::SHAPES, false);
    }
}
