//! `path_under`: whether a path argument lies inside a directory, as servers resolve it.
//!
//! The server opens the path, not the policy, so the test reads the path every way a
//! mainstream server may resolve it and reports a [`Verdict`]: `some` when one resolution lies
//! inside (or a resolution is unknown), `every` when all of them do. The resolutions:
//! - segments are normalized: `.` and empty segments (repeated or trailing separators) dropped,
//!   `..` taking the previous segment back — at the root it stays at the root, as the OS does;
//! - a relative path is resolved against each of the server's roots ([`Places::roots`]); with no
//!   roots known its resolution is unknown. `~` and `~/x` resolve against [`Places::home`]
//!   (unknown without one), `~user` is always unknown;
//! - a backslash is also read as a separator, and trailing dots and spaces of a segment are also
//!   dropped (`.ssh.` is `.ssh`): that is how a Windows server reads the path. Case is folded
//!   on that reading, and on every reading where the platform's filesystem folds case (macOS,
//!   Windows);
//! - names are compared both byte for byte and as Unicode-equivalent (NFC), since some servers
//!   map a name onto a canonically equivalent directory entry;
//! - a NUL makes the resolution unknown: C servers stop reading there.
//!
//! A relative base (`"docs"`) is compared with a relative path lexically; a `..` climbing above
//! the start of such a path is unknown. Symbolic links are the server's filesystem's business
//! and are not followed.

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::reading::Verdict;

/// Where a relative path or `~` resolves on the server's side, as far as Portcullis knows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Places {
    /// Absolute directories a relative path may be resolved against: the server's roots and the
    /// directories its configured arguments name. Empty: unknown, and a relative path is then
    /// decided strictly (it may be inside any denied directory, and is inside no allowed one).
    pub roots: Vec<String>,
    /// The home directory `~` expands to on the server's machine; `None`: unknown (decided
    /// strictly, as a relative path without roots).
    pub home: Option<String>,
}

/// The places of a call nothing is known about.
static UNKNOWN: Places = Places::UNKNOWN;

impl Places {
    /// No roots, no home: every relative or `~` path is decided strictly.
    pub const UNKNOWN: Places = Places {
        roots: Vec::new(),
        home: None,
    };

    /// A `'static` reference to [`Places::UNKNOWN`], for [`crate::CallFacts`].
    pub fn unknown() -> &'static Places {
        &UNKNOWN
    }
}

/// Whether the platform's filesystem folds case (macOS's APFS/HFS+ and NTFS by default).
const PLATFORM_FOLDS_CASE: bool = cfg!(any(target_os = "macos", windows));

/// A directory, normalized once at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BasePath {
    absolute: bool,
    segments: Vec<String>,
    /// `segments` in NFC, case-folded: what a folding filesystem compares.
    folded: Vec<String>,
    /// `segments` in NFC, for filesystems that do not fold case.
    composed: Vec<String>,
}

impl BasePath {
    /// Parses the operand of `path_under`; the message says what was expected.
    pub(crate) fn parse(text: &str) -> Result<BasePath, String> {
        let refused = || format!("expected a directory path without \\, NUL or a .. above its start, found {text:?}");
        if text.contains(['\\', '\0']) {
            return Err(refused());
        }
        if text.is_empty() {
            return Err("expected a directory path, found an empty string".to_owned());
        }
        let absolute = text.starts_with('/');
        let segments = normalize(text.split('/'), false).ok_or_else(refused)?;
        let segments: Vec<String> = segments.into_iter().map(str::to_owned).collect();
        Ok(BasePath {
            absolute,
            composed: segments.iter().map(|s| canonical(s, false).into_owned()).collect(),
            folded: segments.iter().map(|s| canonical(s, true).into_owned()).collect(),
            segments,
        })
    }

    /// How `path` lies in this directory over the ways servers resolve it.
    pub(crate) fn verdict(&self, path: &str, places: &Places) -> Verdict {
        if path.contains('\0') {
            return Verdict::OPEN;
        }
        let posix = self.resolved(path.split('/').map(Cow::Borrowed), path.starts_with('/'), false, places);
        if !read_differently_on_windows(path) || posix.settled() {
            return posix;
        }
        let segments = path.split(['/', '\\']).map(windows_segment);
        let windows = self.resolved(segments, path.starts_with(['/', '\\']), true, places);
        posix.add_reading(windows)
    }

    /// One reading of the path, split into `segments`.
    fn resolved<'p>(
        &self,
        segments: impl Iterator<Item = Cow<'p, str>> + Clone,
        absolute: bool,
        windows: bool,
        places: &'p Places,
    ) -> Verdict {
        let first = segments.clone().find(|s| !s.is_empty());
        let tilde = !absolute && first.as_deref().is_some_and(|s| s.starts_with('~'));
        if !self.absolute {
            // A relative base: the path as written, relative too.
            if absolute || tilde {
                return Verdict::FALSE;
            }
            return match normalize(segments, false) {
                Some(resolved) => self.compare(&resolved, windows),
                None => Verdict::OPEN,
            };
        }
        if absolute {
            return self.compare_normalized(segments, windows);
        }
        if tilde {
            return match (first.as_deref(), places.home.as_deref()) {
                (Some("~"), Some(home)) if home.starts_with('/') => {
                    let rest = segments.skip_while(|s| s.is_empty()).skip(1);
                    self.compare_normalized(home.split('/').map(Cow::Borrowed).chain(rest), windows)
                }
                _ => Verdict::OPEN, // `~` without a home, or `~user`
            };
        }
        let roots = places.roots.iter().filter(|root| root.starts_with('/'));
        let mut verdict = Verdict::EMPTY;
        let mut any = false;
        for root in roots {
            any = true;
            let joined = root.split('/').map(Cow::Borrowed).chain(segments.clone());
            verdict = verdict.add_reading(self.compare_normalized(joined, windows));
            if verdict.settled() {
                break;
            }
        }
        if any {
            verdict
        } else {
            Verdict::OPEN
        }
    }

    fn compare_normalized<'p>(&self, segments: impl Iterator<Item = Cow<'p, str>>, windows: bool) -> Verdict {
        match normalize(segments, true) {
            Some(resolved) => self.compare(&resolved, windows),
            None => Verdict::OPEN,
        }
    }

    /// `some`: inside when names are compared as the loosest server compares them; `every`:
    /// inside byte for byte (which implies the looser comparison).
    fn compare<S: AsRef<str>>(&self, path: &[S], windows: bool) -> Verdict {
        if path.len() < self.segments.len() {
            return Verdict::FALSE;
        }
        let pairs = || self.segments.iter().zip(path.iter().map(AsRef::as_ref));
        let exact = pairs().all(|(a, b)| a == b);
        if exact {
            return Verdict::TRUE;
        }
        let fold = windows || PLATFORM_FOLDS_CASE;
        let base = if fold { &self.folded } else { &self.composed };
        let loose = base
            .iter()
            .zip(path.iter().map(AsRef::as_ref))
            .all(|(a, b)| *a == canonical(b, fold));
        Verdict {
            some: loose,
            every: false,
        }
    }
}

/// A name as a comparing filesystem sees it: NFC, and case-folded when `fold`.
fn canonical(name: &str, fold: bool) -> Cow<'_, str> {
    let composed: Cow<'_, str> = if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.nfc().collect())
    };
    if fold && composed.chars().any(char::is_uppercase) {
        Cow::Owned(composed.to_lowercase())
    } else {
        composed
    }
}

/// Whether a Windows server reads `path` differently from a POSIX one: a backslash, or a
/// segment ending in a dot or space.
fn read_differently_on_windows(path: &str) -> bool {
    path.contains('\\')
        || path
            .split('/')
            .any(|s| s != "." && s != ".." && (s.ends_with('.') || s.ends_with(' ')))
}

/// A segment as Windows reads it: trailing dots and spaces dropped (`..` and `.` kept).
fn windows_segment(segment: &str) -> Cow<'_, str> {
    if segment == "." || segment == ".." {
        Cow::Borrowed(segment)
    } else {
        Cow::Borrowed(segment.trim_end_matches(['.', ' ']))
    }
}

/// The segments of a path after `.`, empty segments and `..` are applied. With
/// `clamp_at_root` (an absolute path being resolved) a `..` at the root stays there, as the OS
/// does; otherwise it is `None` (a relative path escaping to somewhere unknown, or a base
/// written with a `..` above its start).
fn normalize<S: AsRef<str>>(segments: impl Iterator<Item = S>, clamp_at_root: bool) -> Option<Vec<S>> {
    let mut out: Vec<S> = Vec::new();
    for segment in segments {
        match segment.as_ref() {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() && !clamp_at_root {
                    return None;
                }
            }
            _ => out.push(segment),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{BasePath, Places};
    use crate::reading::Verdict;
    use rstest::rstest;

    const IN: Verdict = Verdict::TRUE;
    const OUT: Verdict = Verdict::FALSE;
    const OPEN: Verdict = Verdict::OPEN;
    const SOME: Verdict = Verdict {
        some: true,
        every: false,
    };

    #[rstest]
    #[case("/tmp/allowed", "/tmp/allowed", IN)]
    #[case("/tmp/allowed", "/tmp/allowed/", IN)]
    #[case("/tmp/allowed", "/tmp/allowed/a/b.txt", IN)]
    #[case("/tmp/allowed", "/tmp//allowed/./a", IN)]
    #[case("/tmp/allowed", "/tmp/allowed/a/../b", IN)]
    #[case("/tmp/allowed/", "/tmp/allowed/x", IN)]
    #[case("/tmp/allowed", "/tmp/allowedX/a", OUT)]
    #[case("/tmp/allowed", "/tmp/allowed/../secret", OUT)]
    #[case("/tmp/allowed", "/tmp/allowed/a/../../secret", OUT)]
    #[case("/tmp/allowed", "/../../tmp/allowed/x", IN)]
    #[case("/tmp/allowed", "/tmp/allowed/../../../../etc/passwd", OUT)]
    #[case("/tmp/allowed", "tmp/allowed/x", OPEN)]
    #[case("/tmp/allowed", "~/x", OPEN)]
    #[case("/tmp/allowed", "~root/x", OPEN)]
    #[case("/tmp/allowed", "/tmp/allowed\\..\\..\\etc", OUT)]
    #[case("/etc", "/tmp/allowed\\..\\..\\etc\\passwd", SOME)]
    #[case("/tmp/allowed", "/tmp/allowed/x\0/../../etc", OPEN)]
    #[case("/tmp/allowed", "/tmp", OUT)]
    #[case("/home/u/.ssh", "/home/u/.ssh./id", SOME)]
    #[case("/home/u/.ssh", "/home/u/.ssh /id", SOME)]
    #[case("/home/u/.ssh", "/home/u//.ssh/", IN)]
    #[case("/home/u/.ssh", "\\home\\u\\.ssh\\id", SOME)]
    #[case("/home/u/.ssh", "/home/u/.SSH./id", SOME)]
    #[case("/", "/etc/passwd", IN)]
    #[case("docs", "docs/a.md", IN)]
    #[case("docs", "./docs/a.md", IN)]
    #[case("docs", "/docs/a.md", OUT)]
    #[case("docs", "docs/../../a.md", OPEN)]
    #[case(".", "a/b", IN)]
    #[case(".", "../a", OPEN)]
    fn paths_are_under_a_directory_as_servers_resolve_them(
        #[case] base: &str,
        #[case] path: &str,
        #[case] want: Verdict,
    ) {
        let base = BasePath::parse(base).expect("a valid base");
        assert_eq!(base.verdict(path, Places::unknown()), want, "{path:?} under {base:?}");
    }

    #[rstest]
    #[case("~/.ssh/id_ed25519", IN)]
    #[case("~", OUT)]
    #[case("~/x/../.ssh/id", IN)]
    #[case(".ssh/id_ed25519", IN)]
    #[case("./.ssh/../.ssh/id", IN)]
    #[case("../u/.ssh/id", IN)]
    #[case("notes.txt", OUT)]
    fn relative_and_home_paths_resolve_against_known_places(#[case] path: &str, #[case] want: Verdict) {
        let places = Places {
            roots: vec!["/home/u".to_owned()],
            home: Some("/home/u".to_owned()),
        };
        let base = BasePath::parse("/home/u/.ssh").expect("valid");
        assert_eq!(base.verdict(path, &places), want, "{path:?}");
    }

    #[test]
    fn a_relative_path_is_under_a_directory_only_from_every_root() {
        let places = Places {
            roots: vec!["/home/u".to_owned(), "/srv".to_owned()],
            home: None,
        };
        let base = BasePath::parse("/home/u/.ssh").expect("valid");
        assert_eq!(base.verdict(".ssh/id", &places), SOME);
        assert_eq!(base.verdict("~/.ssh/id", &places), OPEN);
    }

    #[test]
    fn unicode_equivalent_names_are_the_same_directory_to_some_servers() {
        let composed = "/home/u/caf\u{e9}";
        let decomposed = "/home/u/cafe\u{301}/secret";
        let base = BasePath::parse(composed).expect("valid");
        assert_eq!(base.verdict(decomposed, Places::unknown()), SOME);
        let base = BasePath::parse("/home/u/cafe\u{301}").expect("valid");
        assert_eq!(base.verdict("/home/u/caf\u{e9}/x", Places::unknown()), SOME);
        assert_eq!(base.verdict("/home/u/cafe\u{301}/x", Places::unknown()), IN);
    }

    #[rstest]
    #[case("")]
    #[case("/tmp/../..")]
    #[case("C:\\Users")]
    fn bad_bases_are_refused_at_load(#[case] base: &str) {
        assert!(BasePath::parse(base).is_err(), "{base:?}");
    }
}
