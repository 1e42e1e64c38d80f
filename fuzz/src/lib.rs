//! Helpers shared by the fuzz targets.
//!
//! The stream targets (`line_codec`, `sse_decoder`) read their input as a small header followed by
//! the payload, so that the fuzzer chooses the size limit and where the payload is cut into reads:
//!
//! ```text
//! byte 0      size limit: 0 means 1 MiB (never reached), 1..=255 that many bytes
//! byte 1      number of cuts, modulo 17
//! 2 per cut   cut offsets, u16 little-endian, modulo payload length + 1
//! the rest    the payload
//! ```
//!
//! The seed corpus (`fuzz/make_corpus.py`) writes files in this layout.

/// Limit, chunks (in order, together exactly the payload) and the payload itself.
pub struct Chunked<'a> {
    pub limit: usize,
    pub chunks: Vec<&'a [u8]>,
    pub payload: &'a [u8],
}

/// The limit used when the header byte is 0: larger than any input libFuzzer makes here.
pub const NO_LIMIT: usize = 1 << 20;

pub fn chunked(data: &[u8]) -> Option<Chunked<'_>> {
    let (&limit, rest) = data.split_first()?;
    let (&cuts, mut rest) = rest.split_first()?;
    let mut offsets = Vec::new();
    for _ in 0..cuts % 17 {
        let Some((pair, tail)) = rest.split_first_chunk::<2>() else {
            break;
        };
        offsets.push(usize::from(u16::from_le_bytes(*pair)));
        rest = tail;
    }
    let payload = rest;
    let mut offsets: Vec<usize> = offsets.into_iter().map(|o| o % (payload.len() + 1)).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for end in offsets.into_iter().chain([payload.len()]) {
        chunks.push(&payload[start..end]);
        start = end;
    }
    let limit = if limit == 0 { NO_LIMIT } else { usize::from(limit) };
    Some(Chunked { limit, chunks, payload })
}

/// JSON equality that forgives the last bits of a float: serde_json (without its
/// `float_roundtrip` feature) may read back a printed float one unit in the last place off.
pub fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x == y => true,
            (Some(x), Some(y)) => (x - y).abs() <= f64::EPSILON * 4.0 * x.abs().max(y.abs()),
            _ => false,
        },
        (Value::Array(xs), Value::Array(ys)) => xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_json(x, y)),
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|((kx, x), (ky, y))| kx == ky && same_json(x, y))
        }
        _ => a == b,
    }
}
