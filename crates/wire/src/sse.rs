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

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SseError {
    #[error("SSE event larger than {max} bytes")]
    TooLarge { max: usize },
}

#[derive(Debug)]
pub struct SseDecoder {
    buf: BytesMut,
    current: SseEvent,
    has_fields: bool,
    max_event: usize,
}

impl SseDecoder {
    pub fn new(max_event: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            current: SseEvent::default(),
            has_fields: false,
            max_event,
        }
    }

    /// Feeds bytes; returns the events they completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some((line_end, next)) = find_line_end(&self.buf) {
            let line = self.buf.split_to(next);
            let line = String::from_utf8_lossy(&line[..line_end]).into_owned();
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
        }
        if self.buf.len() + self.current.data.len() > self.max_event {
            self.buf.clear();
            self.current = SseEvent::default();
            return Err(SseError::TooLarge { max: self.max_event });
        }
        Ok(events)
    }

    fn take_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_fields {
                return None;
            }
            self.has_fields = false;
            let mut event = std::mem::take(&mut self.current);
            if event.data.ends_with('\n') {
                event.data.pop();
            }
            return Some(event);
        }
        if line.starts_with(':') {
            return None;
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
            }
            "event" => self.current.event = Some(value.to_owned()),
            "id" => self.current.id = Some(value.to_owned()),
            _ => {} // `retry` and unknown fields are ignored, as the format requires
        }
        None
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
pub fn encode_event(data: &[u8]) -> Bytes {
    let text = String::from_utf8_lossy(data);
    let mut out = String::with_capacity(text.len() + 24);
    out.push_str("event: message\n");
    for line in text.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
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

    #[test]
    fn oversized_event_is_refused() {
        let mut dec = SseDecoder::new(10);
        assert_eq!(
            dec.feed(b"data: 0123456789abcdef\n").unwrap_err(),
            SseError::TooLarge { max: 10 }
        );
    }
}
