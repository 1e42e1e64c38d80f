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
//!   as well, since `portcullis audit --format csv` prints to a terminal, and so are line breaks,
//!   so a row stays one line ([`is_line_break`]).
//! - [`markup`]: notification daemons render a subset of HTML in bodies, so `&`, `<`, `>` and
//!   quotes are escaped (after the terminal escapes: XML cannot carry most C0 characters).
//! - [`json_text`]: JSON keeps the exact text, but its escaping only covers C0 characters, quotes
//!   and backslashes. Every other hidden character (DEL, C1 such as NEL U+0085 and CSI U+009B,
//!   the Unicode line and paragraph separators, bidi controls) would stay raw: line readers
//!   split rows at NEL and U+2028/U+2029, terminals obey C1 controls. They become `\uXXXX`
//!   escapes, which every JSON parser reads back to the same character.

use std::fmt::Write as _;

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

/// Characters that mainstream line readers end a line at: `\n`, `\r`, VT, FF, the file, group and
/// record separators (Python's `str.splitlines`), NEL, and the Unicode line and paragraph
/// separators (JavaScript and Unicode-aware readers). All of them are [`is_hidden`].
pub fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}'..='\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
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
/// than tab made visible, then quoted (quotes doubled) when it holds a comma or a quote.
///
/// Line breaks are made visible too (`\u{a}`), although a quoted cell may hold them: a row must
/// stay one physical line, or a reader that splits the file into lines first (`splitlines`,
/// `grep`, `wc -l`, a log shipper) loses or cuts it. `\r` would also return a terminal to the
/// start of the line and let what follows overwrite what was there.
pub fn csv_cell(text: &str) -> String {
    let mut cell = String::with_capacity(text.len() + 3);
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        cell.push('\'');
    }
    for c in text.chars() {
        match c {
            '\t' => cell.push(c),
            c => push_visible(&mut cell, c),
        }
    }
    if cell.contains([',', '"']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell
    }
}

/// JSON text as `serde_json` writes it, with every [`is_hidden`] character that its escaping
/// leaves raw (DEL, C1, the line and paragraph separators, bidi and zero-width characters)
/// written as a `\uXXXX` escape. The value it reads back to is unchanged.
///
/// Raw characters below U+0020 are left alone: `serde_json` escapes them inside strings, so any
/// left are the layout of pretty-printed output, where an escape would not be JSON.
pub fn json_text(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c >= '\u{7f}' && is_hidden(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    out
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
    #[case::newline("a\nb", r"a\u{a}b")]
    #[case::newline_and_comma("a\nb,c", r#""a\u{a}b,c""#)]
    #[case::nel("a\u{85}b", r"a\u{85}b")]
    #[case::line_separator("a\u{2028}b\u{2029}", r"a\u{2028}b\u{2029}")]
    #[case::tab_inside("a\tb", "a\tb")]
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

    #[test]
    fn csv_cells_hold_no_line_break() {
        let every: String = LINE_BREAKS.iter().flat_map(|c| ['x', *c]).collect();
        let cell = csv_cell(&every);
        assert!(!cell.chars().any(is_line_break), "{cell:?}");
    }

    /// Every character some mainstream reader ends a line at.
    const LINE_BREAKS: [char; 10] = [
        '\n', '\u{0b}', '\u{0c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
    ];

    #[test]
    fn line_breaks_are_the_ones_readers_split_at() {
        let reader_breaks: Vec<char> = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|c| is_line_break(*c))
            .collect();
        assert_eq!(reader_breaks, LINE_BREAKS);
        assert!(LINE_BREAKS.iter().all(|c| is_hidden(*c)));
    }

    #[rstest]
    #[case::nel("\"a\u{85}b\"", r#""a\u0085b""#)]
    #[case::separators("\"\u{2028}\u{2029}\"", r#""\u2028\u2029""#)]
    #[case::c1_csi("\"\u{9b}31m\"", r#""\u009b31m""#)]
    #[case::del_and_bidi("\"\u{7f}\u{202e}\u{feff}\"", r#""\u007f\u202e\ufeff""#)]
    #[case::pretty_layout_kept("{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}")]
    #[case::plain_unicode("\"café 日本 👩\"", "\"café 日本 👩\"")]
    fn json_text_escapes_what_serde_leaves_raw(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(json_text(input), expected);
    }

    #[test]
    fn json_text_reads_back_to_the_same_value() {
        let every: String = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|c| is_hidden(*c))
            .collect();
        let value = serde_json::json!({ "k\u{2028}": every, "n": [1, "\u{85}"] });
        for json in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let escaped = json_text(&json);
            assert!(!escaped.chars().any(|c| c >= '\u{7f}' && is_hidden(c)), "{escaped}");
            let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
            assert_eq!(back, value);
        }
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
