//! Text for the terminal, shared by every command: untrusted text made safe to show, wrapping and
//! measuring in terminal columns, and the one place results go to stdout. A leaf module.
//!
//! What an agent or an MCP server wrote is untrusted: [`clean`] runs before anything is wrapped,
//! measured or printed, so a control character can neither steer the terminal nor hide inside a
//! width count.

use unicode_width::UnicodeWidthStr;

/// `text` on one line, with every character that could steer a terminal made visible
/// (the shared rule: [`portcullis_audit::neutralize::terminal`]).
pub(crate) fn clean(text: &str) -> String {
    portcullis_audit::neutralize::terminal(text)
}

/// Like [`clean`], but keeps line breaks (and turns tabs into spaces).
pub(crate) fn clean_block(text: &str) -> String {
    portcullis_audit::neutralize::terminal_block(text)
}

/// How many terminal columns `text` takes (a CJK character two, a combining mark none).
/// `text` is already [`clean`]ed: controls have no width to count.
pub(crate) fn columns(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Greedy word wrap of cleaned text to `width` columns, paragraph by paragraph; words longer than
/// a line are split. Every line is returned, empty ones included.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let options = textwrap::Options::new(width.max(1))
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(true);
    textwrap::wrap(text, options).into_iter().map(String::from).collect()
}

/// The one place the CLI writes results to stdout.
#[allow(clippy::print_stdout)]
pub(crate) fn write_stdout(text: &str) {
    println!("{text}");
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::fits("one two three", 20, vec!["one two three"])]
    #[case::breaks("one two three", 7, vec!["one two", "three"])]
    #[case::long_word("abcdefghij", 4, vec!["abcd", "efgh", "ij"])]
    #[case::long_word_after_text("ab cdefghij", 4, vec!["ab", "cdef", "ghij"])]
    #[case::paragraphs("a\nb", 10, vec!["a", "b"])]
    #[case::empty("", 10, vec![""])]
    #[case::spaces_inside_a_line_are_kept("a  b", 10, vec!["a  b"])]
    #[case::indentation_is_kept("  - item one\n  - item two", 10, vec!["  - item", "one", "  - item", "two"])]
    #[case::no_trailing_spaces("one two three", 4, vec!["one", "two", "thre", "e"])]
    #[case::wide_characters_count_two_columns("日本語 テキスト", 8, vec!["日本語", "テキスト"])]
    #[case::combining_marks_count_none("cafe\u{301} cafe\u{301}", 9, vec!["cafe\u{301} cafe\u{301}"])]
    fn wrap_cases(#[case] text: &str, #[case] width: usize, #[case] expected: Vec<&str>) {
        assert_eq!(wrap(text, width), expected);
    }

    #[test]
    fn no_wrapped_line_is_wider_than_asked() {
        let text = clean("a\u{1b}[31m b 日本語日本語 long-word-without-spaces");
        for line in wrap(&text, 6) {
            assert!(columns(&line) <= 6, "{line:?} is {} columns", columns(&line));
        }
    }

    #[test]
    fn columns_are_counted_not_chars() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("日本"), 4);
        assert_eq!(columns("e\u{301}"), 1);
    }
}
