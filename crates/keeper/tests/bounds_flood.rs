//! A server floods a client that does not read: ~1 GiB of notifications on a call's stream. The
//! gateway must not buffer it (it once grew to 2.1 GiB): the stalled stream is ended, the memory
//! stays under the cap, and the owner's other calls keep working throughout.

#![allow(clippy::unwrap_used)]

mod bounds;

use std::time::{Duration, Instant};

use bounds::{mb, MB};
use serde_json::json;

/// Resident memory the whole test process (gateway, client, test) may reach.
const RSS_CAP: u64 = 200 * MB;
const FLOOD_MB: u64 = 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gibibyte_flood_into_a_stalled_client_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let gw = bounds::start(dir.path(), json!({})).await;
    let http = bounds::client();
    let flooded = gw.initialize(&http).await.unwrap();
    let other = gw.initialize(&http).await.unwrap();
    assert_eq!(
        gw.call(&http, &other, 1, "echo", json!({"text": "before"})).await,
        "before"
    );
    let before = bounds::rss();

    let done = dir.path().join("flood-done");
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "flood", "arguments": { "mb": FLOOD_MB, "chunk_kb": 256, "kind": "progress", "done": done },
        "_meta": { "progressToken": "p" } } });
    let started = Instant::now();
    // The stream opens (headers arrive) and is then never read: the client is stalled.
    let stalled = gw.post(&http, Some(&flooded), &call).send().await.unwrap();
    assert_eq!(stalled.status(), 200);

    let mut peak = 0;
    let mut echoes = 0u64;
    let mut slowest = Duration::ZERO;
    while !done.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the flood did not finish in 10 min"
        );
        peak = peak.max(bounds::rss());
        let asked = Instant::now();
        let text = format!("during {echoes}");
        assert_eq!(
            gw.call(&http, &other, 100 + echoes, "echo", json!({"text": text}))
                .await,
            text
        );
        slowest = slowest.max(asked.elapsed());
        echoes += 1;
    }
    let flood_secs = started.elapsed().as_secs_f64();
    let written: u64 = std::fs::read_to_string(&done).unwrap().parse().unwrap();
    peak = peak.max(bounds::rss());
    let after = bounds::rss();
    assert_eq!(
        gw.call(&http, &other, 99_999, "echo", json!({"text": "after"})).await,
        "after"
    );
    let again = gw.initialize(&http).await.unwrap();
    assert_eq!(gw.call(&http, &again, 1, "echo", json!({"text": "new"})).await, "new");
    // The stalled stream was ended, not kept: reading it now finds its end, far short of the flood.
    let kept = tokio::time::timeout(Duration::from_secs(60), stalled.bytes())
        .await
        .expect("the ended stream finishes")
        .map_or(0, |b| b.len() as u64);

    eprintln!(
        "flood: {:.0} MiB written in {flood_secs:.1} s; RSS before {:.1} MiB, peak {:.1} MiB, after {:.1} MiB \
         (VmHWM {:.1} MiB, cap {:.0} MiB); {echoes} echo calls on another session during it, slowest {:.0} ms; the stalled client \
         could still read {:.1} MiB of it",
        mb(written),
        mb(before),
        mb(peak),
        mb(after),
        mb(bounds::peak_rss()),
        mb(RSS_CAP),
        slowest.as_secs_f64() * 1000.0,
        mb(kept)
    );
    assert!(kept < 128 * MB, "the stalled stream was cut short: {kept} bytes");
    assert!(written >= FLOOD_MB * MB, "the server wrote the whole flood: {written}");
    assert!(peak < RSS_CAP, "RSS peaked at {:.1} MiB", mb(peak));
    assert!(echoes > 0, "calls were made during the flood");
}
