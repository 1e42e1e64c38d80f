//! Where things are in a JSON text: the byte spans of an object's members, found by a small
//! scanner, so an edit can change one member's bytes and leave every other byte as it was.
//!
//! The text was already parsed by the strict reader (`load::parse_document`) before it is
//! scanned, so the scanner only has to find boundaries, not judge the grammar; anything it does
//! not expect is still an error, never a guess.

use std::ops::Range;

/// An object's members as spans of the text.
#[derive(Debug)]
pub(super) struct Object {
    /// Byte offset of `{`.
    pub open: usize,
    /// Byte offset of the matching `}`.
    pub close: usize,
    pub members: Vec<Member>,
}

#[derive(Debug)]
pub(super) struct Member {
    /// The key, unescaped.
    pub key: String,
    /// The key's span, quotes included.
    pub key_span: Range<usize>,
    /// The value's span.
    pub value: Range<usize>,
}

#[derive(Debug, thiserror::Error)]
#[error("unexpected text at byte {0}")]
pub(super) struct ScanError(pub usize);

impl Object {
    pub(super) fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// The object whose `{` is the first non-blank byte at or after `at`.
pub(super) fn object_at(text: &str, at: usize) -> Result<Object, ScanError> {
    let bytes = text.as_bytes();
    let open = skip_blank(bytes, at);
    expect(bytes, open, b'{')?;
    let mut members = Vec::new();
    let mut pos = skip_blank(bytes, open + 1);
    if bytes.get(pos) == Some(&b'}') {
        return Ok(Object {
            open,
            close: pos,
            members,
        });
    }
    loop {
        let key_end = string_end(bytes, pos)?;
        let key = serde_json::from_str(&text[pos..key_end]).map_err(|_| ScanError(pos))?;
        let colon = skip_blank(bytes, key_end);
        expect(bytes, colon, b':')?;
        let value_start = skip_blank(bytes, colon + 1);
        let value_end = value_end(bytes, value_start)?;
        members.push(Member {
            key,
            key_span: pos..key_end,
            value: value_start..value_end,
        });
        pos = skip_blank(bytes, value_end);
        match bytes.get(pos) {
            Some(b',') => pos = skip_blank(bytes, pos + 1),
            Some(b'}') => {
                return Ok(Object {
                    open,
                    close: pos,
                    members,
                })
            }
            _ => return Err(ScanError(pos)),
        }
    }
}

fn expect(bytes: &[u8], at: usize, byte: u8) -> Result<(), ScanError> {
    if bytes.get(at) == Some(&byte) {
        Ok(())
    } else {
        Err(ScanError(at))
    }
}

/// JSON's insignificant whitespace: space, tab, LF, CR.
fn skip_blank(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The offset just past the string that opens at `at`.
fn string_end(bytes: &[u8], at: usize) -> Result<usize, ScanError> {
    expect(bytes, at, b'"')?;
    let mut pos = at + 1;
    loop {
        match bytes.get(pos) {
            Some(b'"') => return Ok(pos + 1),
            Some(b'\\') => pos += 2,
            Some(_) => pos += 1,
            None => return Err(ScanError(at)),
        }
    }
}

/// The offset just past the value that starts at `at`.
fn value_end(bytes: &[u8], at: usize) -> Result<usize, ScanError> {
    match bytes.get(at) {
        Some(b'"') => string_end(bytes, at),
        Some(b'{' | b'[') => container_end(bytes, at),
        Some(_) => {
            let mut pos = at;
            while matches!(bytes.get(pos), Some(b) if !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                pos += 1;
            }
            if pos == at {
                Err(ScanError(at))
            } else {
                Ok(pos)
            }
        }
        None => Err(ScanError(at)),
    }
}

/// The offset just past the object or array that opens at `at`, strings skipped whole.
fn container_end(bytes: &[u8], at: usize) -> Result<usize, ScanError> {
    let mut depth = 0usize;
    let mut pos = at;
    loop {
        match bytes.get(pos) {
            Some(b'"') => {
                pos = string_end(bytes, pos)?;
                continue;
            }
            Some(b'{' | b'[') => depth += 1,
            Some(b'}' | b']') => {
                depth -= 1;
                if depth == 0 {
                    return Ok(pos + 1);
                }
            }
            Some(_) => {}
            None => return Err(ScanError(at)),
        }
        pos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_members_and_their_spans() {
        let text = r#" { "a" : [1, "]}", {"x": {}}], "b\"c": "}" ,"d":-1.5e3 } "#;
        let object = object_at(text, 0).unwrap();
        let keys: Vec<_> = object.members.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["a", "b\"c", "d"]);
        let spans: Vec<_> = object.members.iter().map(|m| &text[m.value.clone()]).collect();
        assert_eq!(spans, [r#"[1, "]}", {"x": {}}]"#, r#""}""#, "-1.5e3"]);
        assert_eq!(&text[object.close..=object.close], "}");
    }

    #[test]
    fn an_empty_object_and_bad_text() {
        let object = object_at("{ \r\n }", 0).unwrap();
        assert!(object.members.is_empty());
        assert_eq!(object.close, 5);
        assert!(object_at("[]", 0).is_err());
        assert!(object_at(r#"{"a" 1}"#, 0).is_err());
        assert!(object_at(r#"{"a": "#, 0).is_err());
    }
}
