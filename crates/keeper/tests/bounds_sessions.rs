//! 100 `initialize` requests at once against a stdio server: only `limits.max_sessions_per_server`
//! sessions (child processes) are started, the rest get the clear error, and a session already
//! open keeps working.

#![allow(clippy::unwrap_used)]

mod bounds;

use std::time::{Duration, Instant};

use serde_json::json;

const CAP: usize = 5;
const STORM: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_storm_starts_only_the_cap_of_children() {
    let dir = tempfile::tempdir().unwrap();
    let gw = bounds::start(dir.path(), json!({ "max_sessions_per_server": CAP })).await;
    let http = bounds::client();
    let first = gw.initialize(&http).await.unwrap();
    // The server monitor (status views) may hold one connection of its own besides the sessions.
    let monitor = 1;

    let started = Instant::now();
    let storm = (0..STORM).map(|_| gw.initialize(&http));
    let results = tokio::time::timeout(Duration::from_secs(120), futures::future::join_all(storm))
        .await
        .expect("every initialize is answered");
    let secs = started.elapsed().as_secs_f64();
    let opened = results.iter().filter(|r| r.is_ok()).count();
    let refused: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let children = bounds::flood_children();
    let expected = format!(
        "[portcullis] server \"flood\" already has {CAP} sessions (limits.max_sessions_per_server); \
         close a client or raise the limit"
    );
    eprintln!(
        "session storm: {STORM} initialize in {secs:.2} s → {opened} opened, {} refused; {children} \
         flood_server children (the cap is {CAP} sessions, plus at most {monitor} for the monitor)",
        refused.len()
    );
    assert_eq!(opened, CAP - 1, "the first session already holds one slot");
    assert_eq!(refused.len(), STORM - opened);
    assert!(refused.iter().all(|e| **e == expected), "{:?}", refused.first());
    assert!(
        children <= CAP + monitor,
        "{children} children for a cap of {CAP} (+{monitor} monitor)"
    );
    assert_eq!(
        gw.call(&http, &first, 1, "echo", json!({"text": "works"})).await,
        "works"
    );
}
