//! One neutralizer for text that came from agents or MCP servers and is shown to people (DESIGN
//! §6): tool names, arguments, descriptions, client names, server stderr.
//!
//! Each place text is shown has its own way of being steered, so each gets its own function:
//!
//! - [`terminal`] / [`terminal_block`]: control characters (C0 including ESC, DEL, C1) could
//!   move the cursor, rewrite lines, set the clipboard (OSC 52) or recolour output; bidi controls
//!   and zero-width characters reorder or hide text (`exe.txt` shown for `txt.exe`). They are
//!   shown as visible `\u{..}` escapes instead.
//! - [`csv_cell`]: a cell starting with `=`, `+`, `-`, `@`, tab or CR is a formula to spreadsheet
//!   programs (`=HYPERLINK(...)`, DDE); it gets a leading `'`. Terminal controls are made visible
//!   as well, since `portcullis audit --format csv` prints to a terminal.
//! - [`markup`]: notification daemons render a subset of HTML in bodies, so `&`, `<`, `>` and
//!   quotes are escaped (after the terminal escapes: XML cannot carry most C0 characters).
//!
//! JSON output needs none of this: JSON string escaping already turns every C0 character
//! (ESC included) into `\u00XX`, quotes are escaped, and JSON is read by programs that want the
//! exact text.

/// Characters that are invisible or steer the display: every control character (C0, DEL, C1),
/// bidi embeddings, overrides, isolates and marks, zero-width characters and the BOM, and the
/// Unicode line and paragraph separators (which some terminals and viewers break lines at).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

fn push_visible(out: &mut String, c: char) {
    if is_hidden(c) {
        out.extend(c.escape_unicode());
    } else {
        out.push(c);
    }
}

/// `text` on one line for a terminal: every hidden character (see [`is_hidden`]), line breaks
/// and tabs included, becomes its `\u{..}` escape.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    out
}

/// Like [`terminal`], but keeps line breaks (`\n`) and turns tabs into four spaces, for text shown
/// as a block (a description, pretty-printed arguments). `\r` is escaped: it would move back to
/// the start of the line and let what follows overwrite what was shown.
pub fn terminal_block(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            c => push_visible(&mut out, c),
        }
    }
    out
}

/// One CSV cell (RFC 4180): formula prefixes guarded with a leading `'`, hidden characters other
/// than `\n` and tab made visible, then quoted (quotes doubled) when it holds a comma,
/// quote or line break.
pub fn csv_cell(text: &str) -> String {
    let mut cell = String::with_capacity(text.len() + 3);
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        cell.push('\'');
    }
    for c in text.chars() {
        match c {
            // Kept: legitimate inside a quoted cell. `\r` is not: printed to a terminal it returns
            // to the start of the line, and what follows overwrites what was there.
            '\n' | '\t' => cell.push(c),
            c => push_visible(&mut cell, c),
        }
    }
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell
    }
}

/// Text for a notification body: hidden characters made visible as in [`terminal_block`] (line
/// breaks kept), then `&`, `<`, `>`, `"` and `'` escaped as markup entities.
pub fn markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in terminal_block(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::esc_sequence("a\u{1b}[2Jb", r"a\u{1b}[2Jb")]
    #[case::osc52_clipboard("\u{1b}]52;c;ZWNobw==\u{7}", r"\u{1b}]52;c;ZWNobw==\u{7}")]
    #[case::carriage_return("ok\rdenied", r"ok\u{d}denied")]
    #[case::newline_and_tab("a\nb\tc", r"a\u{a}b\u{9}c")]
    #[case::del("x\u{7f}", r"x\u{7f}")]
    #[case::c1_csi("x\u{9b}31m", r"x\u{9b}31m")]
    #[case::nel("x\u{85}y", r"x\u{85}y")]
    #[case::rlo("invoice\u{202e}fdp.exe", r"invoice\u{202e}fdp.exe")]
    #[case::lre_pdf("\u{202a}x\u{202c}", r"\u{202a}x\u{202c}")]
    #[case::isolates("\u{2066}\u{2067}\u{2068}\u{2069}", r"\u{2066}\u{2067}\u{2068}\u{2069}")]
    #[case::marks("\u{200e}\u{200f}\u{61c}", r"\u{200e}\u{200f}\u{61c}")]
    #[case::zero_width("a\u{200b}b\u{feff}", r"a\u{200b}b\u{feff}")]
    #[case::line_separator("a\u{2028}b", r"a\u{2028}b")]
    // A zero-width joiner is shown too, even inside an emoji: it can also hide text.
    #[case::emoji_joiner("👩\u{200d}💻", "👩\\u{200d}💻")]
    // Near misses: ordinary text, other scripts and emoji are left alone.
    #[case::plain("write_file", "write_file")]
    #[case::hebrew("שלום", "שלום")]
    #[case::arabic("مرحبا", "مرحبا")]
    #[case::accents("café ü", "café ü")]
    #[case::backslash_u_text(r"\u{1b}", r"\u{1b}")]
    fn terminal_makes_hidden_characters_visible(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(terminal(input), expected);
        assert!(!terminal(input).chars().any(is_hidden));
    }

    #[test]
    fn terminal_block_keeps_lines_but_not_carriage_returns() {
        assert_eq!(terminal_block("a\nb\tc\rd\u{1b}"), "a\nb    c\\u{d}d\\u{1b}");
    }

    #[rstest]
    #[case::formula("=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"")]
    #[case::plus("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0")]
    #[case::minus("-2+3", "'-2+3")]
    #[case::at("@SUM(A1)", "'@SUM(A1)")]
    #[case::tab("\t=1", "'\t=1")]
    #[case::carriage_return("\r=1", r"'\u{d}=1")]
    #[case::carriage_return_inside("ok\rdenied", r"ok\u{d}denied")]
    #[case::comma("a,b", "\"a,b\"")]
    #[case::quote("say \"hi\"", "\"say \"\"hi\"\"\"")]
    #[case::newline("a\nb", "\"a\nb\"")]
    #[case::esc("x\u{1b}[31m", r"x\u{1b}[31m")]
    #[case::bidi("a\u{202e}b", r"a\u{202e}b")]
    // Near misses: a formula character later in the cell is just text.
    #[case::equals_inside("a=b", "a=b")]
    #[case::email("bob@example.com", "bob@example.com")]
    #[case::plain("write_file", "write_file")]
    #[case::empty("", "")]
    fn csv_cells_are_guarded_and_quoted(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(csv_cell(input), expected);
    }

    #[rstest]
    #[case::tags("<b>Approve</b> & go", "&lt;b&gt;Approve&lt;/b&gt; &amp; go")]
    #[case::link("<a href=\"https://x\">y</a>", "&lt;a href=&quot;https://x&quot;&gt;y&lt;/a&gt;")]
    #[case::apostrophe("it's", "it&#39;s")]
    #[case::entity_already("&amp;", "&amp;amp;")]
    #[case::controls("a\u{1b}[2K\u{202e}b", r"a\u{1b}[2K\u{202e}b")]
    #[case::newline_kept("line 1\nline 2", "line 1\nline 2")]
    #[case::plain("write_file on fs", "write_file on fs")]
    fn markup_escapes_tags_entities_and_controls(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(markup(input), expected);
    }
}
