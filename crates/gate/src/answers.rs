//! What comes back (issue 33): the answer to a forwarded `tools/call`, `resources/read` or
//! `prompts/get`, inspected before the agent reads it.
//!
//! Every text the agent may read is looked at (`portcullis-inspect`): each string of the
//! `result` (or of a JSON-RPC `error`: its message reaches the model too) but the fields that are not text for a model (base64 `blob` and `data`, `mimeType`,
//! `type`, `_meta`, and the MRTR fields the gate decides elsewhere). What is found is
//! treated as the policy's `results` say ([`ResultActions`]): hidden characters and escapes
//! stripped, secrets redacted, or the answer passed as it came and flagged. The answer is
//! rewritten only when something is removed; otherwise its bytes go on untouched.
//!
//! A `uri` is read too (the model reads it, and tag characters in it smuggle text as well as
//! anywhere), but never rewritten: it names the resource, and a client that reads a stripped URI
//! back would ask for another one. What it holds is flagged where the policy says strip or
//! redact, and holds the answer where the policy says hold.
//!
//! Whatever is done, the audit keeps an [`AnswerRecord`]: the first texts of the answer (secrets
//! replaced, hidden characters written out), cut at [`AnswerCheck::excerpt_bytes`], and each
//! finding with where it was and what was done. Nothing of the answer is kept before that.

use std::borrow::Cow;

use portcullis_audit::{AnswerFinding, AnswerRecord, FindingLocation};
use portcullis_inspect::{Finding, Kind};
use portcullis_policy::{ResultActions, Treatment};
use portcullis_wire::Message;
use serde_json::Value;

/// Fields of a result that hold no text for the model, or that the gate reads elsewhere.
const NOT_TEXT: [&str; 9] = [
    "_meta",
    "blob",
    "data",
    "mimeType",
    "type",
    "resultType",
    "requestState",
    "inputRequests",
    "nextCursor",
];

/// The default size of an answer's excerpt in the audit.
pub const EXCERPT_BYTES: usize = 4096;

/// How the answer to one forwarded request is inspected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerCheck {
    pub results: ResultActions,
    pub excerpt_bytes: usize,
}

impl Default for AnswerCheck {
    fn default() -> Self {
        AnswerCheck {
            results: ResultActions::default(),
            excerpt_bytes: EXCERPT_BYTES,
        }
    }
}

/// Fields read but never rewritten: they name something the client may ask for again.
const NAMES: [&str; 1] = ["uri"];

/// One text of the answer and what was found in it.
struct Text<'a> {
    /// JSON pointer within `result`.
    path: String,
    text: &'a str,
    findings: Vec<Finding>,
    /// A name ([`NAMES`]): its findings are flagged, never removed.
    name: bool,
}

impl Text<'_> {
    /// What is done with a finding of `kind` in this text.
    fn treatment(&self, kind: Kind, actions: ResultActions) -> Treatment {
        match treatment_of(kind, actions) {
            Treatment::Strip | Treatment::Redact if self.name => Treatment::Flag,
            treatment => treatment,
        }
    }
}

/// The answer as it goes on to the agent, and what the audit keeps of it.
pub struct Treated {
    pub message: Message,
    pub record: AnswerRecord,
    /// Whether a finding's treatment is `hold`: the answer waits for a person.
    pub holds: bool,
}

/// Inspects `answer` and treats it as `check` says. `Err` hands back an answer that is not a
/// result (a message the gateway made) as it came, or, should the answer not be readable whole
/// or a rewrite fail, an error in its place.
pub fn treat(answer: Message, check: &AnswerCheck) -> Result<Treated, Message> {
    // One vectorized UTF-8 check of the whole answer, then a reading that checks no string
    // again: reading bytes, serde_json checks each string with the standard library's check,
    // about 1 ns a byte of text that is not ASCII (a third of the treatment of 1 MiB of Chinese).
    let Ok(json) = simdutf8::basic::from_utf8(answer.bytes()) else {
        return Err(withheld(
            &answer,
            "it could not be read for inspection (it is not UTF-8)",
        ));
    };
    // Read borrowing the answer's bytes: a large text is inspected where it lies, not copied.
    let members = match serde_json::from_str::<Tree<'_>>(json) {
        Ok(Tree::Object(members)) => members,
        Ok(_) => return Err(answer),
        // The strict reader passed it, but past its depth limit it only skips: a number out of
        // range there, or nesting past serde's limit (bad UTF-8 anywhere is caught above). A
        // client that reads such an answer leniently would get every text of it uninspected,
        // so nothing of it goes on.
        Err(e) => return Err(withheld(&answer, &format!("it could not be read for inspection ({e})"))),
    };
    // A JSON-RPC error's message reaches the model as much as a result does (clients show it as
    // the tool's failure), so it is read the same way; its paths are within `error`.
    let Some((root, result)) = members.iter().find_map(|(k, v)| match k.as_ref() {
        "result" => Some(("result", v)),
        "error" => Some(("error", v)),
        _ => None,
    }) else {
        return Err(answer);
    };
    if !matches!(result, Tree::Object(_)) {
        return Err(answer);
    }
    let texts = inspected_texts(result);
    let removed = kinds_removed(check.results);
    let rewrites: Vec<(String, String)> = texts
        .iter()
        .filter(|t| !t.name && t.findings.iter().any(|f| removed.contains(&f.kind)))
        .filter_map(|t| match portcullis_inspect::remove(t.text, &t.findings, &removed) {
            Cow::Owned(clean) => Some((t.path.clone(), clean)),
            Cow::Borrowed(_) => None,
        })
        .collect();
    let holds = texts.iter().any(|t| {
        t.findings
            .iter()
            .any(|f| t.treatment(f.kind, check.results) == Treatment::Hold)
    });
    let record = record_of(&texts, check.results, answer.bytes().len(), check.excerpt_bytes);
    drop(texts);
    drop(members);
    if rewrites.is_empty() {
        return Ok(Treated {
            message: answer,
            record,
            holds,
        });
    }
    // Something is taken out: only now is the answer read whole, to be written again.
    let Ok(mut value) = serde_json::from_str::<Value>(json) else {
        // Cannot happen for an answer just read; fail closed rather than pass what was to go.
        return Err(withheld(&answer, "it could not be read again to be rewritten"));
    };
    if let Some(result) = value.get_mut(root) {
        for (path, clean) in rewrites {
            if let Some(slot) = result.pointer_mut(&path) {
                *slot = Value::String(clean);
            }
        }
    }
    match serde_json::to_vec(&value)
        .ok()
        .and_then(|bytes| Message::parse(bytes).ok())
    {
        Some(message) => Ok(Treated { message, record, holds }),
        // Cannot happen for a value just parsed; fail closed rather than pass what was to go.
        None => Err(withheld(&answer, "it could not be rewritten after inspection")),
    }
}

/// The error that takes the place of an answer the inspection could not finish, saying why.
fn withheld(answer: &Message, why: &str) -> Message {
    Message::error_response(
        answer.id(),
        portcullis_wire::error_code::INTERNAL_ERROR,
        &format!("[portcullis] the answer was withheld: {why}"),
    )
}

/// The kinds of finding taken out of the answer.
fn kinds_removed(actions: ResultActions) -> Vec<Kind> {
    let mut kinds = Vec::with_capacity(3);
    if actions.invisible == Treatment::Strip {
        kinds.push(Kind::Invisible);
    }
    if actions.escapes == Treatment::Strip {
        kinds.push(Kind::Escape);
    }
    if actions.secrets == Treatment::Redact {
        kinds.push(Kind::Secret);
    }
    kinds
}

fn treatment_of(kind: Kind, actions: ResultActions) -> Treatment {
    match kind {
        Kind::Invisible => actions.invisible,
        Kind::Escape => actions.escapes,
        Kind::Secret => actions.secrets,
        Kind::Instruction => actions.instructions,
    }
}

/// Every text of `result` the model may read, in document order, with its findings.
fn inspected_texts<'a>(result: &'a Tree<'a>) -> Vec<Text<'a>> {
    let mut texts = Vec::new();
    walk(result, &mut String::new(), false, &mut texts);
    texts
}

fn walk<'a>(value: &'a Tree<'a>, path: &mut String, name: bool, out: &mut Vec<Text<'a>>) {
    match value {
        Tree::Text(s) => out.push(Text {
            path: path.clone(),
            findings: portcullis_inspect::inspect(s),
            text: s,
            name,
        }),
        Tree::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                walk(item, path, name, out);
                path.truncate(len);
            }
        }
        Tree::Object(members) => {
            for (key, item) in members {
                if NOT_TEXT.contains(&key.as_ref()) {
                    continue;
                }
                let len = path.len();
                path.push('/');
                // JSON pointer escaping: `~` first, then `/`.
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(item, path, NAMES.contains(&key.as_ref()), out);
                path.truncate(len);
            }
        }
        Tree::Other => {}
    }
}

/// A JSON document read for its texts: strings borrow from the bytes when they hold no escape,
/// numbers, booleans and nulls are not kept.
enum Tree<'a> {
    Text(Cow<'a, str>),
    Array(Vec<Tree<'a>>),
    Object(Vec<(Cow<'a, str>, Tree<'a>)>),
    Other,
}

impl<'de> serde::Deserialize<'de> for Tree<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> serde::de::Visitor<'de> for TreeVisitor {
    type Value = Tree<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Tree::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Tree::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Tree::Text(Cow::Owned(v)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Tree::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Tree::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Tree::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Tree::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Tree::Other)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Tree<'de>>()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            members.push((key.0, map.next_value::<Tree<'de>>()?));
        }
        Ok(Tree::Object(members))
    }
}

/// An object key, borrowed when it holds no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_str(TreeVisitor)? {
            Tree::Text(text) => Ok(Key(text)),
            _ => Err(serde::de::Error::custom("an object key")),
        }
    }
}

/// What the audit keeps: the excerpt (texts joined by newlines, each finding but instruction
/// markers written out, secrets as `[redacted]`), and the findings with their marks in it.
fn record_of(texts: &[Text], actions: ResultActions, bytes: usize, budget: usize) -> AnswerRecord {
    let mut excerpt = Excerpt::new(budget);
    let mut findings = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        if i > 0 {
            excerpt.push_raw("\n");
        }
        let marks = excerpt.push_text(t.text, &t.findings);
        for (f, mark) in t.findings.iter().zip(marks) {
            findings.push(AnswerFinding {
                kind: f.kind.as_str().to_owned(),
                action: t.treatment(f.kind, actions).as_str().to_owned(),
                location: FindingLocation {
                    path: t.path.clone(),
                    offset: f.offset,
                    len: f.len,
                },
                what: f.what.to_owned(),
                excerpt: f.excerpt.clone(),
                mark,
            });
        }
    }
    AnswerRecord {
        bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
        excerpt: excerpt.finish(),
        findings,
    }
}

/// The answer's excerpt, built text by text up to a byte budget.
struct Excerpt {
    out: String,
    budget: usize,
    full: bool,
}

impl Excerpt {
    fn new(budget: usize) -> Self {
        Excerpt {
            out: String::new(),
            budget,
            full: false,
        }
    }

    /// Appends what fits of `s` (cut at a character boundary); false once the budget is spent.
    fn push_raw(&mut self, s: &str) -> bool {
        if self.full {
            return false;
        }
        let room = self.budget.saturating_sub(self.out.len());
        if s.len() <= room {
            self.out.push_str(s);
            return true;
        }
        let mut cut = room;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.push_str(&s[..cut]);
        self.full = true;
        false
    }

    /// Appends `text` with its findings written out; the mark of each finding in the excerpt
    /// (instruction markers are marked where their text is, the others where their stand-in is).
    fn push_text(&mut self, text: &str, findings: &[Finding]) -> Vec<Option<(usize, usize)>> {
        let mut marks = vec![None; findings.len()];
        // Offsets in `text` → offsets in the excerpt, at each replaced finding's ends.
        let mut map: Vec<(usize, usize)> = vec![(0, self.out.len())];
        let mut at = 0;
        for (i, f) in findings.iter().enumerate() {
            if f.kind == Kind::Instruction || f.offset < at {
                continue;
            }
            if !self.push_raw(&text[at..f.offset]) {
                return marks;
            }
            let start = self.out.len();
            map.push((f.offset, start));
            let shown = match f.kind {
                Kind::Secret => Cow::Borrowed(portcullis_inspect::REDACTED),
                _ => Cow::Owned(shown(&text[f.offset..f.offset + f.len])),
            };
            if !self.push_raw(&shown) {
                return marks;
            }
            marks[i] = Some((start, self.out.len() - start));
            at = f.offset + f.len;
            map.push((at, self.out.len()));
        }
        self.push_raw(&text[at..]);
        // The mapping is monotonic: a marker beyond what fitted maps past the excerpt's end.
        let mapped = |offset: usize| {
            let k = map.partition_point(|&(o, _)| o <= offset).saturating_sub(1);
            let (o, e) = map[k];
            e + (offset - o)
        };
        for (i, f) in findings.iter().enumerate() {
            if f.kind == Kind::Instruction {
                let (start, end) = (mapped(f.offset), mapped(f.offset + f.len));
                if end <= self.out.len() {
                    marks[i] = Some((start, end - start));
                }
            }
        }
        marks
    }

    fn finish(mut self) -> String {
        if self.full {
            self.out.push('…');
        }
        self.out
    }
}

/// `text` with every character written as `\u{XXXX}` unless it is printable ASCII: what a
/// hidden character or an escape sequence is, for a person.
fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        }
    }
    out
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
