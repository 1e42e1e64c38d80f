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
//! Set `AUDIT_BENCH_ROWS` to generate fewer rows and `AUDIT_BENCH_CALLS` to time fewer single
//! calls (the smoke run uses 20,000 and 2,000). Per-call figures also go to target/bench/audit.json.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::many_single_char_names,
    reason = "percentile indexes and synthetic rows: small, positive numbers"
)]
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_audit::{AuditFilter, AuditStore, AuditWriter, Decision, NewDecision, Outcome};
use serde_json::json;

#[path = "common/rows.rs"]
mod rows;

/// A row with a secret among its arguments, so the writer's redaction runs as in use.
fn new_decision(i: u64) -> NewDecision {
    rows::allowed_echo(
        i,
        json!({ "message": format!("m{i}"), "api_key": "sk-secret", "path": "/tmp/notes.txt" }),
    )
}

/// Figures for `bench/criterion_summary.py`: target/bench/audit.json, one key per measurement.
fn save(key: &str, value: serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench/audit.json");
    let mut all: serde_json::Map<String, serde_json::Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    all.insert(key.to_owned(), value);
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    let _ = std::fs::write(&path, serde_json::to_string_pretty(&all).unwrap());
}

fn stats(samples: &[Duration]) -> serde_json::Value {
    let mut s: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
    s.sort_by(f64::total_cmp);
    let at = |q: f64| s[((s.len() as f64 * q) as usize).min(s.len() - 1)];
    json!({ "n": s.len(), "p50_us": at(0.5), "p90_us": at(0.9), "p99_us": at(0.99),
            "p999_us": at(0.999), "max_us": s[s.len() - 1],
            "mean_us": s.iter().sum::<f64>() / s.len() as f64 })
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 * q) as usize).min(samples.len() - 1);
        samples[i].as_secs_f64() * 1e6
    };
    let mean = samples.iter().map(Duration::as_secs_f64).sum::<f64>() / samples.len() as f64;
    format!(
        "n={} p50={:.1}µs p90={:.1}µs p99={:.1}µs p99.9={:.1}µs max={:.1}µs mean={:.1}µs",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        samples.last().map_or(0.0, |d| d.as_secs_f64() * 1e6),
        mean * 1e6
    )
}

/// CPU time of the whole process (every thread: caller, writer, checkpointer) so far, from
/// /proc/self/stat (utime + stime, 100 Hz ticks). `None` off Linux.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// CPU µs per call between two `process_cpu` readings.
fn cpu_per_call(before: Option<Duration>, calls: usize) -> f64 {
    match (before, process_cpu()) {
        (Some(a), Some(b)) => b.checked_sub(a).unwrap().as_secs_f64() * 1e6 / calls as f64,
        _ => f64::NAN,
    }
}

/// Calls timed one by one per measurement: `AUDIT_BENCH_CALLS`, default 20,000.
fn calls() -> usize {
    std::env::var("AUDIT_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
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
    let n = calls();
    let mut samples = Vec::with_capacity(n);
    let cpu = process_cpu();
    for _ in 0..n {
        let row = new_decision(i);
        i += 1;
        let t0 = Instant::now();
        writer.record_blocking(row).unwrap();
        samples.push(t0.elapsed());
    }
    let cpu = cpu_per_call(cpu, n);
    let mut v = stats(&samples);
    v["cpu_us_per_call"] = json!(cpu);
    save("record_committed_single", v);
    println!(
        "audit/record_committed single calls: {}; process CPU {cpu:.1}µs/call",
        percentiles(samples)
    );

    // What the gateway does per forwarded call: wait for the decision's commit, forward, then
    // hand the outcome to the writer without waiting. Only the record is timed (it is what the
    // call waits for); the outcome's write competes with the next record for the writer.
    let mut samples = Vec::with_capacity(n);
    let cpu = process_cpu();
    for _ in 0..n {
        let row = new_decision(i);
        i += 1;
        let t0 = Instant::now();
        let id = writer.record_blocking(row).unwrap();
        samples.push(t0.elapsed());
        writer.complete(id, Outcome::Ok, 1, None);
    }
    let cpu = cpu_per_call(cpu, n);
    let mut v = stats(&samples);
    v["cpu_us_per_call"] = json!(cpu);
    save("record_then_complete_single", v);
    println!(
        "audit/record_committed then complete, single calls: {}; process CPU {cpu:.1}µs/call",
        percentiles(samples)
    );

    checkpoint_prototype(dir.path());

    // 8 threads recording at once: group commit shares one transaction between them.
    let threads = 8;
    let per_thread = calls() / threads;
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
    let mut v = stats(&lat);
    v["records_per_s"] = json!(lat.len() as f64 / wall.as_secs_f64());
    save("record_committed_8_threads", v);
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
        });
    });
    g.finish();
}

/// Evidence for the proposal in BENCHMARKS.md, not a measurement of the shipped code: the writer's
/// transaction (`BEGIN IMMEDIATE; INSERT …; COMMIT`, WAL, `synchronous=NORMAL`) replayed with
/// rusqlite, (a) as the writer runs it today, with SQLite's automatic checkpoint on the committing
/// connection, and (b) with `wal_autocheckpoint=0` on that connection and a second connection
/// running `PRAGMA wal_checkpoint(PASSIVE)` every 100 ms on its own thread.
fn checkpoint_prototype(dir: &Path) {
    const INSERT: &str = "INSERT INTO decisions (time_ms, session, client_name, client_version, server, \
        tool, arguments, arguments_digest, decision, decided_by, rule, reason, wait_ms, request_id) \
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
    for (name, background) in [("inline_autocheckpoint", false), ("background_checkpoint", true)] {
        let path = dir.join(format!("proto-{name}.db"));
        drop(AuditWriter::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
        if background {
            conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let checkpointer = background.then(|| {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                let c = rusqlite::Connection::open(&path).unwrap();
                c.busy_timeout(Duration::from_secs(5)).unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    let _ = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
        });
        let mut samples = Vec::with_capacity(calls());
        for i in 0..(calls() + 2_000) as u64 {
            let row = new_decision(i);
            let args = serde_json::to_string(&row.arguments).unwrap();
            let t0 = Instant::now();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            conn.prepare_cached(INSERT)
                .unwrap()
                .execute(rusqlite::params![
                    row.time_ms,
                    row.session,
                    row.client_name,
                    row.client_version,
                    row.server,
                    row.tool,
                    args,
                    row.arguments_digest,
                    row.decision.as_str(),
                    row.decided_by.as_str(),
                    row.rule,
                    row.reason,
                    row.wait_ms,
                    row.request_id
                ])
                .unwrap();
            conn.execute_batch("COMMIT").unwrap();
            if i >= 2_000 {
                samples.push(t0.elapsed());
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = checkpointer {
            t.join().unwrap();
        }
        save(&format!("prototype_commit_{name}"), stats(&samples));
        println!("audit/prototype commit, {name}: {}", percentiles(samples));
    }
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
                 arguments, arguments_digest, decision, decided_by, rule, reason, wait_ms, request_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )
            .unwrap();
        let mut outcome = tx
            .prepare("INSERT INTO outcomes (id, outcome, upstream_ms) VALUES (last_insert_rowid(), 'ok', 3)")
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
            // One row in 50 spells its path with JSON escapes, as some clients (and attackers) do.
            let path = if i % 50 == 0 {
                format!(r"\u002fsrv\u002fdata\u002f{}.txt", r % 997)
            } else {
                format!("/srv/data/{}.txt", r % 997)
            };
            let arguments = format!(r#"{{"message":"call {i}","path":"{path}","api_key":"[redacted]"}}"#);
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
                i.to_string(),
            ])
            .unwrap();
            if forwarded {
                outcome.execute([]).unwrap();
            }
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
        deep.before = page.last().map(portcullis_audit::AuditRow::cursor);
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
        save(&format!("query_newest100 {name}"), stats(&samples));
        println!("audit/query newest 100, {name}: {}", percentiles(samples));
    }

    text_search_timings(&store, &path);

    let mut g = c.benchmark_group("audit_query_1m");
    g.bench_function("newest100_server_decision", |b| {
        b.iter(|| store.query(black_box(&common), 100).unwrap());
    });
    g.bench_function("newest100_server_rare_decision", |b| {
        b.iter(|| store.query(black_box(&rare), 100).unwrap());
    });
    g.bench_function("page51_server_decision", |b| {
        b.iter(|| store.query(black_box(&deep), 100).unwrap());
    });
    g.bench_function("newest100_no_filter", |b| {
        b.iter(|| store.query(black_box(&newest), 100).unwrap());
    });
    g.sample_size(10);
    g.bench_function("count_server_decision", |b| {
        b.iter(|| store.count(black_box(&common)).unwrap());
    });
    g.finish();
}

/// `--text` searches, timed one by one: one that matches no row reads every row (the worst case),
/// one that matches a path in about one row in 1,000 (some of them spelled with escapes). Then
/// the same pages with the search before it decoded escapes (`arguments LIKE ?` alone, the rows
/// read but not decoded into `AuditRow`s), for the cost of decoding. That runs on a connection of
/// its own, opened after the store's timings: while a second connection to the file is open the
/// store's reads were 2-3 times slower, which is not the cost of the search.
fn text_search_timings(store: &AuditStore, path: &Path) {
    const SEARCHES: [(&str, &str); 2] = [("no match", "/nowhere/at/all"), ("rare path", "/srv/data/996.txt")];
    for (name, text) in SEARCHES {
        let filter = AuditFilter {
            text: Some(text.into()),
            ..AuditFilter::default()
        };
        let (found, samples) = time_20(&mut || store.query(&filter, 100).unwrap().len());
        save(&format!("query_newest100 text {name}"), stats(&samples));
        println!(
            "audit/query newest 100, text {name} ({found} rows): {}",
            percentiles(samples)
        );
    }
    let conn = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut like_only = conn
        .prepare("SELECT * FROM calls WHERE arguments LIKE ? ESCAPE '\\' ORDER BY time_ms DESC, id DESC LIMIT 100")
        .unwrap();
    for (name, text) in SEARCHES {
        let pattern = format!("%{text}%");
        let (found, samples) = time_20(&mut || like_only.query_map([&pattern], |_| Ok(())).unwrap().count());
        println!(
            "audit/query newest 100, text {name}, LIKE alone ({found} rows): {}",
            percentiles(samples)
        );
    }
}

/// Twenty timed runs of `run`, and what one more returns. Prints the process CPU time per run
/// too: on a busy machine it moves much less than the wall time.
fn time_20(run: &mut dyn FnMut() -> usize) -> (usize, Vec<Duration>) {
    let cpu = process_cpu();
    let samples: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            black_box(run());
            t.elapsed()
        })
        .collect();
    print!("[CPU {:.1} ms per search] ", cpu_per_call(cpu, samples.len()) / 1e3);
    (run(), samples)
}

criterion_group!(benches, record_benches, query_benches);
criterion_main!(benches);
