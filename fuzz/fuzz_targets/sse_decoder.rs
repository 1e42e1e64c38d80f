//! The Server-Sent Events decoder and encoder (`portcullis_wire::SseDecoder`, `sse::encode_event`).
//!
//! Checks, for a fuzzer-chosen size limit and cutting of the bytes into reads:
//! - the events and errors equal those of a plain reference reading of the whole input, however
//!   the input is cut (so they are the same for every cutting, and the events completed before an
//!   oversized one are never lost);
//! - no event's data is longer than the limit;
//! - `encode_event` of any text decodes back to one `message` event with that text (line breaks
//!   normalised to `\n`, the only ones SSE data can carry), also between comments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis_fuzz::{chunked, NO_LIMIT};
use portcullis_wire::sse::{encode_comment, encode_event, SseError};
use portcullis_wire::{SseDecoder, SseEvent};

type Item = Result<SseEvent, SseError>;

fuzz_target!(|data: &[u8]| {
    let Some(input) = chunked(data) else { return };
    let items = decode(&input.chunks, input.limit);
    assert_eq!(
        items,
        reference(input.payload, input.limit),
        "cut into {:?}",
        input.chunks
    );
    for event in items.iter().flatten() {
        assert!(event.data.len() <= input.limit, "event longer than the limit");
    }
    check_encode(input.payload);
});

/// Feeds the chunks, then drains: an error found after complete events is reported by the
/// next call, so empty feeds are made until nothing is left.
fn decode(chunks: &[&[u8]], limit: usize) -> Vec<Item> {
    let mut decoder = SseDecoder::new(limit);
    let mut out = Vec::new();
    let push = |result: Result<Vec<SseEvent>, SseError>, out: &mut Vec<Item>| match result {
        Ok(events) => {
            let done = events.is_empty();
            out.extend(events.into_iter().map(Ok));
            done
        }
        Err(err) => {
            out.push(Err(err));
            false
        }
    };
    for chunk in chunks {
        push(decoder.feed(chunk), &mut out);
    }
    for _ in 0..=chunks.iter().map(|c| c.len()).sum::<usize>() + 2 {
        if push(decoder.feed(b""), &mut out) {
            return out;
        }
    }
    panic!("the decoder did not settle on empty feeds");
}

/// The decoder's contract, read off the whole input at once. Lines end at `\r\n`, `\r` or `\n`
/// (a final `\r` may be half of `\r\n`, so its line is unfinished). A line or an event's data
/// longer than the limit is one error; the rest of that event, up to the blank line that ends
/// it, is dropped. An unfinished last line is an error already when it is certainly too long.
fn reference(payload: &[u8], limit: usize) -> Vec<Item> {
    let (lines, tail) = split_lines(payload);
    let mut out = Vec::new();
    let mut event = SseEvent::default();
    let mut has_fields = false;
    let mut skipping = false;
    let too_large = || SseError::TooLarge { max: limit };
    for line in lines {
        if skipping {
            skipping = !line.is_empty();
            continue;
        }
        if line.len() > limit {
            out.push(Err(too_large()));
            (event, has_fields, skipping) = (SseEvent::default(), false, true);
            continue;
        }
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            if has_fields {
                let mut done = std::mem::take(&mut event);
                if done.data.ends_with('\n') {
                    done.data.pop();
                }
                out.push(Ok(done));
                has_fields = false;
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*line, ""),
        };
        has_fields = true;
        match field {
            "data" => {
                event.data.push_str(value);
                event.data.push('\n');
                if event.data.len() - 1 > limit {
                    out.push(Err(too_large()));
                    (event, has_fields, skipping) = (SseEvent::default(), false, true);
                }
            }
            "event" => event.event = Some(value.to_owned()),
            "id" => event.id = Some(value.to_owned()),
            _ => {}
        }
    }
    if !skipping && tail.strip_suffix(b"\r").unwrap_or(tail).len() > limit {
        out.push(Err(too_large()));
    }
    out
}

/// Complete lines (without their ends) and the unfinished rest.
fn split_lines(bytes: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&bytes[start..i]);
                start = i + 1;
            }
            b'\r' if i + 1 == bytes.len() => break,
            b'\r' => {
                lines.push(&bytes[start..i]);
                if bytes[i + 1] == b'\n' {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    (lines, &bytes[start..])
}

fn check_encode(payload: &[u8]) {
    let Ok(text) = std::str::from_utf8(payload) else { return };
    let mut stream = encode_comment("keep-alive").to_vec();
    stream.extend_from_slice(&encode_event(payload));
    stream.extend_from_slice(&encode_comment("bye"));
    let items = decode(&[&stream], NO_LIMIT);
    let expected = SseEvent {
        event: Some("message".to_owned()),
        data: text.replace("\r\n", "\n").replace('\r', "\n"),
        id: None,
    };
    assert_eq!(items, vec![Ok(expected)], "encode_event round trip");
}
