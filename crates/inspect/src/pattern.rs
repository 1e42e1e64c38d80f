//! One regular expression per thing looked for, each keeping its own literal prefilter (an
//! alternation of them all has none, and runs the DFA over every byte).
//!
//! Where a regex's own prefilter is slow to rule a text out (its leading literals are several,
//! or made of bytes that are common in answers, such as `:` and `/`), the pattern names a
//! literal every match contains: one `memmem` pass over the text, about a third of the regex's
//! cost, decides whether the regex runs at all.

use memchr::memmem::Finder;
use regex::Regex;

/// What a pattern finds, as its module writes it.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) what: &'static str,
    pub(crate) pattern: &'static str,
    /// A literal in every match, as it appears in the text the regex reads.
    pub(crate) needle: Option<&'static str>,
}

/// A pattern to find `what`.
pub(crate) const fn spec(what: &'static str, pattern: &'static str) -> Spec {
    Spec {
        what,
        pattern,
        needle: None,
    }
}

impl Spec {
    /// The same pattern, run only on a text that contains `needle`.
    pub(crate) const fn needing(self, needle: &'static str) -> Spec {
        Spec {
            needle: Some(needle),
            ..self
        }
    }

    /// The same pattern without its needle: for a regex that reads the text another way than
    /// the needle was written for (case-insensitively, where the needle is lowercase).
    pub(crate) const fn ungated(&self) -> Spec {
        Spec { needle: None, ..*self }
    }
}

/// A compiled [`Spec`].
pub(crate) struct Pattern {
    pub(crate) what: &'static str,
    pub(crate) regex: Regex,
    needle: Option<Finder<'static>>,
}

impl Pattern {
    /// Compiles `spec` with `pattern` (its own, or rewritten by the caller) as the regex.
    pub(crate) fn new(spec: &Spec, pattern: &str) -> Pattern {
        Pattern {
            what: spec.what,
            regex: Regex::new(&ascii_boundaries(pattern)).expect("the inspector's patterns compile"),
            needle: spec.needle.map(Finder::new),
        }
    }

    /// Whether the regex can match in `text`: false only when its needle is absent.
    pub(crate) fn may_match(&self, text: &str) -> bool {
        self.needle.as_ref().is_none_or(|n| n.find(text.as_bytes()).is_some())
    }
}

/// `pattern` with ASCII word boundaries: a Unicode one makes the regex leave its DFA on
/// non-ASCII text.
fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// Checks that each needle of `specs` is written, as it is, in its pattern (with `\.` read as
/// `.`, and in lowercase where `lowercase`): a needle that no match must contain would hide
/// what it gates.
#[cfg(test)]
pub(crate) fn assert_needles_are_in_their_patterns(specs: &[Spec], lowercase: bool) {
    for s in specs {
        let Some(needle) = s.needle else { continue };
        let pattern = s.pattern.replace(r"\.", ".");
        let pattern = if lowercase {
            pattern.to_ascii_lowercase()
        } else {
            pattern
        };
        assert!(
            pattern.contains(needle),
            "{}: `{needle}` is not in {}",
            s.what,
            s.pattern
        );
        assert!(
            !needle.contains(['(', '|', '?', '*', '+', '[', '\\']),
            "{}: `{needle}`",
            s.what
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_needle_only_rules_a_text_out_when_it_is_absent() {
        let spec = spec("x", r"\bfoo\s+bar").needing("bar");
        let gated = Pattern::new(&spec, spec.pattern);
        assert!(gated.may_match("a foo  bar"));
        assert!(
            !gated.may_match("a foo baz"),
            "no `bar`: the regex cannot match and is not run"
        );
        assert!(
            Pattern::new(&super::spec("x", "a"), "a").may_match(""),
            "no needle: always run"
        );
    }
}
