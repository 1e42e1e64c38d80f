//! The audit log's two costs that users feel.
//!
//! 1. **record → committed** (`AuditWriter::record_blocking` on a file database, WAL,
//!    `synchronous=NORMAL`): the gateway waits for this before it forwards a call, so it is the
//!    latency the audit adds to every call. Target (issue 5): p50 ≤ 50 µs. Besides criterion's
//!    estimate, the bench times 20,000 single calls and prints p50 / p90 / p99 / p99.9 / max,
//!    because the distribution matters here: SQLite's automatic WAL checkpoint runs on the
//!    writer thread about every 150 commits and makes a few calls much slower than the rest.
//!    A concurrent run (8 threads) shows what group commit buys.
//! 2. **query** (`AuditStore::query`): newest 100 rows with a server + decision filter on a
//!    1,000,000-row database. Target: ≤ 20 ms. The database is generated once per run in a
//!    temporary directory: schema by `AuditWriter::open` (the real migration, real indexes),
//!    rows by rusqlite in one transaction (journal off while loading, WAL again afterwards).
//!
//! Set `AUDIT_BENCH_ROWS` to generate fewer rows (the smoke run uses 20,000).

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_audit::{AuditFilter, AuditStore, AuditWriter, DecidedBy, Decision, NewDecision};
use serde_json::json;

fn new_decision(i: u64) -> NewDecision {
    NewDecision {
        time_ms: 1_780_000_000_000 + i as i64,
        session: "bench-session-0001".into(),
        client_name: Some("bench-client".into()),
        client_version: Some("1.0.0".into()),
        server: "everything".into(),
        tool: "echo".into(),
        arguments: json!({ "message": format!("m{i}"), "api_key": "sk-secret", "path": "/tmp/notes.txt" }),
        arguments_digest: "sha256:3f0a4c1e9d2b7a65f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f3a2b".into(),
        decision: Decision::Allowed,
        decided_by: DecidedBy::Policy,
        rule: Some("tools.echo".into()),
        reason: None,
        wait_ms: None,
        request_id: Some(i.to_string()),
        extra_redact_keys: Vec::new(),
    }
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 * q) as usize).min(samples.len() - 1);
        samples[i].as_secs_f64() * 1e6
    };
    format!(
        "n={} p50={:.1}µs p90={:.1}µs p99={:.1}µs p99.9={:.1}µs max={:.1}µs",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        samples.last().map_or(0.0, |d| d.as_secs_f64() * 1e6)
    )
}

fn record_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let writer = AuditWriter::open(&dir.path().join("audit.db")).unwrap();
    let mut i = 0u64;

    // Warm-up, then single-call timings for the distribution.
    for _ in 0..2_000 {
        writer.record_blocking(new_decision(i)).unwrap();
        i += 1;
    }
    let n = 20_000;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let row = new_decision(i);
        i += 1;
        let t0 = Instant::now();
        writer.record_blocking(row).unwrap();
        samples.push(t0.elapsed());
    }
    println!("audit/record_committed single calls: {}", percentiles(samples));

    // 8 threads recording at once: group commit shares one transaction between them.
    let threads = 8;
    let per_thread = 2_500;
    let t0 = Instant::now();
    let lat: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let writer = writer.clone();
                s.spawn(move || {
                    let mut out = Vec::with_capacity(per_thread);
                    for k in 0..per_thread {
                        let row = new_decision(10_000_000 + (t * per_thread + k) as u64);
                        let t1 = Instant::now();
                        writer.record_blocking(row).unwrap();
                        out.push(t1.elapsed());
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let wall = t0.elapsed();
    println!(
        "audit/record_committed 8 threads: {:.0} records/s; {}",
        lat.len() as f64 / wall.as_secs_f64(),
        percentiles(lat)
    );

    let mut g = c.benchmark_group("audit");
    g.bench_function("record_committed", |b| {
        b.iter(|| {
            i += 1;
            writer.record_blocking(new_decision(i)).unwrap()
        })
    });
    g.finish();
}

const SERVERS: [&str; 8] = [
    "everything",
    "filesystem",
    "github",
    "postgres",
    "proxmox",
    "slack",
    "git",
    "fetch",
];
const TOOLS: [&str; 6] = ["echo", "read_file", "write_file", "query", "list", "get_status"];

/// A decision drawn with realistic weights from a uniform `r` in 0..1000.
fn decision_for(r: u64) -> (&'static str, &'static str) {
    match r {
        0..800 => ("allowed", "policy"),
        800..900 => ("denied", "policy"),
        900..940 => ("rate_limited", "policy"),
        940..970 => ("approved", "user"),
        970..985 => ("rejected", "user"),
        985..993 => ("hidden", "policy"),
        993..997 => ("timed_out", "timeout"),
        997..999 => ("cancelled", "client"),
        _ => ("failed", "gateway"),
    }
}

/// Fills the database at `path` (already migrated) with `rows` rows, newest last.
fn generate(path: &Path, rows: u64) {
    let mut conn = rusqlite::Connection::open(path).unwrap();
    // Bulk load without a journal; WAL again afterwards, as the gateway leaves it.
    conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    conn.pragma_update(None, "synchronous", "OFF").unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut stmt = tx
            .prepare(
                "INSERT INTO decisions (time_ms, session, client_name, client_version, server, tool, \
                 arguments, arguments_digest, decision, decided_by, rule, reason, wait_ms, outcome, \
                 upstream_ms, request_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, \
                 ?13, ?14, ?15, ?16)",
            )
            .unwrap();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            // xorshift64*: deterministic, no extra crate.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        for i in 0..rows {
            let r = next();
            // Skewed servers: the first ones are busier.
            let server = SERVERS[((r % 64) as f64).sqrt() as usize];
            let tool = TOOLS[((r >> 8) % TOOLS.len() as u64) as usize];
            let (decision, decided_by) = decision_for((r >> 16) % 1000);
            let forwarded = matches!(decision, "allowed" | "approved");
            let arguments = format!(
                r#"{{"message":"call {i}","path":"/srv/data/{}.txt","api_key":"[redacted]"}}"#,
                r % 997
            );
            stmt.execute(rusqlite::params![
                1_700_000_000_000_i64 + (i as i64) * 40,
                format!("session-{}", (r >> 24) % 500),
                "claude-code",
                "1.0.0",
                server,
                tool,
                arguments,
                format!("sha256:{:064x}", r),
                decision,
                decided_by,
                format!("tools.{tool}"),
                if forwarded { None } else { Some("denied by policy") },
                if decided_by == "user" { Some(1200_i64) } else { None },
                if forwarded { Some("ok") } else { None },
                if forwarded { Some(3_i64) } else { None },
                i.to_string(),
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
}

fn query_benches(c: &mut Criterion) {
    let rows: u64 = std::env::var("AUDIT_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    drop(AuditWriter::open(&path).unwrap());
    let t0 = Instant::now();
    generate(&path, rows);
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "audit/query: generated {rows} rows in {:.1} s ({:.0} MB)",
        t0.elapsed().as_secs_f64(),
        size as f64 / 1e6
    );
    let store = AuditStore::open(&path).unwrap();
    assert_eq!(store.count(&AuditFilter::default()).unwrap(), rows);

    let filter = |server: &str, decision: Option<Decision>| AuditFilter {
        server: Some(server.into()),
        decision,
        ..AuditFilter::default()
    };
    let common = filter("filesystem", Some(Decision::Denied));
    let rare = filter("fetch", Some(Decision::TimedOut));
    let newest = AuditFilter::default();
    // A deep page: the cursor of the 100th row of the 50th page of the common filter.
    let mut deep = common.clone();
    for _ in 0..50 {
        let page = store.query(&deep, 100).unwrap();
        deep.before = page.last().map(|r| r.cursor());
    }
    for (name, f) in [("common", &common), ("rare", &rare), ("deep", &deep)] {
        let page = store.query(f, 100).unwrap();
        assert!(!page.is_empty(), "{name}: no rows");
        assert!(page.iter().all(|r| Some(r.decision) == f.decision));
    }
    // Single-call timings, first call (cold statement cache) included.
    for (name, f) in [
        ("server+decision", &common),
        ("server+rare decision", &rare),
        ("no filter", &newest),
    ] {
        let samples: Vec<Duration> = (0..200)
            .map(|_| {
                let t = Instant::now();
                black_box(store.query(f, 100).unwrap());
                t.elapsed()
            })
            .collect();
        println!("audit/query newest 100, {name}: {}", percentiles(samples));
    }

    let mut g = c.benchmark_group("audit_query_1m");
    g.bench_function("newest100_server_decision", |b| {
        b.iter(|| store.query(black_box(&common), 100).unwrap())
    });
    g.bench_function("newest100_server_rare_decision", |b| {
        b.iter(|| store.query(black_box(&rare), 100).unwrap())
    });
    g.bench_function("page51_server_decision", |b| {
        b.iter(|| store.query(black_box(&deep), 100).unwrap())
    });
    g.bench_function("newest100_no_filter", |b| {
        b.iter(|| store.query(black_box(&newest), 100).unwrap())
    });
    g.sample_size(10);
    g.bench_function("count_server_decision", |b| {
        b.iter(|| store.count(black_box(&common)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, record_benches, query_benches);
criterion_main!(benches);
