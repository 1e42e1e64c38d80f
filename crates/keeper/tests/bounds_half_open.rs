//! Another local user (`nobody`, with no token) opens 2,000 connections and sends half a header on
//! each, as once locked the owner out with 1,100. Now: the attacker's connections beyond its
//! allowance are closed at once, the ones admitted are closed at the header read timeout, and
//! the owner's calls — on fresh connections — keep working throughout.
//!
//! Needs root (to run the attacker as `nobody` with setpriv), as CI has; without it the test fails
//! under CI and is skipped with its reason elsewhere (`src/test_env.rs`).

// Linux only: the foreign user is told apart by the kernel's socket table (see http/peer_user.rs).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod bounds;
#[path = "../../gate/src/test_env.rs"]
mod test_env;

use std::process::Stdio;
use std::time::{Duration, Instant};

use bounds::mb;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const ATTACK: usize = 2000;
const HEADER_TIMEOUT_SECS: u64 = 2;
const PER_FOREIGN_USER: usize = 16;
const ATTACKER: &str = include_str!("../../../tests/e2e/peers/half_open_attacker.py");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_from_another_user_are_shed() {
    if !nix::unistd::geteuid().is_root() {
        return test_env::unmet("running the attacker as another user (setpriv --reuid=nobody) needs root");
    }
    // The attacker's interpreter must be one `nobody` may run (not a per-user shim in /root).
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("python3");
    let dir = tempfile::tempdir().unwrap();
    let limits = json!({
        "header_read_timeout_secs": HEADER_TIMEOUT_SECS,
        "max_connections_per_foreign_user": PER_FOREIGN_USER,
    });
    let gw = bounds::start(dir.path(), limits).await;
    let port = gw.base.rsplit(':').next().unwrap().to_owned();
    let owner = bounds::client();
    let session = gw.initialize(&owner).await.unwrap();
    let before = bounds::rss();

    let mut attacker = tokio::process::Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            python,
            "-c",
            ATTACKER,
        ])
        .args([port.as_str(), &ATTACK.to_string(), "60"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(attacker.stdout.take().unwrap()).lines();
    let mut next_line = async || {
        tokio::time::timeout(Duration::from_secs(90), lines.next_line())
            .await
            .expect("the attacker reports in time")
            .unwrap()
            .expect("the attacker's report ends early")
    };
    let connected = next_line().await;
    assert!(connected.starts_with("connected "), "{connected}");

    // The owner, all through the attack: calls on new connections (a fresh client each).
    let gw = std::sync::Arc::new(gw);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let calls = {
        let (gw, stop, session) = (gw.clone(), stop.clone(), session.clone());
        tokio::spawn(async move {
            let (mut n, mut slowest) = (0u64, Duration::ZERO);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let asked = Instant::now();
                let text = format!("owner {n}");
                assert_eq!(
                    gw.call(&bounds::client(), &session, n, "echo", json!({"text": text}))
                        .await,
                    text
                );
                slowest = slowest.max(asked.elapsed());
                n += 1;
            }
            (n, slowest)
        })
    };
    let fresh = gw
        .initialize(&bounds::client())
        .await
        .expect("the owner can still open a session");

    // Connections still being accepted and classified count as open at first; what is still open
    // most of a header timeout later is what the gateway admitted.
    let settle = HEADER_TIMEOUT_SECS as f64 * 0.75;
    let (mut first_count, mut held, mut shed_secs) = (None, ATTACK, None);
    while shed_secs.is_none() {
        let line = next_line().await;
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["open", secs, n] => {
                let (secs, n) = (secs.parse::<f64>().unwrap(), n.parse::<usize>().unwrap());
                first_count.get_or_insert(n);
                if secs <= settle {
                    held = n;
                }
            }
            ["shed", secs] => shed_secs = Some(secs.parse::<f64>().unwrap()),
            _ => panic!("the attacker still held connections at its deadline: {line}"),
        }
    }
    let _ = attacker.wait().await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (owner_calls, slowest) = tokio::time::timeout(Duration::from_secs(60), calls)
        .await
        .expect("the owner's calls finish")
        .expect("every owner call during the attack succeeded");
    let (first, shed) = (first_count.unwrap(), shed_secs.unwrap());
    assert_eq!(
        gw.call(&owner, &fresh, 99, "echo", json!({"text": "after"})).await,
        "after"
    );
    eprintln!(
        "half-open attack: {ATTACK} connections from nobody ({connected}); {first} open when all were \
         made, {held} still open {settle:.1} s later (allowance {PER_FOREIGN_USER}), all gone {shed:.2} s later (header timeout \
         {HEADER_TIMEOUT_SECS} s); {owner_calls} owner calls on fresh connections all through it, slowest {:.0} ms; \
         RSS before {:.1} MiB, after {:.1} MiB",
        slowest.as_secs_f64() * 1000.0,
        mb(before),
        mb(bounds::rss())
    );
    assert!(owner_calls > 0, "the owner made calls during the attack");
    assert!(held <= PER_FOREIGN_USER, "{held} attacker connections stayed open");
    assert!(
        shed < (HEADER_TIMEOUT_SECS + 3) as f64,
        "the half-open connections outlived the header timeout: {shed} s"
    );
}
