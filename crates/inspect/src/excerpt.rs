//! Excerpts shown to a person: a little text around a finding, with nothing hidden and no secret.

use crate::unicode::format_control;
use crate::REDACTED;

/// Characters of context before and after a finding, and of the finding itself.
const BEFORE: usize = 24;
const AFTER: usize = 16;
const BODY: usize = 40;

/// Whether `c` is written as `\u{XXXX}` in an excerpt: controls and format characters.
fn is_shown_escaped(c: char) -> bool {
    c.is_control() || format_control(c).is_some()
}

/// `text` with every control and format character written as `\u{XXXX}`, cut at `max` characters.
pub(crate) fn neutralize(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        push_char(&mut out, c);
    }
    out
}

fn push_char(out: &mut String, c: char) {
    if is_shown_escaped(c) {
        out.push_str(&format!("\\u{{{:04X}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// The excerpt of `text[offset..offset + len]`: up to `BEFORE` characters before it, `BODY` of
/// it and `AFTER` after, neutralized, each byte range of `secrets` (sorted) shown as [redacted].
pub(crate) fn excerpt(text: &str, offset: usize, len: usize, secrets: &[(usize, usize)]) -> String {
    let start = text[..offset]
        .char_indices()
        .rev()
        .take(BEFORE)
        .last()
        .map_or(offset, |(i, _)| i);
    let end = offset + len;
    let after = text[end..]
        .char_indices()
        .nth(AFTER)
        .map_or(text.len(), |(i, _)| end + i);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut body_chars = 0;
    let mut cut = false;
    let mut i = start;
    while i < after {
        // The first secret not ending before `i` (they are sorted and do not overlap).
        let k = secrets.partition_point(|&(s, l)| s + l <= i);
        if let Some(&(s, l)) = secrets.get(k).filter(|&&(s, _)| s <= i) {
            out.push_str(REDACTED);
            i = s + l;
            continue;
        }
        let Some(c) = text[i..].chars().next() else { break };
        if (offset..end).contains(&i) {
            body_chars += 1;
            if body_chars > BODY {
                if !cut {
                    out.push('…');
                    cut = true;
                }
                i += c.len_utf8();
                continue;
            }
        }
        push_char(&mut out, c);
        i += c.len_utf8();
    }
    if after < text.len() {
        out.push('…');
    }
    out
}
