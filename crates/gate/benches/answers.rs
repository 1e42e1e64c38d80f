//! What inspecting an answer costs the gate (issue 33): `answers::treat` on a `tools/call` result
//! as the server sent it — read, every text inspected, the audit record built, and the answer
//! forwarded as its bytes came (nothing to strip) or rewritten (something to strip).
//!
//! `cargo bench -p portcullis-gate --bench answers`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use portcullis_gate::answers::{treat, AnswerCheck};
use portcullis_wire::Message;
use serde_json::json;

fn answer(text: &str) -> Message {
    let value = json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}]}});
    Message::parse(serde_json::to_vec(&value).expect("serializes")).expect("a response")
}

fn ascii(size: usize) -> String {
    let line = "The file src/main.rs has 120 lines; run cargo test to check it. ok: true, n: 42\n";
    line.repeat(size / line.len() + 1)[..size].to_owned()
}

/// A line of prose in another script, from the inspector's bench, repeated to `size` bytes.
fn prose(line: &str, size: usize) -> String {
    let mut text = line.repeat(size / line.len() + 1);
    let mut end = size;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("answers");
    group.sample_size(20);
    let check = AnswerCheck::default();
    for (name, text) in [
        ("ascii_1KiB", ascii(1024)),
        ("ascii_1MiB", ascii(1 << 20)),
        ("zero_width_1KiB", format!("{}\u{200B}", ascii(1021))),
        (
            "chinese_1MiB",
            prose(include_str!("../../inspect/benches/prose/chinese.txt"), 1 << 20),
        ),
        (
            "persian_1MiB",
            prose(include_str!("../../inspect/benches/prose/persian.txt"), 1 << 20),
        ),
        (
            "hindi_1MiB",
            prose(include_str!("../../inspect/benches/prose/hindi.txt"), 1 << 20),
        ),
    ] {
        let message = answer(&text);
        group.throughput(Throughput::Bytes(message.bytes().len() as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || message.clone(),
                |m| black_box(treat(m, &check).ok()),
                criterion::BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
