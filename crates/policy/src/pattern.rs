//! Tool-name patterns: the keys of `tools` and the items of `hide`.
//!
//! Only `*` (any run of characters, `/` included), `?` (one character) and `[...]` (a
//! character class, `[!...]` negated) are special. Every other character is literal — globset
//! would otherwise also read `{a,b}` alternation and `\` escapes, which a tool name is never
//! meant to contain — so literals are escaped before globset sees them.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A parsed pattern: what globset should compile, and how specific the pattern is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The pattern in globset syntax, literals escaped.
    pub(crate) globset_source: String,
    /// Number of literal (non-wildcard) characters.
    pub(crate) literals: usize,
    /// Number of wildcards: runs of `*`, each `?`, each `[...]`.
    pub(crate) wildcards: usize,
}

impl Pattern {
    /// Whether the pattern matches one name only, so it can be looked up exactly.
    pub(crate) fn is_exact(&self) -> bool {
        self.wildcards == 0
    }

    /// Parses `text`; the message says what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Pattern, String> {
        if text.is_empty() {
            return Err("expected a tool name or glob pattern, found an empty string".to_owned());
        }
        let chars: Vec<char> = text.chars().collect();
        let mut source = String::with_capacity(text.len() * 2);
        let mut literals = 0;
        let mut wildcards = 0;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '*' => {
                    // `**` means the same as `*` here; globset would reject it mid-name.
                    while chars.get(i + 1) == Some(&'*') {
                        i += 1;
                    }
                    source.push('*');
                    wildcards += 1;
                }
                '?' => {
                    source.push('?');
                    wildcards += 1;
                }
                '[' => {
                    let end = class_end(&chars, i).ok_or_else(|| {
                        format!(
                            "unclosed character class at character {} of {text:?}; write [[] to match a literal [",
                            i + 1
                        )
                    })?;
                    source.extend(&chars[i..=end]);
                    wildcards += 1;
                    i = end;
                }
                c => {
                    if !c.is_alphanumeric() {
                        source.push('\\');
                    }
                    source.push(c);
                    literals += 1;
                }
            }
            i += 1;
        }
        let pattern = Pattern {
            globset_source: source,
            literals,
            wildcards,
        };
        // Compile once here so that a bad class (`[z-a]`) is reported at load.
        pattern.glob()?;
        Ok(pattern)
    }

    /// The globset glob for this pattern.
    pub(crate) fn glob(&self) -> Result<Glob, String> {
        GlobBuilder::new(&self.globset_source)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|err| format!("invalid glob pattern: {}", err.kind()))
    }
}

/// Index of the `]` closing the class opened at `start`. A `]` right after `[` or `[!`/`[^`
/// is a member of the class, not its end (the usual glob convention).
fn class_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    (i..chars.len()).find(|&j| chars[j] == ']')
}

/// Builds a set from patterns that each compiled alone; globset can still refuse the whole
/// set (for instance when it grows past its size limit), hence the `Result`.
pub(crate) fn build_set<'p>(patterns: impl IntoIterator<Item = &'p Pattern>) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(pattern.glob()?);
    }
    builder
        .build()
        .map_err(|err| format!("cannot build the glob set: {}", err.kind()))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::Pattern;

    #[rstest]
    #[case::exact("vm_delete", 9, 0)]
    #[case::one_star("pve_get_*_status", 15, 1)]
    #[case::star_run_counts_once("a**b", 2, 1)]
    #[case::question_marks("a?c?", 2, 2)]
    #[case::class("c[ao]t", 2, 1)]
    #[case::negated_class("[!a]x", 1, 1)]
    #[case::bracket_member("[]]x", 1, 1)]
    #[case::braces_are_literal("x{a,b}", 6, 0)]
    #[case::non_ascii_counts_characters("é*", 1, 1)]
    fn specificity(#[case] text: &str, #[case] literals: usize, #[case] wildcards: usize) {
        let pattern = Pattern::parse(text).expect("valid pattern");
        assert_eq!((pattern.literals, pattern.wildcards), (literals, wildcards), "{text}");
        assert_eq!(pattern.is_exact(), wildcards == 0);
    }

    #[rstest]
    #[case::empty("")]
    #[case::unclosed("a[b")]
    #[case::reversed_range("[z-a]")]
    fn invalid(#[case] text: &str) {
        assert!(Pattern::parse(text).is_err(), "{text:?} must be refused");
    }
}
