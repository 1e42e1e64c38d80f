//! The stdio line codec (`portcullis_wire::LineDecoder`, `codec::encode_line`).
//!
//! Checks, for a fuzzer-chosen size limit and cutting of the bytes into reads:
//! - the frames and errors equal those of a plain reference reading of the whole input, however
//!   the input is cut (so they are the same for every cutting);
//! - no frame is longer than the limit, contains `\n` or is blank;
//! - `encode_line` makes exactly one line, which decodes back to the message with its raw line
//!   breaks (only ever whitespace in JSON) turned into spaces, so JSON stays the same JSON.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use portcullis_fuzz::{chunked, NO_LIMIT};
use portcullis_wire::codec::encode_line;
use portcullis_wire::{LineDecoder, LineError};

type Frame = Result<Vec<u8>, LineError>;

fuzz_target!(|data: &[u8]| {
    let Some(input) = chunked(data) else { return };
    let frames = decode(&input.chunks, input.limit);
    assert_eq!(
        frames,
        reference(input.payload, input.limit),
        "cut into {:?}",
        input.chunks
    );
    for frame in frames.iter().flatten() {
        assert!(frame.len() <= input.limit, "frame longer than the limit");
        assert!(!frame.contains(&b'\n'), "frame holds a newline");
        assert!(!frame.iter().all(u8::is_ascii_whitespace), "blank frame");
    }
    check_encode(input.payload);
});

fn decode(chunks: &[&[u8]], limit: usize) -> Vec<Frame> {
    let mut decoder = LineDecoder::new(limit);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(line)) => out.push(Ok(line.to_vec())),
                Ok(None) => break,
                Err(err) => out.push(Err(err)),
            }
        }
    }
    out
}

/// The codec's contract, read off the whole input at once: lines end at `\n`, one `\r` before it
/// is dropped, blank lines are skipped, a line longer than the limit is one error. The last,
/// unfinished line is an error already when it is certainly too long, whatever follows.
fn reference(payload: &[u8], limit: usize) -> Vec<Frame> {
    let mut lines: Vec<&[u8]> = payload.split(|&b| b == b'\n').collect();
    let tail = lines.pop().unwrap_or_default();
    let mut out = Vec::new();
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > limit {
            out.push(Err(LineError::TooLong { max: limit }));
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(Ok(line.to_vec()));
        }
    }
    // A trailing `\r` may be the first half of `\r\n`: it does not count yet.
    if tail.strip_suffix(b"\r").unwrap_or(tail).len() > limit {
        out.push(Err(LineError::TooLong { max: limit }));
    }
    out
}

fn check_encode(message: &[u8]) {
    let encoded = encode_line(message);
    assert_eq!(encoded.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
    assert_eq!(encoded.last(), Some(&b'\n'));
    let line = &encoded[..encoded.len() - 1];
    assert!(
        !line.contains(&b'\r'),
        "no \\r left to end the line early for text-mode readers"
    );
    let blanked: Vec<u8> = message
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect();
    assert_eq!(line, blanked, "line breaks become spaces, every other byte stays");
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(message) {
        let again: serde_json::Value = serde_json::from_slice(line).expect("framed JSON parses");
        assert_eq!(value, again, "the same JSON");
    }
    let expected: Vec<Frame> = reference(&encoded, NO_LIMIT);
    assert_eq!(decode(&[&encoded], NO_LIMIT), expected);
    assert!(expected.len() <= 1);
}
