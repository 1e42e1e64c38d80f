//! The one pass for what hides or smuggles text: invisible characters and terminal escapes.
//!
//! The rules are in the crate docs; each `what` names the rule that fired.

use crate::unicode::{format_control, is_emoji_modifier, is_pictographic, is_rtl, joining_script};
use crate::{Kind, Span};

const ESC: u8 = 0x1B;
const BEL: u8 = 0x07;

/// Whether `text` can hold nothing this pass finds: printable ASCII, tab, LF and CR only.
pub(crate) fn is_plain(text: &str) -> bool {
    // Chunk by chunk with no branch inside a chunk, so the compiler vectorizes it: a byte-at-a-
    // time `all` with its early exit was a fifth of a 1 MiB answer's inspection.
    let bytes = text.as_bytes();
    let mut chunks = bytes.chunks_exact(64);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |bad, &b| bad | !is_plain_byte(b)) {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| is_plain_byte(b))
}

/// Printable ASCII, tab, LF or CR.
#[inline]
fn is_plain_byte(b: u8) -> bool {
    matches!(b, 0x20..=0x7E | b'\t' | b'\n' | b'\r')
}

/// The bidi state of one paragraph (bidi controls end at a paragraph separator).
#[derive(Default)]
struct Paragraph {
    /// Where the paragraph starts in the text.
    start: usize,
    /// LRM / RLM / ALM seen so far: they pass if the paragraph has right-to-left letters.
    marks: Vec<(usize, usize)>,
    /// LRI / RLI / FSI not yet closed by a PDI.
    open_isolates: Vec<(usize, usize)>,
}

impl Paragraph {
    /// Ends the paragraph at byte `end` of `text` (looking for right-to-left letters only if it
    /// has marks: most text has none, and the scan then decodes no character it need not).
    fn end(&mut self, text: &str, end: usize, out: &mut Vec<Span>) {
        if !self.marks.is_empty() && !text[self.start..end].chars().any(is_rtl) {
            for &(offset, len) in &self.marks {
                out.push(Span::new(
                    Kind::Invisible,
                    offset,
                    len,
                    "bidi mark without right-to-left text",
                ));
            }
        }
        for &(offset, len) in &self.open_isolates {
            out.push(Span::new(Kind::Invisible, offset, len, "unbalanced bidi isolate"));
        }
        self.marks.clear();
        self.open_isolates.clear();
        self.start = end;
    }
}

/// Every invisible character and terminal escape in `text`, in order of offset.
pub(crate) fn scan(text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    if is_plain(text) {
        return out;
    }
    let bytes = text.as_bytes();
    let mut para = Paragraph::default();
    let mut i = 0;
    loop {
        i = next_stop(bytes, i, &SCAN_STOPS);
        let Some(&b) = bytes.get(i) else { break };
        if b < 0x80 {
            match b {
                0x20..=0x7E | b'\t' => {}
                b'\n' | b'\r' | 0x1C..=0x1E => para.end(text, i, &mut out),
                ESC => {
                    let (len, what, detail) = escape_sequence(bytes, i);
                    let mut span = Span::new(Kind::Escape, i, len, what);
                    span.detail = detail;
                    out.push(span);
                    i += len;
                    continue;
                }
                _ => out.push(Span::new(Kind::Escape, i, 1, "control character")),
            }
            i += 1;
            continue;
        }
        if !may_matter(b, bytes.get(i + 1).copied().unwrap_or(0)) {
            // A letter of most scripts: skip it by its UTF-8 length, undecoded.
            i += utf8_len(b);
            continue;
        }
        let Some(c) = text[i..].chars().next() else { break };
        let len = c.len_utf8();
        match c as u32 {
            0x80..=0x9F => {
                let (seq_len, what, detail) = c1_sequence(bytes, i);
                let mut span = Span::new(Kind::Escape, i, seq_len, what);
                span.detail = detail;
                out.push(span);
                i += seq_len;
                continue;
            }
            0x2029 => para.end(text, i, &mut out),
            // An emoji tag sequence (a subdivision flag): black flag, 3 to 7 tag letters or digits,
            // cancel tag. The whole run passes.
            0x1F3F4 => {
                if let Some(tag_len) = flag_tags(&text[i + len..]) {
                    i += len + tag_len;
                    continue;
                }
            }
            _ => {}
        }
        if let Some(Some(what)) = format_control(c) {
            // The characters around it, decoded only here (UTF-8 is read backwards as well).
            let prev = text[..i].chars().next_back();
            let next = text[i + len..].chars().next();
            let passes = match c as u32 {
                0x200E | 0x200F | 0x061C => {
                    para.marks.push((i, len));
                    true
                }
                0x2066..=0x2068 => {
                    para.open_isolates.push((i, len));
                    true
                }
                0x2069 => para.open_isolates.pop().is_some(),
                0xFEFF => i == 0,
                0x200C | 0x200D => {
                    (c == '\u{200D}'
                        && emoji_base(&text[..i]).is_some_and(is_pictographic)
                        && next.is_some_and(is_pictographic))
                        || joins_letters(prev, next)
                }
                0x180E => joins_letters(prev, next),
                _ => false,
            };
            if !passes {
                // A run of tag characters is one finding (one smuggled string).
                let mut run = len;
                if what == "tag characters" {
                    while let Some(t) = text[i + run..].chars().next() {
                        if !matches!(t as u32, 0xE0001 | 0xE0020..=0xE007F) {
                            break;
                        }
                        run += t.len_utf8();
                    }
                }
                out.push(Span::new(Kind::Invisible, i, run, what));
                i += run;
                continue;
            }
        }
        i += len;
    }
    para.end(text, text.len(), &mut out);
    out.sort_by_key(|s| s.offset);
    out
}

/// The last character of `before` that is not a variation selector or skin tone: the base of
/// the emoji a ZWJ follows.
fn emoji_base(before: &str) -> Option<char> {
    before.chars().rev().find(|&c| !is_emoji_modifier(c))
}

/// Whether the character whose UTF-8 starts with `lead`, `second` can be one this scan acts on:
/// a C1 control, a format character (see `unicode::format_control`), U+2029 or the black flag;
/// the instruction markers' fold drops only characters of the first two kinds. Any other (Latin, Greek, Cyrillic, Hebrew and Arabic letters, the Indic scripts, CJK) is
/// skipped undecoded. `format_control_leads_are_known` checks it against the table.
pub(crate) const fn may_matter(lead: u8, second: u8) -> bool {
    match lead {
        0xC2 => matches!(second, 0x80..=0x9F | 0xAD),
        // U+0600–0605 and U+061C, U+06DD, U+070F: not the Arabic and Syriac letters around them.
        0xD8 => matches!(second, 0x80..=0x85 | 0x9C),
        0xDB => second == 0x9D,
        0xDC => second == 0x8F,
        // U+0880–08FF (Arabic Extended-B/A).
        0xE0 => matches!(second, 0xA2 | 0xA3),
        // U+1800–183F (Mongolian); plane 14 (tags).
        0xE1 | 0xF3 => second == 0xA0,
        // U+2000–207F (General Punctuation).
        0xE2 => matches!(second, 0x80 | 0x81),
        // U+FEC0–FEFF, U+FFC0–FFFF.
        0xEF => matches!(second, 0xBB | 0xBF),
        // U+11000–13FFF, U+1B000–1BFFF, U+1D000–1DFFF, U+1F000–1FFFF.
        0xF0 => matches!(second, 0x91 | 0x93 | 0x9B | 0x9D | 0x9F),
        _ => false,
    }
}

/// Where a pass over a text must stop, by byte: every other byte is passed over with one table
/// read (most answers are mostly letters). An ASCII byte's entry is all ones (stop: a control but
/// tab, LF and CR, or DEL; with `paragraphs` also LF and CR, where bidi controls end) or zero; a
/// lead byte's entry has bit `s` set when [`may_matter`] says yes to it with second byte
/// `0x80 + s`, so the letters of Arabic, Persian and the Indic scripts, which share their lead
/// bytes with format controls, are not stops. Continuation bytes are never stops, so a pass lands
/// on character boundaries only.
const fn stops(paragraphs: bool) -> [u64; 256] {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        #[allow(clippy::cast_possible_truncation)] // b < 256
        let byte = b as u8;
        table[b] = match byte {
            b'\n' | b'\r' if paragraphs => u64::MAX,
            b'\t' | b'\n' | b'\r' => 0,
            0x00..=0x1F | 0x7F => u64::MAX,
            0xC2..=0xF4 => {
                let mut mask = 0;
                let mut s = 0;
                while s < 64 {
                    if may_matter(byte, 0x80 + s) {
                        mask |= 1 << s;
                    }
                    s += 1;
                }
                mask
            }
            _ => 0,
        };
        b += 1;
    }
    table
}

/// Where [`scan`] stops.
static SCAN_STOPS: [u64; 256] = stops(true);
/// Where the instruction markers' fold stops.
pub(crate) static FOLD_STOPS: [u64; 256] = stops(false);

/// The first offset from `i` where `stops` says stop, or the text's length.
#[inline]
pub(crate) fn next_stop(bytes: &[u8], mut i: usize, stops: &[u64; 256]) -> usize {
    while let Some(&b) = bytes.get(i) {
        let mask = stops[usize::from(b)];
        if mask != 0 {
            let second = bytes.get(i + 1).map_or(0, |&s| s & 0x3F);
            if b < 0x80 || (mask >> second) & 1 == 1 {
                return i;
            }
        }
        i += 1;
    }
    i
}

/// The length of the UTF-8 sequence a non-ASCII `lead` byte starts.
#[inline]
pub(crate) fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}

/// A joiner between letters of a script that writes with it: the character before is of that
/// script, and the one after is of the same script, or ends the word (whitespace, ASCII
/// punctuation, end of text: a Malayalam chillu, a Persian word-final ZWNJ).
fn joins_letters(prev: Option<char>, next: Option<char>) -> bool {
    let Some(script) = prev.and_then(joining_script) else {
        return false;
    };
    match next {
        None => true,
        Some(n) => joining_script(n) == Some(script) || n.is_whitespace() || n.is_ascii_punctuation(),
    }
}

/// The length of `TAG{3,7} CANCEL-TAG` at the start of `rest`, the tail of a subdivision flag.
fn flag_tags(rest: &str) -> Option<usize> {
    let mut len = 0;
    let mut count = 0;
    for c in rest.chars() {
        match c as u32 {
            0xE0030..=0xE0039 | 0xE0061..=0xE007A if count < 7 => {
                count += 1;
                len += c.len_utf8();
            }
            0xE007F if count >= 3 => return Some(len + c.len_utf8()),
            _ => return None,
        }
    }
    None
}

/// Where a string sequence (OSC, DCS, SOS, PM, APC) whose body starts at `from` ends: its body
/// and the length of its terminator (BEL, ESC \, or the C1 ST U+009C).
fn string_end(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut j = from;
    while j < bytes.len() {
        match bytes[j] {
            BEL => return Some((j, 1)),
            ESC if bytes.get(j + 1) == Some(&b'\\') => return Some((j, 2)),
            0xC2 if bytes.get(j + 1) == Some(&0x9C) => return Some((j, 2)),
            _ => j += 1,
        }
    }
    None
}

/// The length of a CSI's parameters, intermediates and final byte from `from`, and its final.
fn csi_body(bytes: &[u8], from: usize) -> (usize, Option<u8>) {
    let mut j = from;
    while j < bytes.len() && (0x30..=0x3F).contains(&bytes[j]) {
        j += 1;
    }
    while j < bytes.len() && (0x20..=0x2F).contains(&bytes[j]) {
        j += 1;
    }
    match bytes.get(j) {
        Some(&f) if (0x40..=0x7E).contains(&f) => (j + 1 - from, Some(f)),
        _ => (j - from, None),
    }
}

fn csi_what(last: Option<u8>) -> &'static str {
    match last {
        Some(b'J') => "CSI erase in display",
        Some(b'K') => "CSI erase in line",
        Some(b'm') => "CSI colour (SGR)",
        Some(b'A'..=b'H' | b'f' | b's' | b'u') => "CSI cursor movement",
        Some(_) => "CSI sequence",
        None => "unterminated CSI sequence",
    }
}

type Sequence = (usize, &'static str, Option<String>);

/// An OSC whose body is `bytes[from..end]`: what it does, and an OSC 8 link's target.
fn osc(bytes: &[u8], from: usize, end: usize) -> (&'static str, Option<String>) {
    let body = String::from_utf8_lossy(&bytes[from..end]);
    if let Some(rest) = body.strip_prefix("8;") {
        let target = rest.split_once(';').map_or("", |(_, uri)| uri);
        if target.is_empty() {
            return ("OSC 8 link end", None);
        }
        return ("OSC 8 link", Some(crate::excerpt::neutralize(target, 200)));
    }
    let what = match body.split(';').next().unwrap_or("") {
        "0" | "1" | "2" => "OSC window title",
        "52" => "OSC 52 clipboard write",
        _ => "OSC sequence",
    };
    (what, None)
}

/// The escape sequence that starts with the ESC at `at`.
fn escape_sequence(bytes: &[u8], at: usize) -> Sequence {
    match bytes.get(at + 1) {
        Some(b'[') => {
            let (len, last) = csi_body(bytes, at + 2);
            (2 + len, csi_what(last), None)
        }
        Some(&b @ (b']' | b'P' | b'X' | b'^' | b'_')) => match string_end(bytes, at + 2) {
            Some((end, term)) if b == b']' => {
                let (what, detail) = osc(bytes, at + 2, end);
                (end + term - at, what, detail)
            }
            Some((end, term)) => (end + term - at, "DCS/APC string", None),
            // Unterminated: only the introducer is taken; what follows is inert text.
            None => (2, "unterminated string sequence", None),
        },
        _ => {
            let mut j = at + 1;
            while j < bytes.len() && (0x20..=0x2F).contains(&bytes[j]) {
                j += 1;
            }
            match bytes.get(j) {
                Some(&f) if (0x30..=0x7E).contains(&f) => (j + 1 - at, "ESC sequence", None),
                _ => (1, "ESC", None),
            }
        }
    }
}

/// The sequence a C1 control (two UTF-8 bytes, U+0080–U+009F) at `at` introduces.
fn c1_sequence(bytes: &[u8], at: usize) -> Sequence {
    match bytes[at + 1] {
        0x9B => {
            let (len, last) = csi_body(bytes, at + 2);
            (2 + len, if last.is_some() { "C1 CSI" } else { "C1 control" }, None)
        }
        b @ (0x9D | 0x90 | 0x98 | 0x9E | 0x9F) => match string_end(bytes, at + 2) {
            Some((end, term)) if b == 0x9D => {
                let (what, detail) = osc(bytes, at + 2, end);
                (end + term - at, what, detail)
            }
            Some((end, term)) => (end + term - at, "DCS/APC string", None),
            None => (2, "C1 control", None),
        },
        _ => (2, "C1 control", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass that skipped a character `may_matter` says yes to would miss it; one that stopped
    /// inside a character would read a continuation byte as a character.
    #[test]
    fn the_passes_stop_where_a_character_may_matter_and_never_inside_one() {
        let stops_at = |table: &[u64; 256], bytes: &[u8]| next_stop(bytes, 0, table) == 0;
        for lead in 0xC2..=0xF4_u8 {
            for second in 0x80..=0xBF_u8 {
                let want = may_matter(lead, second);
                let bytes = [lead, second, 0x80, 0x80];
                assert_eq!(stops_at(&SCAN_STOPS, &bytes), want, "{lead:#X} {second:#X}");
                assert_eq!(stops_at(&FOLD_STOPS, &bytes), want, "{lead:#X} {second:#X}");
            }
        }
        for b in (0x20..=0x7E_u8).chain([b'\t']).chain(0x80..=0xBF) {
            assert!(!stops_at(&SCAN_STOPS, &[b]) && !stops_at(&FOLD_STOPS, &[b]), "{b:#X}");
        }
        for b in (0x00..0x20_u8).filter(|b| ![9, 10, 13].contains(b)).chain([0x7F]) {
            assert!(
                stops_at(&SCAN_STOPS, &[b]) && stops_at(&FOLD_STOPS, &[b]),
                "control {b:#X}"
            );
        }
        assert!(stops_at(&SCAN_STOPS, b"\n") && !stops_at(&FOLD_STOPS, b"\n"));
        // Persian and Hindi letters share lead bytes with format controls and are passed over.
        let text = "من می\u{200C}خواهم क्\u{200D}ष";
        assert_eq!(
            next_stop(text.as_bytes(), 0, &FOLD_STOPS),
            text.find('\u{200C}').unwrap()
        );
    }
}
