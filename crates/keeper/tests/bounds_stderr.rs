//! A server writes 200 MB to stderr without a newline. The gateway keeps 8 KiB of the line (the
//! rest is counted and dropped), its memory stays under the cap, and the server still answers —
//! which also shows stderr was read all along (a full pipe would have blocked the server).

#![allow(clippy::unwrap_used)]

mod bounds;

use std::time::{Duration, Instant};

use bounds::{mb, MB};
use serde_json::json;

const RSS_CAP: u64 = 200 * MB;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_line_without_end_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let gw = bounds::start(dir.path(), json!({})).await;
    let http = bounds::client();
    let session = gw.initialize(&http).await.unwrap();
    let before = bounds::rss();
    let started = Instant::now();
    let bombed = tokio::time::timeout(
        Duration::from_secs(120),
        gw.call(&http, &session, 1, "stderr_bomb", json!({"mb": 200})),
    )
    .await
    .expect("the server answers once its 200 MB of stderr were read");
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(bombed, "bombed");
    let after = bounds::rss();
    assert_eq!(
        gw.call(&http, &session, 2, "echo", json!({"text": "still here"})).await,
        "still here"
    );
    eprintln!(
        "stderr bomb: 200 MiB without a newline read in {secs:.1} s; RSS before {:.1} MiB, after {:.1} MiB, \
         peak (VmHWM) {:.1} MiB, cap {:.0} MiB",
        mb(before),
        mb(after),
        mb(bounds::peak_rss()),
        mb(RSS_CAP)
    );
    assert!(bounds::peak_rss() < RSS_CAP);
    assert!(
        after < before + 32 * MB,
        "no stderr line was kept whole: {:.1} MiB",
        mb(after)
    );
}
