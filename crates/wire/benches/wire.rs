//! The per-message wire work of the gateway: parse a JSON-RPC message (envelope only, bytes
//! kept), read `tools/call` params, digest the arguments, frame and unframe SSE and stdio lines.
//!
//! Every forwarded `tools/call` pays roughly: one `Message::parse` of the request, one
//! `params::<ToolCallParams>()`, one keyed `ArgumentDigester::digest` (audit row), one `Message::parse` of
//! the response, and one `sse::encode_event` or line encode on the way back.

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use portcullis_wire::codec::encode_line;
use portcullis_wire::message::ToolCallParams;
use portcullis_wire::{canonical, sse, LineDecoder, Message, SseDecoder};
use serde_json::Value;

const CALL: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello from the benchmark","path":"/tmp/notes.txt","opts":{"force":false,"size":512}},"_meta":{"progressToken":7}}}"#;

fn response(text_len: usize) -> String {
    let text = "x".repeat(text_len);
    format!(r#"{{"result":{{"content":[{{"type":"text","text":"Echo: {text}"}}]}},"jsonrpc":"2.0","id":42}}"#)
}

fn bench(c: &mut Criterion) {
    let call = Bytes::from_static(CALL.as_bytes());
    let small = Bytes::from(response(32));
    let large = Bytes::from(response(16 * 1024));

    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse_tools_call", |b| {
        b.iter(|| Message::parse(black_box(call.clone())).expect("valid"));
    });
    g.bench_function("parse_response_small", |b| {
        b.iter(|| Message::parse(black_box(small.clone())).expect("valid"));
    });
    g.bench_function("parse_response_16k", |b| {
        b.iter(|| Message::parse(black_box(large.clone())).expect("valid"));
    });
    let msg = Message::parse(call.clone()).expect("valid");
    g.bench_function("tools_call_params", |b| {
        b.iter(|| black_box(&msg).params::<ToolCallParams>().expect("valid"));
    });
    let args: Value = serde_json::from_slice(&msg.arguments().expect("arguments")).expect("valid");
    let digester = canonical::ArgumentDigester::new([7; canonical::ARGUMENTS_KEY_LEN]);
    g.bench_function("arguments_digest", |b| b.iter(|| digester.digest(black_box(&args))));
    g.bench_function("sse_encode_small", |b| b.iter(|| sse::encode_event(black_box(&small))));
    g.bench_function("sse_encode_16k", |b| b.iter(|| sse::encode_event(black_box(&large))));
    g.bench_function("line_encode_small", |b| b.iter(|| encode_line(black_box(&small))));
    let framed = sse::encode_event(&small);
    g.bench_function("sse_decode_small", |b| {
        b.iter(|| {
            let mut dec = SseDecoder::new(1 << 20);
            dec.feed(black_box(&framed)).expect("valid")
        });
    });
    let line = encode_line(&small);
    g.bench_function("line_decode_small", |b| {
        b.iter(|| {
            let mut dec = LineDecoder::new(1 << 20);
            let mut buf = BytesMut::from(&line[..]);
            dec.decode(black_box(&mut buf)).expect("valid")
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
