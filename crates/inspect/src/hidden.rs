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

/// What one pass over a text found.
#[derive(Default)]
pub(crate) struct Scanned {
    /// Every invisible character and terminal escape, in order of offset.
    pub(crate) spans: Vec<Span>,
    /// What the instruction markers' fold takes out, in order of offset.
    pub(crate) cuts: Vec<Cut>,
}

/// A part of the text the instruction markers are matched without: an escape sequence, a
/// control character, or a format character (those that pass as real text too: a marker can
/// hide behind a soft hyphen or a ZWNJ as well as behind a ZWSP). A tag character is read as the
/// ASCII it encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) ascii: Option<u8>,
}

impl Cut {
    fn of(offset: usize, len: usize) -> Cut {
        Cut {
            offset,
            len,
            ascii: None,
        }
    }

    /// The format character `c` at `offset`: a tag character U+E0020–E007E is read as ASCII.
    fn format(offset: usize, c: char) -> Cut {
        let ascii = u8::try_from(u32::from(c).wrapping_sub(0xE0000))
            .ok()
            .filter(|a| (0x20..=0x7E).contains(a));
        Cut {
            offset,
            len: c.len_utf8(),
            ascii,
        }
    }
}

/// Every invisible character and terminal escape in `text`, and what the instruction markers'
/// fold takes out of it: one pass for both, stopping only where a character may matter.
pub(crate) fn scan(text: &str) -> Scanned {
    let mut out = Scanned::default();
    if is_plain(text) {
        return out;
    }
    let bytes = text.as_bytes();
    let mut para = Paragraph::default();
    let mut stops = StopFinder::default();
    let mut i = 0;
    loop {
        i = stops.next(bytes, i);
        let Some(&b) = bytes.get(i) else { break };
        if b < 0x80 {
            i += ascii_stop(bytes, i, &mut para, text, &mut out);
            continue;
        }
        // A character `may_matter` says yes to: decoded, here only.
        let Some(c) = text[i..].chars().next() else { break };
        let len = c.len_utf8();
        match c as u32 {
            0x80..=0x9F => {
                let (seq_len, what, detail) = c1_sequence(bytes, i);
                let mut span = Span::new(Kind::Escape, i, seq_len, what);
                span.detail = detail;
                out.spans.push(span);
                out.cuts.push(Cut::of(i, seq_len));
                i += seq_len;
                continue;
            }
            0x2029 => para.end(text, i, &mut out.spans),
            // An emoji tag sequence (a subdivision flag): black flag, 3 to 7 tag letters or digits,
            // cancel tag. The whole run passes; the markers still read its tags as letters. Found
            // from its first tag (the flag itself is an emoji like any other, not a stop).
            0xE0030..=0xE0039 | 0xE0061..=0xE007A if text[..i].ends_with('\u{1F3F4}') => {
                if let Some(tag_len) = flag_tags(&text[i..]) {
                    cut_each(text, i, i + tag_len, &mut out.cuts);
                    i += tag_len;
                    continue;
                }
            }
            _ => {}
        }
        match format_control(c) {
            Some(Some(what)) if !passes(text, i, c, &mut para) => {
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
                out.spans.push(Span::new(Kind::Invisible, i, run, what));
                cut_each(text, i, i + run, &mut out.cuts);
                i += run;
            }
            Some(_) => {
                out.cuts.push(Cut::format(i, c));
                i += len;
            }
            None => i += len,
        }
    }
    para.end(text, text.len(), &mut out.spans);
    out.spans.sort_by_key(|s| s.offset);
    out
}

/// An ASCII byte the pass stopped at (`i`): a line or paragraph end, an escape sequence or a
/// control character. Returns how many bytes it takes.
fn ascii_stop(bytes: &[u8], i: usize, para: &mut Paragraph, text: &str, out: &mut Scanned) -> usize {
    match bytes[i] {
        b'\n' | b'\r' => para.end(text, i, &mut out.spans),
        // File, group and record separators end a paragraph for bidi, and are controls still.
        0x1C..=0x1E => {
            para.end(text, i, &mut out.spans);
            out.cuts.push(Cut::of(i, 1));
        }
        ESC => {
            let (len, what, detail) = escape_sequence(bytes, i);
            let mut span = Span::new(Kind::Escape, i, len, what);
            span.detail = detail;
            out.spans.push(span);
            out.cuts.push(Cut::of(i, len));
            return len;
        }
        0x20..=0x7E | b'\t' => {}
        _ => {
            out.spans.push(Span::new(Kind::Escape, i, 1, "control character"));
            out.cuts.push(Cut::of(i, 1));
        }
    }
    1
}

/// Whether the format character `c` at `i` passes as real text, by its neighbours and its
/// paragraph (bidi marks and isolates are settled when the paragraph ends).
fn passes(text: &str, i: usize, c: char, para: &mut Paragraph) -> bool {
    let len = c.len_utf8();
    match c as u32 {
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
        0x200C | 0x200D | 0x180E => {
            // The characters around it, decoded only here (UTF-8 is read backwards as well).
            let prev = text[..i].chars().next_back();
            let next = text[i + len..].chars().next();
            (c == '\u{200D}'
                && emoji_base(&text[..i]).is_some_and(is_pictographic)
                && next.is_some_and(is_pictographic))
                || joins_letters(prev, next)
        }
        _ => false,
    }
}

/// A cut for each character of `text[from..to]` (a run of format characters).
fn cut_each(text: &str, from: usize, to: usize, cuts: &mut Vec<Cut>) {
    for (k, c) in text[from..to].char_indices() {
        cuts.push(Cut::format(from + k, c));
    }
}

/// The last character of `before` that is not a variation selector or skin tone: the base of
/// the emoji a ZWJ follows.
fn emoji_base(before: &str) -> Option<char> {
    before.chars().rev().find(|&c| !is_emoji_modifier(c))
}

/// Whether the character whose UTF-8 starts with `lead`, `second` can be one this scan acts on:
/// a C1 control, a format character (see `unicode::format_control`) or U+2029.
/// Any other (Latin, Greek, Cyrillic, Hebrew and Arabic letters, the Indic scripts, CJK) is
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
        // U+11000–13FFF, U+1B000–1BFFF, U+1D000–1DFFF.
        0xF0 => matches!(second, 0x91 | 0x93 | 0x9B | 0x9D),
        _ => false,
    }
}

/// Where [`scan`] must stop, by byte: every other byte is passed over. An ASCII byte's entry is
/// all ones (stop: a control but tab, or DEL; LF and CR, where bidi controls end) or zero; a lead
/// byte's entry has bit `s` set when [`may_matter`] says yes to it with second byte `0x80 + s`,
/// so the letters of Arabic, Persian and the Indic scripts, which share their lead bytes with
/// format controls, are not stops. Continuation bytes are never stops, so the pass lands on
/// character boundaries only.
static STOPS: [u64; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        #[allow(clippy::cast_possible_truncation)] // b < 256
        let byte = b as u8;
        table[b] = match byte {
            b'\t' => 0,
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
};

/// Bytes tested at once: a block with no stop is passed over in one step.
const BLOCK: usize = 32;

/// Finds where [`scan`] must stop, block by block: the stops of 32 bytes are found at once, as
/// a bit mask computed with no branch (the compiler vectorizes it), and read off the mask one by
/// one. Byte by byte with a table, the branch on each lead byte of Persian or Hindi text (which
/// share lead bytes with format controls) was mispredicted often enough to cost ~1.3 ns a byte.
#[derive(Default)]
struct StopFinder {
    /// Where the last block with a stop starts.
    block: usize,
    /// Its stops not yet returned, bit `k` for byte `block + k`.
    mask: u32,
}

impl StopFinder {
    /// The first offset from `i` where [`scan`] must stop, or the text's length. `i` never goes
    /// back (the pass only moves forward).
    #[inline]
    fn next(&mut self, bytes: &[u8], mut i: usize) -> usize {
        if self.mask != 0 && i < self.block + BLOCK {
            let left = self.mask & (u32::MAX << (i - self.block));
            if left != 0 {
                self.mask = left;
                return self.block + left.trailing_zeros() as usize;
            }
            i = self.block + BLOCK;
        }
        loop {
            // A block and the byte after it (each lead byte's second byte).
            let Some(window) = bytes.get(i..i + BLOCK + 1) else {
                self.mask = 0;
                return next_stop_exact(bytes, i, bytes.len());
            };
            let mask = block_stops(window);
            if mask != 0 {
                (self.block, self.mask) = (i, mask);
                return i + mask.trailing_zeros() as usize;
            }
            // A block may end inside a character: its continuation bytes are never stops.
            i += BLOCK;
        }
    }
}

/// The first offset in `i..end` where [`STOPS`] says stop, or `end`: for the text's last bytes.
#[inline]
fn next_stop_exact(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end {
        let Some(&b) = bytes.get(i) else { break };
        let mask = STOPS[usize::from(b)];
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

/// The stops among the first [`BLOCK`] bytes of `window` (which holds one byte more), bit `k`
/// for byte `k`. A byte per lane first, with no branch (the loop vectorizes); then each eight
/// bytes of 0 or 1 gathered into eight bits by one multiplication. Shifting each lane's bit into
/// place directly does not vectorize and was three times slower.
/// `the_block_test_agrees_with_the_table` checks [`pair_stops`] against [`STOPS`] pair by pair.
#[inline]
fn block_stops(window: &[u8]) -> u32 {
    let (lead, second) = (&window[..BLOCK], &window[1..=BLOCK]);
    let mut lanes = [0_u8; BLOCK];
    for ((lane, &b), &s) in lanes.iter_mut().zip(lead).zip(second) {
        *lane = u8::from(pair_stops(b, s));
    }
    let mut mask = 0;
    for (k, eight) in lanes.chunks_exact(8).enumerate() {
        let bytes = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        // Byte j (0 or 1) lands on bit 56 + j of the product; nothing carries into the top byte.
        let bits = bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= u32::try_from(bits).unwrap_or(0) << (8 * k);
    }
    mask
}

/// [`STOPS`] for a byte `b` followed by `s`, written with `&` and `|` on whole bytes.
// Bitwise `&` and `|`, and inlined into the block's loop: a lazy `&&` is a branch, and a
// branch in the loop keeps the compiler from vectorizing it.
#[allow(clippy::inline_always, clippy::needless_bitwise_bool)]
#[inline(always)]
fn pair_stops(b: u8, s: u8) -> bool {
    let control = ((b < 0x20) & (b != b'\t')) | (b == 0x7F);
    let c2 = (b == 0xC2) & ((s.wrapping_sub(0x80) < 0x20) | (s == 0xAD));
    let d8 = (b == 0xD8) & ((s.wrapping_sub(0x80) < 6) | (s == 0x9C));
    let db_dc = ((b == 0xDB) & (s == 0x9D)) | ((b == 0xDC) & (s == 0x8F));
    let e0 = (b == 0xE0) & ((s | 1) == 0xA3);
    let e1_f3 = ((b == 0xE1) | (b == 0xF3)) & (s == 0xA0);
    let e2 = (b == 0xE2) & ((s | 1) == 0x81);
    let ef = (b == 0xEF) & ((s == 0xBB) | (s == 0xBF));
    let f0 = (b == 0xF0) & ((s == 0x91) | (s == 0x93) | (s == 0x9B) | (s == 0x9D));
    control | c2 | d8 | db_dc | e0 | e1_f3 | e2 | ef | f0
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

    fn next_stop(bytes: &[u8], i: usize) -> usize {
        StopFinder::default().next(bytes, i)
    }

    /// Whether the exact table says stop at a byte `b` followed by `s`.
    fn table_stops(b: u8, s: u8) -> bool {
        let mask = STOPS[usize::from(b)];
        mask != 0 && (b < 0x80 || (mask >> (s & 0x3F)) & 1 == 1)
    }

    /// The block test may only pass over a block the exact table would pass over byte by byte:
    /// checked for every pair of bytes.
    #[test]
    fn the_block_test_agrees_with_the_table() {
        for b in 0..=0xFF_u8 {
            for s in 0..=0xFF_u8 {
                let want = match b {
                    0x00..=0x7F => table_stops(b, s),
                    // A lead byte is followed by a continuation byte in a `&str`.
                    0xC2..=0xF4 if (0x80..0xC0).contains(&s) => table_stops(b, s),
                    0xC2..=0xF4 => continue,
                    _ => false,
                };
                assert_eq!(pair_stops(b, s), want, "{b:#X} {s:#X}");
            }
        }
    }

    /// A pass that skipped a character `may_matter` says yes to would miss it; one that stopped
    /// inside a character would read a continuation byte as a character. Each pair is placed at
    /// the start, across and after a block's end, and in the tail walked byte by byte.
    #[test]
    fn the_pass_stops_where_a_character_may_matter_and_never_inside_one() {
        for at in [0, BLOCK - 1, BLOCK, BLOCK + 7, 2 * BLOCK - 1, 90] {
            let mut bytes = vec![b'a'; 100];
            for lead in 0xC2..=0xF4_u8 {
                for second in 0x80..=0xBF_u8 {
                    let want = if may_matter(lead, second) { at } else { bytes.len() };
                    bytes[at..at + 4].copy_from_slice(&[lead, second, 0x80, 0x80]);
                    assert_eq!(next_stop(&bytes, 0), want, "{lead:#X} {second:#X} at {at}");
                }
            }
            for b in (0x00..=0x7F_u8).chain(0x80..=0xBF) {
                bytes[at..at + 4].copy_from_slice(&[b, b'a', b'a', b'a']);
                let control = b < 0x20 && b != b'\t' || b == 0x7F;
                let want = if control { at } else { bytes.len() };
                assert_eq!(next_stop(&bytes, 0), want, "{b:#X} at {at}");
            }
        }
        // Persian and Hindi letters share lead bytes with format controls and are passed over.
        let text = "من می\u{200C}خواهم क्\u{200D}ष";
        assert_eq!(next_stop(text.as_bytes(), 0), text.find('\u{200C}').unwrap());
        let long = format!("{} {text}", "हिन्दी پارسی ".repeat(20));
        assert_eq!(next_stop(long.as_bytes(), 0), long.find('\u{200C}').unwrap());
    }

    /// One finder over a text stops at each stop once, in order, whether the stops share a block
    /// or not.
    #[test]
    fn one_finder_stops_at_every_stop_in_turn() {
        let text = format!(
            "a\u{200B}b\u{200C}{}\u{1B}x\u{200D}\n{}\u{FEFF}",
            "x".repeat(40),
            "y".repeat(70)
        );
        let want: Vec<usize> = text
            .char_indices()
            .filter(|&(_, c)| matches!(c, '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{1B}' | '\n' | '\u{FEFF}'))
            .map(|(i, _)| i)
            .collect();
        let mut finder = StopFinder::default();
        let mut got = Vec::new();
        let mut i = finder.next(text.as_bytes(), 0);
        while i < text.len() {
            got.push(i);
            i = finder.next(text.as_bytes(), i + 1);
        }
        assert_eq!(got, want);
    }
}
