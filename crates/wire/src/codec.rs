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
                } else if unfinished_len(buf) > self.max_len {
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
            let after = end + 1;
            release_large(buf, after);
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

/// Length of an unfinished line as far as it is known: a final `\r` may be the start of the
/// `\r\n` that ends it, and is not part of the line then.
/// What a connection's line buffer starts with: a few typical messages. It grows for larger
/// ones (and gives a large line's allocation up with it, [`KEEP_CAPACITY`]). Small, because
/// every session has a few such buffers: at 64 KiB each, 200 sessions at once took ~40 MiB of
/// malloc arenas that stayed mapped after they ended.
pub const FIRST_CAPACITY: usize = 8 * 1024;

/// The room [`make_room`] leaves for the next read: a few typical messages.
pub const READ_ROOM: usize = 4 * 1024;

/// Makes at least [`READ_ROOM`] bytes of room in `buf` before a read into it. Lines are split off
/// its front, so its spare room shrinks with every one, and a read into the few bytes left gets
/// part of the next message: a second read, on the path of every call. `reserve` first takes
/// back the front the lines left, moving only the unfinished line's bytes.
pub fn make_room(buf: &mut BytesMut) {
    if buf.capacity() - buf.len() < READ_ROOM {
        buf.reserve(READ_ROOM);
    }
}

/// A buffer that grew past this for one large line gets a fresh allocation once the line is
/// taken out: else the rest of the buffer keeps the line's allocation (they share it) and, once
/// the message is dropped, keeps its capacity for as long as the connection lives.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// `taken` bytes were just split off `buf` as a line.
fn release_large(buf: &mut BytesMut, taken: usize) {
    if taken + buf.capacity() <= KEEP_CAPACITY {
        return;
    }
    let rest = std::mem::take(buf);
    buf.reserve(rest.len().max(FIRST_CAPACITY));
    buf.extend_from_slice(&rest);
}

/// Whether a line writer may write `message` as it is and a `\n` after it, instead of copying
/// it into a framed line: it is large (a copy costs a 15 MiB call another 15 MiB) and holds no
/// raw `\n` or `\r` for [`encode_line`] to replace.
pub fn is_shareable_line(message: &[u8]) -> bool {
    message.len() > KEEP_CAPACITY && !message.iter().any(|&b| b == b'\n' || b == b'\r')
}

/// A message ready for a line writer: a cheap clone of `message` when [`is_shareable_line`]
/// (the writer then writes a `\n` after it, see [`needs_newline`]), else the [`encode_line`]
/// copy, newline included, so the writer makes one write of a small message.
pub fn encode_line_shared(message: &Bytes) -> Bytes {
    if is_shareable_line(message) {
        message.clone()
    } else {
        encode_line(message)
    }
}

/// Whether a frame from [`encode_line_shared`] still needs its `\n` written after it.
pub fn needs_newline(frame: &[u8]) -> bool {
    frame.last() != Some(&b'\n')
}

fn unfinished_len(buf: &[u8]) -> usize {
    buf.len() - usize::from(buf.last() == Some(&b'\r'))
}

/// Frames one message for stdio: its bytes and a `\n`.
///
/// A raw `\n` or `\r` inside a message would end the line early at the reader (text-mode readers
/// split at `\r` too) and make the rest a message of its own, one the gate never saw. In valid JSON
/// they can only be whitespace, since strings escape them, so each becomes a space: pretty-printed
/// JSON stays the same JSON byte for byte otherwise, and a message the gateway classified but
/// could not read whole (a number beyond `f64`, say) cannot smuggle a second line through.
pub fn encode_line(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 1);
    encode_line_into(&mut out, message);
    Bytes::from(out)
}

/// [`encode_line`] appended to `out`: a writer that frames many messages into one reused buffer
/// allocates nothing per message.
pub fn encode_line_into(out: &mut Vec<u8>, message: &[u8]) {
    if message.iter().any(|&b| b == b'\n' || b == b'\r') {
        out.extend(message.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }));
    } else {
        out.extend_from_slice(message);
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_line_leaves_the_buffer_small_and_the_rest_in_it() {
        let mut dec = LineDecoder::new(8 * 1024 * 1024);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&vec![b'x'; 3 * 1024 * 1024]);
        buf.extend_from_slice(b"\n{\"next\"");
        let line = dec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(line.len(), 3 * 1024 * 1024);
        assert_eq!(&buf[..], b"{\"next\"");
        assert!(buf.capacity() < KEEP_CAPACITY, "capacity {} kept", buf.capacity());
    }

    #[test]
    fn reads_always_have_room_for_a_message_and_the_buffer_is_reused() {
        let mut buf = BytesMut::with_capacity(FIRST_CAPACITY);
        let start = buf.as_ptr() as usize;
        let mut decoder = LineDecoder::new(1 << 20);
        let message = [b'x'; 150];
        for i in 0..1_000 {
            make_room(&mut buf);
            assert!(
                buf.capacity() - buf.len() >= READ_ROOM,
                "message {i}: room for a whole read"
            );
            // What a read brings: the rest of one message, and the start of the next.
            buf.extend_from_slice(&message[75..]);
            buf.extend_from_slice(b"\n");
            buf.extend_from_slice(&message[..75]);
            let line = decoder.decode(&mut buf).unwrap();
            if i > 0 {
                assert_eq!(line.as_deref(), Some(&message[..]));
            }
            assert_eq!(buf.len(), 75, "the unfinished message stays");
        }
        assert!(
            buf.capacity() <= FIRST_CAPACITY,
            "the consumed front is taken back, the buffer does not grow: {}",
            buf.capacity()
        );
        assert!(
            (start..start + FIRST_CAPACITY).contains(&(buf.as_ptr() as usize)),
            "still the first allocation"
        );
    }

    #[test]
    fn a_large_message_is_framed_without_a_copy() {
        let large = Bytes::from(vec![b'y'; KEEP_CAPACITY + 1]);
        let frame = encode_line_shared(&large);
        assert_eq!(frame.as_ptr(), large.as_ptr(), "the same bytes");
        assert!(needs_newline(&frame));
        let small = Bytes::from_static(b"{}");
        assert_eq!(&encode_line_shared(&small)[..], b"{}\n");
        assert!(!needs_newline(&encode_line_shared(&small)));
        let mut raw_newline = vec![b'z'; KEEP_CAPACITY + 1];
        raw_newline[5] = b'\n';
        let framed = encode_line_shared(&Bytes::from(raw_newline));
        assert_eq!((framed[5], framed.last()), (b' ', Some(&b'\n')), "still made one line");
    }

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
    fn encode_blanks_out_line_breaks_of_pretty_json() {
        assert_eq!(encode_line(b"{\r\n  \"a\": 1\n}").as_ref(), b"{    \"a\": 1 }\n");
        assert_eq!(encode_line(b"{\"a\":1}").as_ref(), b"{\"a\":1}\n");
    }

    /// Found by fuzzing (line_codec): a message serde_json cannot read as a value (`1e400` is
    /// beyond f64) was written as it came, raw newlines included, so the server read the part
    /// after a newline as a request of its own: a `tools/call` the gate never saw.
    #[test]
    fn a_message_with_raw_newlines_is_never_split_into_two_lines() {
        let smuggler = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":1e400,"x":["#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vm_delete"}}"#,
            "\r\n]}}"
        );
        // The strict reading refuses the number (readers disagree: Python reads infinity)…
        assert!(crate::Message::parse(smuggler).is_err());
        // …and the framing alone still never splits it.
        let framed = encode_line(smuggler.as_bytes());
        let out = lines(&[&framed], 1 << 20);
        assert_eq!(out.len(), 1, "one message in, one line out: {out:?}");
    }

    /// Found by fuzzing (line_codec): a line of exactly `max` bytes whose `\r\n` arrived in two
    /// reads was refused as too long, because the `\r` was counted while the `\n` was missing.
    #[test]
    fn a_full_length_line_with_crlf_split_across_reads_is_kept() {
        assert_eq!(lines(&[b"12345678\r", b"\n"], 8), vec![Ok("12345678".into())]);
        assert_eq!(
            lines(&[b"12345678\r", b"9\n{}\n"], 8),
            vec![Err(LineError::TooLong { max: 8 }), Ok("{}".into())]
        );
    }
}
