//! The cost issue 33 budgets: a 1 KiB ASCII answer (≤ 5 µs) and a 1 MiB answer (≤ 2 ms), in
//! ASCII, in prose of four other scripts, and mixed with emoji sequences on every line.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Plain English prose with JSON-ish punctuation, as a tool result's text.
fn ascii(size: usize) -> String {
    let line = "The file src/main.rs has 120 lines; run `cargo test` to check it. {\"ok\": true, \"n\": 42}\n";
    line.repeat(size / line.len() + 1)[..size].to_owned()
}

/// Real multilingual text with no finding: English, Persian with ZWNJ, Hindi with ZWJ, Hebrew
/// with RLM, Chinese, emoji ZWJ sequences and a flag (what an answer mostly looks like).
fn multilingual(size: usize) -> String {
    let block = concat!(
        "Results for the query, page 3 of 12. The build passed in 4.2 s on main.\n",
        "من می\u{200C}خواهم این فایل را بخوانم. क्\u{200D}ष और हिन्दी पाठ। 中文文本的例子。 ",
        "שלום\u{200F} עולם. Team: 👩\u{200D}💻 👨\u{200D}👩\u{200D}👧 🏳\u{FE0F}\u{200D}🌈 🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}\n",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.\n",
    );
    cut(block, size)
}

fn cut(block: &str, size: usize) -> String {
    let mut s = block.repeat(size / block.len() + 1);
    let mut end = size;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// Prose in one script, as a web page or a document read through a tool answers it: Russian,
/// Chinese, Persian (with the ZWNJ its words are written with) and Hindi. One line each in
/// `benches/prose/` (the gate's answers bench reads them too).
fn prose(script: &str, size: usize) -> String {
    let line = match script {
        "russian" => include_str!("prose/russian.txt"),
        "chinese" => include_str!("prose/chinese.txt"),
        "persian" => include_str!("prose/persian.txt"),
        "hindi" => include_str!("prose/hindi.txt"),
        _ => unreachable!("a script the bench has prose for"),
    };
    cut(line, size)
}

/// Dense with findings (about 11,000 in 1 MiB): English, Persian with ZWNJ, Hindi with ZWJ, Hebrew with RLM, emoji ZWJ sequences, a
/// little colour, one zero-width space and one URL with a password per block.
fn mixed(size: usize) -> String {
    let block = concat!(
        "Results for the query, page 3 of 12. The build passed in 4.2 s on main.\n",
        "من می\u{200C}خواهم این فایل را بخوانم. क्\u{200D}ष और हिन्दी पाठ। ",
        "שלום\u{200F} עולם. Team: 👩\u{200D}💻 👨\u{200D}👩\u{200D}👧 🏳\u{FE0F}\u{200D}🌈\n",
        "\u{1B}[32mok\u{1B}[0m see https://user:hunter2pass@db.example.com/x and pass\u{200B}word.\n",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.\n",
    );
    cut(block, size)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("inspect");
    group.sample_size(20);
    for (name, text) in [
        ("ascii_1KiB", ascii(1024)),
        ("ascii_1MiB", ascii(1 << 20)),
        ("multilingual_1MiB", multilingual(1 << 20)),
        ("hostile_1MiB", mixed(1 << 20)),
        ("russian_1MiB", prose("russian", 1 << 20)),
        ("chinese_1MiB", prose("chinese", 1 << 20)),
        ("persian_1MiB", prose("persian", 1 << 20)),
        ("hindi_1MiB", prose("hindi", 1 << 20)),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| portcullis_inspect::inspect(black_box(&text))));
    }
    let text = multilingual(1 << 20);
    group.bench_function("multilingual_1MiB_strip", |b| {
        let kinds = [portcullis_inspect::Kind::Invisible, portcullis_inspect::Kind::Escape];
        b.iter(|| black_box(portcullis_inspect::strip(black_box(&text), &kinds)));
    });
    group.bench_function("multilingual_1MiB_redact", |b| {
        b.iter(|| black_box(portcullis_inspect::redact_secrets(black_box(&text))));
    });
    let text = mixed(1 << 20);
    group.bench_function("hostile_1MiB_strip", |b| {
        let kinds = [portcullis_inspect::Kind::Invisible, portcullis_inspect::Kind::Escape];
        b.iter(|| black_box(portcullis_inspect::strip(black_box(&text), &kinds)));
    });
    group.bench_function("hostile_1MiB_redact", |b| {
        b.iter(|| black_box(portcullis_inspect::redact_secrets(black_box(&text))));
    });
    let text = ascii(1024);
    group.bench_function("ascii_1KiB_strip_redact", |b| {
        b.iter(|| {
            let kinds = [portcullis_inspect::Kind::Invisible, portcullis_inspect::Kind::Escape];
            black_box(portcullis_inspect::strip(black_box(&text), &kinds));
            black_box(portcullis_inspect::redact_secrets(black_box(&text)));
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
