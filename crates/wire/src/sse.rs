//! Server-Sent Events framing (the `text/event-stream` format) for Streamable HTTP and legacy SSE.
//!
//! The decoder is incremental: feed it whatever bytes arrived and it yields complete events.
//! Comment lines (`:` …) are dropped; events with empty data (priming events) are yielded so the
//! caller can see their ids, and skipped by [`SseEvent::is_message`].

use bytes::{Bytes, BytesMut};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

impl SseEvent {
    /// True for events that carry a JSON-RPC message.
    pub fn is_message(&self) -> bool {
        matches!(self.event.as_deref(), None | Some("message")) && !self.data.is_empty()
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SseError {
    #[error("SSE event larger than {max} bytes")]
    TooLarge { max: usize },
}

/// Incremental decoder with a size limit.
///
/// No line and no event's data may be longer than `max_event` bytes, however the stream is cut
/// into chunks. An oversized event is reported once and skipped up to the blank line that ends
/// it, so decoding can go on after it; at most about `max_event` bytes (plus one chunk) are held.
#[derive(Debug)]
pub struct SseDecoder {
    buf: BytesMut,
    current: SseEvent,
    has_fields: bool,
    max_event: usize,
    /// Inside an oversized line: drop it up to its end.
    skip_line: bool,
    /// Inside an oversized event: drop lines up to the blank line that ends it.
    skip_event: bool,
    /// An oversized event met after complete events, which were returned first; the next
    /// [`SseDecoder::feed`] reports it.
    pending: Option<SseError>,
}

impl SseDecoder {
    pub fn new(max_event: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            current: SseEvent::default(),
            has_fields: false,
            max_event,
            skip_line: false,
            skip_event: false,
            pending: None,
        }
    }

    /// Feeds bytes; returns the events they completed. Events completed before an oversized one
    /// are returned first and the error by the next call, so none is lost.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        self.buf.extend_from_slice(chunk);
        if let Some(err) = self.pending.take() {
            return Err(err);
        }
        let mut events = Vec::new();
        loop {
            match self.next_event() {
                Ok(Some(event)) => events.push(event),
                Ok(None) => return Ok(events),
                Err(err) if events.is_empty() => return Err(err),
                Err(err) => {
                    self.pending = Some(err);
                    return Ok(events);
                }
            }
        }
    }

    /// Reads lines until an event completes, the buffer runs out, or an event is too large.
    fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        while let Some((line_end, next)) = find_line_end(&self.buf) {
            let line = self.buf.split_to(next);
            let line = &line[..line_end];
            if std::mem::take(&mut self.skip_line) {
                continue; // the end of an oversized line
            }
            if self.skip_event {
                self.skip_event = !line.is_empty();
                continue;
            }
            if line.len() > self.max_event {
                return Err(self.oversized());
            }
            if let Some(event) = self.take_line(&String::from_utf8_lossy(line))? {
                return Ok(Some(event));
            }
        }
        // An unfinished line: bounded too. A final `\r` may be half of `\r\n`, so it stays.
        let cr = usize::from(self.buf.last() == Some(&b'\r'));
        if self.buf.len() - cr > self.max_event {
            let _ = self.buf.split_to(self.buf.len() - cr);
            self.skip_line = true;
            if !self.skip_event {
                return Err(self.oversized());
            }
        }
        Ok(None)
    }

    /// Drops the event being read and everything up to the blank line that ends it.
    fn oversized(&mut self) -> SseError {
        self.current = SseEvent::default();
        self.has_fields = false;
        self.skip_event = true;
        SseError::TooLarge { max: self.max_event }
    }

    fn take_line(&mut self, line: &str) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            if !self.has_fields {
                return Ok(None);
            }
            self.has_fields = false;
            let mut event = std::mem::take(&mut self.current);
            if event.data.ends_with('\n') {
                event.data.pop();
            }
            return Ok(Some(event));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        self.has_fields = true;
        match field {
            "data" => {
                self.current.data.push_str(value);
                self.current.data.push('\n');
                // The last `\n` is dropped when the event ends.
                if self.current.data.len() - 1 > self.max_event {
                    return Err(self.oversized());
                }
            }
            "event" => self.current.event = Some(value.to_owned()),
            "id" => self.current.id = Some(value.to_owned()),
            _ => {} // `retry` and unknown fields are ignored, as the format requires
        }
        Ok(None)
    }
}

/// Finds the end of the first line (`\n`, `\r\n` or a lone `\r`): (content end, next line start).
fn find_line_end(buf: &[u8]) -> Option<(usize, usize)> {
    let pos = buf.iter().position(|&b| b == b'\n' || b == b'\r')?;
    if buf[pos] == b'\n' {
        return Some((pos, pos + 1));
    }
    match buf.get(pos + 1) {
        Some(b'\n') => Some((pos, pos + 2)),
        Some(_) => Some((pos, pos + 1)),
        None => None, // a `\r` at the end: wait to see whether `\n` follows
    }
}

/// Frames one JSON-RPC message as an SSE `message` event.
///
/// Every line break of the data (`\r\n`, `\n`, or a lone `\r`, which readers also take as the end
/// of a line) starts a new `data:` line, so the reader gets the data back with `\n` in their
/// place; a lone `\r` left in the data would end the line early, and two would end the event and
/// let the rest pass as an event of its own.
pub fn encode_event(data: &[u8]) -> Bytes {
    let text = String::from_utf8_lossy(data);
    let mut out = String::with_capacity(text.len() + 24);
    out.push_str("event: message\n");
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        // A `\r` just before a `\n` belongs to it; any other `\r` is a line break of its own.
        let line = match lines.peek() {
            Some(_) => line.strip_suffix('\r').unwrap_or(line),
            None => line,
        };
        for part in line.split('\r') {
            out.push_str("data: ");
            out.push_str(part);
            out.push('\n');
        }
    }
    out.push('\n');
    Bytes::from(out)
}

/// A comment line, used as a keep-alive.
pub fn encode_comment(text: &str) -> Bytes {
    Bytes::from(format!(": {text}\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&str]) -> Vec<SseEvent> {
        let mut dec = SseDecoder::new(1 << 20);
        chunks.iter().flat_map(|c| dec.feed(c.as_bytes()).unwrap()).collect()
    }

    #[test]
    fn priming_event_comments_and_message() {
        let events = decode_all(&["id: 0\ndata:\n\n: keep-alive\n\nevent: message\ndata: {\"a\":1}\n\n"]);
        assert_eq!(events.len(), 2);
        assert!(!events[0].is_message(), "an empty-data priming event is not a message");
        assert_eq!(events[1].data, "{\"a\":1}");
        assert!(events[1].is_message());
    }

    #[test]
    fn multiline_data_and_crlf_and_split_chunks() {
        let events = decode_all(&["data: {\"a\":\r\n", "data: 1}\r", "\n\r\n"]);
        assert_eq!(
            events,
            vec![SseEvent {
                event: None,
                data: "{\"a\":\n1}".into(),
                id: None
            }]
        );
    }

    #[test]
    fn endpoint_event_of_legacy_sse() {
        let events = decode_all(&["event: endpoint\ndata: /messages?sessionId=abc\n\n"]);
        assert_eq!(events[0].event.as_deref(), Some("endpoint"));
        assert!(!events[0].is_message());
    }

    #[test]
    fn encode_round_trips_through_decode() {
        let encoded = encode_event(b"{\n\"a\": 1\n}");
        let events = decode_all(&[std::str::from_utf8(&encoded).unwrap()]);
        assert_eq!(events[0].data, "{\n\"a\": 1\n}");
    }

    /// Found by fuzzing (sse_decoder): a lone `\r` in the data (JSON whitespace) was copied into
    /// the `data:` line, where the reader takes it as a line end: the message arrived cut short,
    /// and `\r\r` would have let the rest arrive as a second event.
    #[test]
    fn encode_event_breaks_lines_at_a_lone_cr_too() {
        let encoded = encode_event(b"{\"a\":1,\r\"b\":2}\r\r{\"id\":9}\r");
        let events = decode_all(&[std::str::from_utf8(&encoded).unwrap()]);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].data, "{\"a\":1,\n\"b\":2}\n\n{\"id\":9}\n");
    }

    /// Found writing the sse_decoder fuzz target's reference model: the limit was checked only
    /// on what was left buffered after a chunk, so an oversized event that arrived whole in one
    /// chunk was yielded.
    #[test]
    fn an_oversized_event_in_one_chunk_is_refused_and_the_next_one_read() {
        let mut dec = SseDecoder::new(10);
        let err = dec
            .feed(b"data: 0123456789abcdef\ndata: more\n\ndata: ok\n\n")
            .unwrap_err();
        assert_eq!(err, SseError::TooLarge { max: 10 });
        assert_eq!(dec.feed(b"").unwrap()[0].data, "ok");
        let mut dec = SseDecoder::new(10);
        let err = dec.feed(b"data:01234\ndata:56789\n\n").unwrap_err();
        assert_eq!(err, SseError::TooLarge { max: 10 }, "data lines add up");
    }

    /// Found writing the sse_decoder fuzz target's reference model: an error dropped the events
    /// completed before it in the same chunk (a response followed by an oversized notification
    /// lost the response).
    #[test]
    fn events_before_an_oversized_one_are_returned_first() {
        let mut dec = SseDecoder::new(12);
        let events = dec.feed(b"data: first\n\ndata: 0123456789abcdef\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(dec.feed(b"data: next\n\n").unwrap_err(), SseError::TooLarge { max: 12 });
        assert_eq!(dec.feed(b"").unwrap()[0].data, "next");
    }

    /// Found writing the sse_decoder fuzz target's reference model: whether a stream was refused
    /// depended on where it was cut into chunks; an unfinished line now counts alone, as a
    /// finished one does.
    #[test]
    fn the_limit_does_not_depend_on_chunking() {
        let stream = b"data: 0123456789\ndata: 0123456789\n\n";
        let mut whole = SseDecoder::new(21);
        assert_eq!(whole.feed(stream).unwrap()[0].data.len(), 21);
        let mut cut = SseDecoder::new(21);
        assert!(cut.feed(&stream[..30]).unwrap().is_empty());
        assert_eq!(cut.feed(&stream[30..]).unwrap()[0].data.len(), 21);
    }

    #[test]
    fn oversized_event_is_refused() {
        let mut dec = SseDecoder::new(10);
        assert_eq!(
            dec.feed(b"data: 0123456789abcdef\n").unwrap_err(),
            SseError::TooLarge { max: 10 }
        );
    }
}
