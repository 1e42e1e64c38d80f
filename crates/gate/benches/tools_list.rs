//! A 20,000-tool `tools/list` page on its way back through the gateway (the hostile-input e2e
//! test's "many" server): the strict read every message gets, then the hidden-tool filter with
//! what it learns (tool catalog, pins).
//!
//! `cargo bench -p portcullis-gateway --bench tools_list`

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_gate::pins::PinStore;
use portcullis_gate::tool_catalog::ToolCatalog;
use portcullis_gate::tools_filter;
use portcullis_policy::Policy;
use portcullis_wire::Message;

const TOOLS: usize = 20_000;

/// The page `tests/e2e/peers/hostile_server.py` answers with `HOSTILE_TOOLS=20000`.
fn page() -> Bytes {
    let tools: Vec<serde_json::Value> = (0..TOOLS)
        .map(|i| {
            serde_json::json!({
                "name": format!("tool_{i:05}"),
                "description": format!("generated tool number {i} {}", "x".repeat(64)),
                "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            })
        })
        .collect();
    let msg = serde_json::json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": tools}});
    Bytes::from(serde_json::to_vec(&msg).expect("json"))
}

fn bench(c: &mut Criterion) {
    let raw = page();
    let msg = Message::parse(raw.clone()).expect("valid");
    let hiding =
        Policy::from_json_str(r#"{"version":"1","default":"allow","hide":["tool_00007"]}"#, "bench").expect("policy");
    let none_hidden =
        Policy::from_json_str(r#"{"version":"1","default":"allow","hide":["nothing_*"]}"#, "bench").expect("policy");
    let dir = tempfile::tempdir().expect("tempdir");
    let pins = PinStore::open(dir.path()).expect("pins");
    let catalog = ToolCatalog::default();
    let learn = tools_filter::Learn {
        server: "many",
        session: "bench",
        catalog: &catalog,
        pins: &pins,
    };
    // The first sight pins every tool (and writes the file); the bench measures the lists after.
    black_box(tools_filter::filter(msg.clone(), Some(&hiding), &learn));

    let mut g = c.benchmark_group("tools_list_20k");
    g.sample_size(10);
    g.bench_function("strict_read", |b| {
        b.iter(|| Message::parse(black_box(raw.clone())).expect("valid"));
    });
    let value = msg.to_value().expect("value");
    let tools = value["result"]["tools"].as_array().expect("tools").clone();
    g.bench_function("part_to_value", |b| {
        b.iter(|| black_box(&msg).to_value().expect("value"));
    });
    g.bench_function("part_catalog_learn", |b| {
        b.iter(|| catalog.learn("many", black_box(&tools)));
    });
    g.bench_function("part_pins_observe", |b| {
        b.iter(|| pins.observe("many", black_box(&tools)));
    });
    g.bench_function("filter_one_hidden", |b| {
        b.iter(|| tools_filter::filter(black_box(msg.clone()), Some(&hiding), &learn));
    });
    g.bench_function("filter_none_hidden", |b| {
        b.iter(|| tools_filter::filter(black_box(msg.clone()), Some(&none_hidden), &learn));
    });
    g.bench_function("filter_no_policy", |b| {
        b.iter(|| tools_filter::filter(black_box(msg.clone()), None, &learn));
    });
    // First sight: every tool read, catalogued and pinned, and the pins file written.
    g.bench_function("filter_first_sight", |b| {
        b.iter_batched(
            || (tempfile::tempdir().expect("tempdir"), ToolCatalog::default()),
            |(dir, catalog)| {
                let pins = PinStore::open(dir.path()).expect("pins");
                let learn = tools_filter::Learn {
                    server: "many",
                    session: "bench",
                    catalog: &catalog,
                    pins: &pins,
                };
                tools_filter::filter(msg.clone(), Some(&hiding), &learn)
            },
            criterion::BatchSize::PerIteration,
        );
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
