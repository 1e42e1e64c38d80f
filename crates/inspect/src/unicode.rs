//! The few Unicode properties the hidden-character pass needs, as ranges written out here.
//!
//! A lookup crate answers "which category is this character" with a search over every range it
//! knows; the gate asks only about a handful of blocks, on every character of every answer, so
//! `match` over ranges is both smaller and faster. `format_control_table` is checked against
//! `unicode-general-category` by a test, so a new Unicode version cannot add a Cf character the
//! rules below say nothing about.

/// Scripts whose writing needs ZWNJ / ZWJ between letters (joining control in Arabic and Syriac,
/// conjunct and half-form control in the Brahmic scripts). A joiner passes only inside one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoiningScript {
    Arabic,
    Syriac,
    /// The Brahmic block the character is in (U+0900 Devanagari … U+0D80 Sinhala), by its first
    /// code point: a joiner between Devanagari and Tamil is not real text.
    Brahmic(u32),
    /// Mongolian: U+180E / ZWJ / ZWNJ shape its letters too.
    Mongolian,
}

pub(crate) fn joining_script(c: char) -> Option<JoiningScript> {
    let u = c as u32;
    match u {
        0x0600..=0x06FF | 0x0750..=0x077F | 0x0870..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFE => {
            Some(JoiningScript::Arabic)
        }
        0x0700..=0x074F | 0x0860..=0x086F => Some(JoiningScript::Syriac),
        // Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam, Sinhala:
        // one 128-code-point block each.
        0x0900..=0x0DFF => Some(JoiningScript::Brahmic(u & !0x7F)),
        0x1800..=0x18AF => Some(JoiningScript::Mongolian),
        _ => None,
    }
}

/// A right-to-left letter (Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, their
/// presentation forms, and the RTL planes of the SMP): the text the bidi marks are for.
pub(crate) fn is_rtl(c: char) -> bool {
    matches!(c as u32,
        0x0590..=0x05FF | 0x0600..=0x06FF | 0x0700..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE
        | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// Extended_Pictographic and the emoji components a ZWJ sequence joins, approximated by the blocks
/// they live in (wider than the property: a ZWJ between two symbols of these blocks hides nothing).
pub(crate) fn is_pictographic(c: char) -> bool {
    matches!(c as u32,
        0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x21FF | 0x2300..=0x23FF
        | 0x24C2 | 0x25A0..=0x25FF | 0x2600..=0x27BF | 0x2934..=0x2935 | 0x2B00..=0x2BFF
        | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0x1F000..=0x1FAFF | 0x1FC00..=0x1FFFD)
}

/// What an emoji sequence carries between a base and a ZWJ: variation selectors and skin tones.
pub(crate) fn is_emoji_modifier(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0x1F3FB..=0x1F3FF)
}

/// Every format control (general category Cf), as of Unicode 16, split by what the gate does with
/// it. `Some(what)` is a finding unless a rule in `hidden` lets it pass; `None` is a format
/// character real text shows or needs (see the crate docs).
pub(crate) fn format_control(c: char) -> Option<Option<&'static str>> {
    let u = c as u32;
    let what = match u {
        // Visible or script-bound: the soft hyphen (a hyphenation hint, shown at a line break),
        // the Arabic and Syriac prepended number marks, Kaithi, Egyptian hieroglyph, Duployan
        // and musical-notation format controls.
        0x00AD
        | 0x0600..=0x0605
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A => return Some(None),
        0x061C | 0x200E | 0x200F => "bidi mark",
        0x180E => "Mongolian vowel separator",
        0x200B => "zero-width space",
        0x200C => "zero-width non-joiner",
        0x200D => "zero-width joiner",
        0x202A..=0x202E => "bidi override",
        0x2060 => "word joiner",
        0x2061..=0x2064 => "invisible operator",
        0x2066..=0x2069 => "bidi isolate",
        0x206A..=0x206F => "deprecated format control",
        0xFEFF => "byte order mark",
        0xFFF9..=0xFFFB => "interlinear annotation",
        0xE0001 | 0xE0020..=0xE007F => "tag characters",
        _ => return None,
    };
    Some(Some(what))
}

#[cfg(test)]
mod tests {
    use super::format_control;
    use crate::hidden::may_matter;
    use unicode_general_category::{get_general_category, GeneralCategory};

    /// The table above names every Cf character and nothing else: a Unicode update that adds a
    /// format control fails here until the crate docs say what happens to it.
    #[test]
    fn format_control_table_is_exactly_general_category_cf() {
        for u in 0..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(u) else { continue };
            let cf = get_general_category(c) == GeneralCategory::Format;
            assert_eq!(format_control(c).is_some(), cf, "U+{u:04X}");
        }
    }

    /// The hidden scan skips characters by their first two UTF-8 bytes: none it skips is a
    /// format character, a C1 control or U+2029.
    #[test]
    fn format_control_leads_are_known() {
        for u in 0x80..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(u) else { continue };
            if format_control(c).is_some() || (0x80..=0x9F).contains(&u) || u == 0x2029 {
                let mut buf = [0; 4];
                let b = c.encode_utf8(&mut buf).as_bytes();
                assert!(may_matter(b[0], b[1]), "U+{u:04X}");
            }
        }
    }
}
