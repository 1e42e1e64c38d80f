//! Tool-name patterns: the keys of `tools` and the items of `hide`.
//!
//! Only `*` (any run of characters, `/` included), `?` (one character) and `[...]` (a
//! character class, `[!...]` negated) are special. Every other character is literal — globset
//! would otherwise also read `{a,b}` alternation and `\` escapes, which a tool name is never
//! meant to contain — so literals are escaped before globset sees them.
//!
//! globset compiles each pattern once at load, so that a bad one is reported there with its
//! reason, but names are matched here, character by character on the parsed [`Piece`]s. globset
//! matches bytes as file paths: its `?` took one byte of a multi-byte character, and a `GlobSet`
//! missed names that end like a path's `/..` (found by fuzzing, see the tests).

use globset::{Glob, GlobBuilder};

/// A parsed pattern: what globset should compile, and how specific the pattern is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The pattern in globset syntax, literals escaped.
    pub(crate) globset_source: String,
    /// Number of literal (non-wildcard) characters.
    pub(crate) literals: usize,
    /// Number of wildcards: runs of `*`, each `?`, each `[...]`.
    pub(crate) wildcards: usize,
    /// The pattern piece by piece, for matching by character.
    pieces: Vec<Piece>,
}

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(char),
    /// `*`: any run of characters.
    Run,
    /// `?`: one character.
    One,
    /// `[...]`: one character in (or, negated, not in) the ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Piece {
    fn takes(&self, c: char) -> bool {
        match self {
            Piece::Literal(l) => *l == c,
            Piece::Run | Piece::One => true,
            Piece::Class { negated, ranges } => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated,
        }
    }
}

/// The members of a class as written between its brackets: single characters and `a-z` ranges
/// (a `-` first or last is itself a member), the way globset reads them.
fn class_ranges(members: &[char]) -> Vec<(char, char)> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < members.len() {
        if i + 2 < members.len() && members[i + 1] == '-' {
            ranges.push((members[i], members[i + 2]));
            i += 3;
        } else {
            ranges.push((members[i], members[i]));
            i += 1;
        }
    }
    ranges
}

impl Pattern {
    /// Whether the pattern matches one name only, so it can be looked up exactly.
    pub(crate) fn is_exact(&self) -> bool {
        self.wildcards == 0
    }

    /// The one name an exact pattern matches (`get_[*]` → `get_*`).
    pub(crate) fn exact_name(&self) -> Option<String> {
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Literal(c) => Some(*c),
                _ => None,
            })
            .collect()
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
        let mut pieces = Vec::new();
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
                    pieces.push(Piece::Run);
                }
                '?' => {
                    source.push('?');
                    wildcards += 1;
                    pieces.push(Piece::One);
                }
                '[' => {
                    let end = class_end(&chars, i).ok_or_else(|| {
                        format!(
                            "unclosed character class at character {} of {text:?}; write [[] to match a literal [",
                            i + 1
                        )
                    })?;
                    let negated = matches!(chars[i + 1], '!' | '^');
                    let members = &chars[i + 1 + usize::from(negated)..end];
                    if let (false, &[only]) = (negated, members) {
                        // `[*]` is how a literal `*` is written (see [`exact_key`]): one
                        // character, so the key still names exactly one tool.
                        source.push('\\');
                        source.push(only);
                        literals += 1;
                        pieces.push(Piece::Literal(only));
                    } else {
                        source.extend(&chars[i..=end]);
                        wildcards += 1;
                        pieces.push(Piece::Class {
                            negated,
                            ranges: class_ranges(members),
                        });
                    }
                    i = end;
                }
                c => {
                    if !c.is_alphanumeric() {
                        source.push('\\');
                    }
                    source.push(c);
                    literals += 1;
                    pieces.push(Piece::Literal(c));
                }
            }
            i += 1;
        }
        let pattern = Pattern {
            globset_source: source,
            literals,
            wildcards,
            pieces,
        };
        // Compile once here so that a bad class (`[z-a]`) is reported at load.
        pattern.glob()?;
        Ok(pattern)
    }

    /// Whether the pattern matches all of `name`.
    pub(crate) fn matches(&self, name: &str) -> bool {
        if name.is_ascii() {
            // One byte per character: no need to collect the characters.
            self.matches_chars(name.as_bytes(), char::from)
        } else {
            self.matches_chars(&name.chars().collect::<Vec<char>>(), |c| c)
        }
    }

    /// Whether the pattern matches all of `name`, character by character (the classic
    /// wildcard walk: on a mismatch, let the last `*` take one more character).
    fn matches_chars<T: Copy>(&self, name: &[T], char_of: impl Fn(T) -> char) -> bool {
        let (mut p, mut n) = (0, 0);
        let mut last_run: Option<(usize, usize)> = None;
        while n < name.len() {
            match self.pieces.get(p) {
                Some(Piece::Run) => {
                    last_run = Some((p, n));
                    p += 1;
                }
                Some(piece) if piece.takes(char_of(name[n])) => {
                    p += 1;
                    n += 1;
                }
                _ => match last_run {
                    Some((run, taken)) => {
                        last_run = Some((run, taken + 1));
                        p = run + 1;
                        n = taken + 1;
                    }
                    None => return false,
                },
            }
        }
        self.pieces[p..].iter().all(|piece| *piece == Piece::Run)
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

/// The policy key that names exactly the tool `name` and nothing else: every character the
/// pattern syntax gives a meaning (`*`, `?`, `[`) is written as a one-character class. What
/// "always" writes, so that approving a tool called `get_*` does not allow every `get_` tool.
pub fn exact_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '*' | '?' | '[' => {
                key.push('[');
                key.push(c);
                key.push(']');
            }
            c => key.push(c),
        }
    }
    key
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

/// Patterns in precedence order.
#[derive(Debug)]
pub(crate) struct PatternSet {
    patterns: Vec<Pattern>,
}

impl PatternSet {
    pub(crate) fn new(patterns: Vec<Pattern>) -> PatternSet {
        PatternSet { patterns }
    }

    pub(crate) fn empty() -> PatternSet {
        PatternSet::new(Vec::new())
    }

    /// The index of the first pattern that matches `name`.
    pub(crate) fn first_match(&self, name: &str) -> Option<usize> {
        self.patterns.iter().position(|pattern| pattern.matches(name))
    }

    pub(crate) fn get(&self, index: usize) -> Option<&Pattern> {
        self.patterns.get(index)
    }

    /// Every pattern that matches `name`, in precedence order (for explanations).
    pub(crate) fn all_matches<'s>(&'s self, name: &'s str) -> impl Iterator<Item = (usize, &'s Pattern)> + 's {
        self.patterns
            .iter()
            .enumerate()
            .filter(move |(_, pattern)| pattern.matches(name))
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::{Pattern, PatternSet};

    #[rstest]
    #[case::exact("vm_delete", 9, 0)]
    #[case::one_star("pve_get_*_status", 15, 1)]
    #[case::star_run_counts_once("a**b", 2, 1)]
    #[case::question_marks("a?c?", 2, 2)]
    #[case::class("c[ao]t", 2, 1)]
    #[case::negated_class("[!a]x", 1, 1)]
    #[case::bracket_member("[]]x", 2, 0)]
    #[case::escaped_star("get_[*]", 5, 0)]
    #[case::two_member_class("get_[*?]", 4, 1)]
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

    /// Found by fuzzing (policy_eval): globset matches bytes, so `?` and classes took single
    /// bytes of a multi-byte character: `[!a]*[é]` matched the one-character name "é", and `?`
    /// did not match it. And a `GlobSet` (unlike one glob alone) missed `ab/..` for `a?/..`.
    #[rstest]
    #[case("[!a]*[é]", "é", false)]
    #[case("[!a]*[é]", "xé", true)]
    #[case("?", "é", true)]
    #[case("??", "é", false)]
    #[case("vm_?", "vm_ü", true)]
    #[case("[!a]", "é", true)]
    #[case("[à-ä]x", "äx", true)]
    #[case("a*", "a\nb", true)]
    #[case("a?b", "a\nb", true)]
    #[case("*_secret", "x\u{1F512}_secret", true)]
    #[case("a*b*c", "aébéc", true)]
    #[case("a*b*c", "aébé", false)]
    #[case("a?/..", "ab/..", true)]
    #[case(".??/..", ".??/..", true)]
    #[case("?.", "..", true)]
    fn matches_characters_not_bytes(#[case] pattern: &str, #[case] name: &str, #[case] expected: bool) {
        let set = PatternSet::new(vec![Pattern::parse(pattern).expect("valid")]);
        assert_eq!(
            set.first_match(name) == Some(0),
            expected,
            "{pattern:?} against {name:?}"
        );
    }
}
