//! What the gate looks for in an answer before the agent reads it (issue 33): characters that
//! hide or smuggle text, terminal escapes, secrets, and text shaped as instructions to the model.
//!
//! Pure functions over `&str`: no I/O, no async, no other crate of ours. The gate calls
//! [`inspect`] on each text of an answer, then [`strip`] / [`redact_secrets`] (or [`remove`] with
//! the findings it already has) as the policy says; each returns [`Cow::Borrowed`] when nothing
//! changes, so an answer that needs no change is forwarded as its bytes came.
//!
//! # Invisible and deceptive characters ([`Kind::Invisible`], `hidden.rs`)
//!
//! Found: Unicode tag characters (U+E0001, U+E0020–E007F; a run of them is one finding), ZWSP
//! U+200B, ZWNJ U+200C, ZWJ U+200D, word joiner U+2060, the invisible math operators
//! U+2061–2064, a BOM U+FEFF anywhere but offset 0, the bidi embeddings and overrides U+202A–202E
//! (always: they reorder what a person reads, the "Trojan Source" filename trick), the deprecated
//! format controls U+206A–206F, interlinear annotations U+FFF9–FFFB, the Mongolian vowel separator
//! U+180E, and the bidi marks and isolates when the rules below do not let them pass.
//!
//! They pass as they are where real text needs them (a sanitizer that strips them breaks it):
//!
//! - **Subdivision flags**: U+1F3F4 followed by 3 to 7 tag letters or digits and U+E007F CANCEL
//!   TAG (🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland). Longer runs, other tag characters, or tags after anything else are found:
//!   seven lowercase letters is all a flag can smuggle.
//! - **ZWJ in an emoji sequence**: between a pictographic character (optionally followed by
//!   variation selectors or skin-tone modifiers) and another pictographic character (👩‍💻, 👨‍👩‍👧,
//!   🏳️‍🌈). The pictographic set is approximated by the blocks that hold Extended_Pictographic.
//! - **ZWNJ / ZWJ between letters** of a script that writes with them: Arabic (Persian "می‌خواهم"),
//!   Syriac, Mongolian, and each Brahmic block from Devanagari to Sinhala (Hindi "क्‍ष",
//!   Malayalam chillu forms). The character before must be of the script, and the one after of
//!   the same script or the end of the word (whitespace, ASCII punctuation, end of text). A
//!   joiner after an ASCII letter, between two scripts, or before another joiner is found.
//! - **Bidi marks** LRM U+200E, RLM U+200F and ALM U+061C pass in a paragraph (bidi controls end
//!   at a line break or U+2029) that holds a right-to-left letter (Hebrew, Arabic, Syriac, Thaana,
//!   NKo, …); in a paragraph of left-to-right text they do nothing visible and are found.
//! - **Bidi isolates** LRI/RLI/FSI … PDI (U+2066–2069) pass when balanced within a paragraph: they
//!   are what real software wraps user text in (an isolate cannot reorder text outside it, nor the
//!   letters of a left-to-right word inside it). An opener left open at the paragraph's end, or a
//!   PDI with no opener, is found.
//!
//! Judgement calls: the soft hyphen U+00AD passes (a hyphenation hint in real text, shown at a
//! line break) but is folded out before instruction markers are matched, like every format
//! character; variation selectors pass; the format characters that are visible or belong to a
//! script (Arabic number signs U+0600–0605, U+06DD, Syriac U+070F, Kaithi, Egyptian hieroglyph,
//! Duployan and musical format controls) pass. A test checks that these lists cover general
//! category Cf exactly.
//!
//! # Terminal escapes ([`Kind::Escape`], `hidden.rs`)
//!
//! Found, each sequence whole: CSI (`ESC [` parameters, intermediates, final byte; `what` names
//! erase, colour and cursor movement), OSC (`ESC ]` … BEL or ST, ST being `ESC \` or U+009C),
//! with OSC 8 hyperlinks reported with their target in [`Finding::detail`], OSC 52 clipboard
//! writes and window titles named; DCS/SOS/PM/APC strings; other `ESC` sequences; the C1 controls
//! U+0080–U+009F (U+009B CSI and U+009D OSC taken with their sequence); C0 controls other than
//! tab, LF and CR, and DEL. A string sequence with no terminator is found as its two-byte
//! introducer only: without it the rest is inert text, and stripping it does not eat the answer.
//!
//! # Secrets ([`Kind::Secret`], `secret.rs`)
//!
//! PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of the
//! base64 if the answer was cut), AWS access key ids (`AKIA`/`ASIA` + 16 uppercase letters or
//! digits, as a whole word), GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 or more,
//! `github_pat_`), GitLab `glpat-` tokens, Slack `xoxb-`/`xoxp-`/`xoxa-`/`xoxr-`/`xoxs-` tokens
//! and `hooks.slack.com/services/` webhooks, JWTs (three dot-separated base64url segments whose
//! first decodes to a JSON object with `alg`), the password of `scheme://user:password@host`,
//! `Bearer` tokens, and the value of `password=` / `api_key:` / `secret: …` style assignments
//! (8 characters or more, not a `${VAR}` or `***` placeholder). For a URL, a bearer token or an
//! assignment only the value is the finding, so redaction keeps the rest readable.
//!
//! # Instruction markers ([`Kind::Instruction`], `instruction.rs`)
//!
//! A small set, matched case-insensitively with any whitespace between words, never a model call:
//! "ignore/forget/override (all) (the) previous/prior/above … instructions/prompts/rules",
//! "disregard the above/previous", "you are now DAN / in … mode / a(n) … assistant/AI/model/…"
//! ("you are now logged in" is not one), chat template tokens (`<|im_start|>`, `[INST]`,
//! `<<SYS>>`, …), `<system>` tags, "begin system prompt", "new instructions:". They are matched
//! after folding out escapes, format and control characters, and reading tag characters as the
//! ASCII they encode, so "ig\u{200B}nore previous instructions" and a tag-smuggled sentence are
//! found. Instruction markers are flagged, never stripped.
//!
//! # Excerpts
//!
//! Each finding carries an excerpt of at most about 80 characters around it, with every control
//! and format character written as `\u{XXXX}` and every secret in it shown as `[redacted]` (a
//! secret's own excerpt never shows it).

mod excerpt;
mod hidden;
mod instruction;
mod pattern;
mod secret;
mod unicode;

use std::borrow::Cow;

use serde::Serialize;

/// The text that replaces a secret in [`redact_secrets`].
pub const REDACTED: &str = "[redacted]";

/// What a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A character a person does not see, where real text does not need it.
    Invisible,
    /// A terminal escape sequence or control character.
    Escape,
    /// A secret of a well-known shape.
    Secret,
    /// Text shaped as instructions to the model.
    Instruction,
}

impl Kind {
    /// Its name in the audit and the policy's `results` ("invisible", "escape", "secret",
    /// "instruction"), as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Invisible => "invisible",
            Kind::Escape => "escape",
            Kind::Secret => "secret",
            Kind::Instruction => "instruction",
        }
    }
}

/// One thing found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// Byte offset in the text inspected.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
    /// The rule that fired: "tag characters", "bidi override", "OSC 8 link", "AWS access key", …
    pub what: &'static str,
    /// More about it where there is more: an OSC 8 link's target (neutralized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The text around it, neutralized and with secrets redacted.
    pub excerpt: String,
}

/// A finding before its excerpt is written (excerpts need every secret's range).
#[derive(Debug, Clone)]
struct Span {
    kind: Kind,
    offset: usize,
    len: usize,
    what: &'static str,
    detail: Option<String>,
}

impl Span {
    fn new(kind: Kind, offset: usize, len: usize, what: &'static str) -> Self {
        Span {
            kind,
            offset,
            len,
            what,
            detail: None,
        }
    }
}

/// Everything [`inspect`] looks for in `text`, ordered by offset (then kind).
pub fn inspect(text: &str) -> Vec<Finding> {
    let hidden::Scanned { spans: hidden, cuts } = hidden::scan(text);
    let instructions = instruction::find(text, &cuts);
    let secrets = secret::find(text);
    let secret_ranges: Vec<(usize, usize)> = secrets.iter().map(|s| (s.offset, s.len)).collect();
    let mut spans = hidden;
    spans.extend(instructions);
    spans.extend(
        secrets
            .into_iter()
            .map(|s| Span::new(Kind::Secret, s.offset, s.len, s.what)),
    );
    spans.sort_by_key(|s| (s.offset, s.kind as u8));
    spans
        .into_iter()
        .map(|s| Finding {
            excerpt: excerpt::excerpt(text, s.offset, s.len, &secret_ranges),
            kind: s.kind,
            offset: s.offset,
            len: s.len,
            what: s.what,
            detail: s.detail,
        })
        .collect()
}

/// `text` without the invisible characters and escapes of the given kinds ([`Kind::Invisible`],
/// [`Kind::Escape`]; secrets go through [`redact_secrets`], instruction markers are never
/// removed). Borrowed when nothing is removed.
pub fn strip<'a>(text: &'a str, kinds: &[Kind]) -> Cow<'a, str> {
    if !kinds.iter().any(|k| matches!(k, Kind::Invisible | Kind::Escape)) {
        return Cow::Borrowed(text);
    }
    let spans = hidden::scan(text).spans;
    cut(
        text,
        spans
            .iter()
            .filter(|s| kinds.contains(&s.kind))
            .map(|s| (s.offset, s.len)),
        "",
    )
}

/// `text` with each secret replaced by [`REDACTED`]. Borrowed when it holds none.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    cut(text, secret::find(text).iter().map(|s| (s.offset, s.len)), REDACTED)
}

/// `text` with the `findings` of the given kinds applied, as [`inspect`] returned them for this
/// same text: invisible characters and escapes removed, secrets replaced by [`REDACTED`],
/// instruction markers left. Saves the gate a second scan. Borrowed when nothing changes.
pub fn remove<'a>(text: &'a str, findings: &[Finding], kinds: &[Kind]) -> Cow<'a, str> {
    let mut out: Option<String> = None;
    let mut at = 0;
    for f in findings {
        if !kinds.contains(&f.kind) || f.kind == Kind::Instruction || f.offset < at {
            continue;
        }
        let s = out.get_or_insert_with(|| String::with_capacity(text.len()));
        s.push_str(&text[at..f.offset]);
        if f.kind == Kind::Secret {
            s.push_str(REDACTED);
        }
        at = f.offset + f.len;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut s) => {
            s.push_str(&text[at..]);
            Cow::Owned(s)
        }
    }
}

/// `text` with each of the sorted byte `ranges` replaced by `with`.
fn cut<'a>(text: &'a str, ranges: impl Iterator<Item = (usize, usize)>, with: &str) -> Cow<'a, str> {
    let mut out: Option<String> = None;
    let mut at = 0;
    for (offset, len) in ranges {
        if offset < at {
            continue;
        }
        let s = out.get_or_insert_with(|| String::with_capacity(text.len()));
        s.push_str(&text[at..offset]);
        s.push_str(with);
        at = offset + len;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut s) => {
            s.push_str(&text[at..]);
            Cow::Owned(s)
        }
    }
}
