//! `path_under`: whether a path argument lies inside a directory, read lexically.
//!
//! The server will open the path, not the policy, so the test must never say "inside" for a
//! path a server could take to be outside. Both paths are normalized by their text alone (`.`
//! and empty segments dropped, `..` taking the previous segment back); then:
//! - a `..` that would climb above the start of the path escapes, and never matches;
//! - a relative path is never under an absolute base, nor an absolute one under a relative base
//!   (a server resolves a relative path against a working directory the policy does not know);
//! - a backslash or a NUL never matches: Windows servers split on `\`, C servers stop at NUL;
//! - `~` is an ordinary first segment, so `~/x` is relative (some servers expand it).
//!
//! Symbolic links are the server's filesystem's business and are not followed.

/// A directory, normalized once at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BasePath {
    absolute: bool,
    segments: Vec<String>,
}

impl BasePath {
    /// Parses the operand of `path_under`; the message says what was expected.
    pub(crate) fn parse(text: &str) -> Result<BasePath, String> {
        let normalized = normalize(text).ok_or_else(|| {
            format!("expected a directory path without \\, NUL or a .. above its start, found {text:?}")
        })?;
        if text.is_empty() {
            return Err("expected a directory path, found an empty string".to_owned());
        }
        Ok(BasePath {
            absolute: normalized.0,
            segments: normalized.1.into_iter().map(str::to_owned).collect(),
        })
    }

    /// Whether `path` is this directory or inside it.
    pub(crate) fn contains(&self, path: &str) -> bool {
        let Some((absolute, segments)) = normalize(path) else {
            return false;
        };
        absolute == self.absolute
            && segments.len() >= self.segments.len()
            && self.segments.iter().zip(&segments).all(|(a, b)| a == b)
    }
}

/// `(absolute, segments)` of `path`, or `None` when it escapes or holds a character servers
/// disagree on.
fn normalize(path: &str) -> Option<(bool, Vec<&str>)> {
    if path.contains(['\\', '\0']) {
        return None;
    }
    let absolute = path.starts_with('/');
    let mut segments = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            other => segments.push(other),
        }
    }
    Some((absolute, segments))
}

#[cfg(test)]
mod tests {
    use super::BasePath;
    use rstest::rstest;

    #[rstest]
    #[case("/tmp/allowed", "/tmp/allowed", true)]
    #[case("/tmp/allowed", "/tmp/allowed/", true)]
    #[case("/tmp/allowed", "/tmp/allowed/a/b.txt", true)]
    #[case("/tmp/allowed", "/tmp//allowed/./a", true)]
    #[case("/tmp/allowed", "/tmp/allowed/a/../b", true)]
    #[case("/tmp/allowed/", "/tmp/allowed/x", true)]
    #[case("/tmp/allowed", "/tmp/allowedX/a", false)]
    #[case("/tmp/allowed", "/tmp/allowed/../secret", false)]
    #[case("/tmp/allowed", "/tmp/allowed/a/../../secret", false)]
    #[case("/tmp/allowed", "/../../tmp/allowed/x", false)]
    #[case("/tmp/allowed", "/tmp/allowed/../../../../etc/passwd", false)]
    #[case("/tmp/allowed", "tmp/allowed/x", false)]
    #[case("/tmp/allowed", "~/x", false)]
    #[case("/tmp/allowed", "/tmp/allowed\\..\\..\\etc", false)]
    #[case("/tmp/allowed", "/tmp/allowed/x\0/../../etc", false)]
    #[case("/tmp/allowed", "/tmp", false)]
    #[case("/", "/etc/passwd", true)]
    #[case("docs", "docs/a.md", true)]
    #[case("docs", "./docs/a.md", true)]
    #[case("docs", "/docs/a.md", false)]
    #[case("docs", "docs/../../a.md", false)]
    #[case(".", "a/b", true)]
    #[case(".", "../a", false)]
    fn paths_are_under_a_directory_by_their_normalized_text(
        #[case] base: &str,
        #[case] path: &str,
        #[case] under: bool,
    ) {
        let base = BasePath::parse(base).expect("a valid base");
        assert_eq!(base.contains(path), under, "{path:?} under {base:?}");
    }

    #[rstest]
    #[case("")]
    #[case("/tmp/../..")]
    #[case("C:\\Users")]
    fn bad_bases_are_refused_at_load(#[case] base: &str) {
        assert!(BasePath::parse(base).is_err(), "{base:?}");
    }
}
