//! stdio framing: one JSON message per line.
//!
//! Split on the `\n` byte only — servers emit raw U+2028 inside strings, and a text-mode line
//! splitter that honours Unicode line separators would cut messages in half. One trailing `\r` is
//! stripped. A line longer than `max_len` is reported once and skipped up to its end, so one
//! oversized message cannot make the reader buffer without bound.

use bytes::{Buf, Bytes, BytesMut};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LineError {
    #[error("line longer than {max} bytes; skipped")]
    TooLong { max: usize },
}

#[derive(Debug)]
pub struct LineDecoder {
    max_len: usize,
    /// Inside an oversized line: drop bytes until the next `\n`.
    discarding: bool,
    /// How far `buf` has already been searched for `\n` (avoids rescanning big partial lines).
    scanned: usize,
}

impl LineDecoder {
    pub fn new(max_len: usize) -> Self {
        Self {
            max_len,
            discarding: false,
            scanned: 0,
        }
    }

    /// Takes the next complete line out of `buf`, if there is one. Empty lines are skipped.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, LineError> {
        loop {
            let Some(pos) = buf[self.scanned..].iter().position(|&b| b == b'\n') else {
                self.scanned = buf.len();
                if self.discarding {
                    buf.clear();
                    self.scanned = 0;
                } else if buf.len() > self.max_len {
                    self.discarding = true;
                    buf.clear();
                    self.scanned = 0;
                    return Err(LineError::TooLong { max: self.max_len });
                }
                return Ok(None);
            };
            let end = self.scanned + pos;
            self.scanned = 0;
            if self.discarding {
                buf.advance(end + 1);
                self.discarding = false;
                continue;
            }
            let mut line = buf.split_to(end + 1).freeze();
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(end - 1);
            }
            if line.len() > self.max_len {
                return Err(LineError::TooLong { max: self.max_len });
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(line));
        }
    }
}

/// Frames one message for stdio: its bytes and a `\n`. Messages never contain a raw `\n`
/// (JSON escapes it inside strings), so no escaping is needed; pretty-printed input is compacted.
pub fn encode_line(message: &[u8]) -> Bytes {
    if message.contains(&b'\n') {
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(message) {
            let mut out = value.to_string().into_bytes();
            out.push(b'\n');
            return Bytes::from(out);
        }
    }
    let mut out = Vec::with_capacity(message.len() + 1);
    out.extend_from_slice(message);
    out.push(b'\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[&[u8]], max: usize) -> Vec<Result<String, LineError>> {
        let mut dec = LineDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in input {
            buf.extend_from_slice(chunk);
            loop {
                match dec.decode(&mut buf) {
                    Ok(Some(line)) => out.push(Ok(String::from_utf8(line.to_vec()).unwrap())),
                    Ok(None) => break,
                    Err(e) => out.push(Err(e)),
                }
            }
        }
        out
    }

    #[test]
    fn crlf_is_stripped_once() {
        assert_eq!(
            lines(&[b"{\"a\":1}\r\n{\"b\":2}\n"], 100),
            vec![Ok("{\"a\":1}".into()), Ok("{\"b\":2}".into())]
        );
    }

    #[test]
    fn raw_u2028_does_not_split_a_message() {
        let msg = "{\"t\":\"a\u{2028}b\u{2029}c\"}\n";
        assert_eq!(lines(&[msg.as_bytes()], 100), vec![Ok(msg.trim_end().to_owned())]);
    }

    #[test]
    fn a_line_split_across_reads_is_joined() {
        assert_eq!(lines(&[b"{\"a\":", b"1}", b"\n"], 100), vec![Ok("{\"a\":1}".into())]);
    }

    #[test]
    fn oversized_line_is_reported_once_and_the_next_line_survives() {
        let big = vec![b'x'; 50];
        let out = lines(&[&big, &big, b"\n{\"ok\":1}\n"], 20);
        assert_eq!(out, vec![Err(LineError::TooLong { max: 20 }), Ok("{\"ok\":1}".into())]);
    }

    #[test]
    fn oversized_complete_line_is_reported() {
        let mut input = vec![b'y'; 30];
        input.extend_from_slice(b"\n{}\n");
        assert_eq!(
            lines(&[&input], 20),
            vec![Err(LineError::TooLong { max: 20 }), Ok("{}".into())]
        );
    }

    #[test]
    fn blank_lines_are_skipped() {
        assert_eq!(lines(&[b"\n\r\n  \n{}\n"], 20), vec![Ok("{}".into())]);
    }

    #[test]
    fn encode_compacts_pretty_json() {
        assert_eq!(encode_line(b"{\n  \"a\": 1\n}").as_ref(), b"{\"a\":1}\n");
        assert_eq!(encode_line(b"{\"a\":1}").as_ref(), b"{\"a\":1}\n");
    }
}
