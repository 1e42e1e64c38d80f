//! CPU per committed audit row, the way the gateway commits them: one `record` per row, waited
//! for (its callback completes a channel, as the gateway's completes a oneshot), then the row's
//! outcome handed over with `complete(.., None)` without waiting, so it rides the next commit.
//!
//! Time is the **process's CPU time** (`getrusage(RUSAGE_SELF)`: every thread, the caller, the
//! writer thread and the checkpointer), not wall time: on a shared 2-core machine wall time moves
//! with other people's builds far more than the commit's own cost does.
//!
//! Two outputs:
//! * `REPS` (env `COMMIT_CPU_REPS`, default 7) runs of `ROWS` (env `COMMIT_CPU_ROWS`, default
//!   20,000) rows on one file database, each printed with its CPU µs/row and wall µs/row, then
//!   the median and the spread; and one more measure, CPU per row on an **old-layout** database
//!   (4 KiB pages, as a database created before 1 KiB pages were chosen) so both layouts are
//!   seen; and for each database the CPU of committing a row with 1 MiB of arguments;
//! * criterion's `commit_cpu/record_then_complete`, measured with `iter_custom` in CPU time, so its
//!   estimate is CPU per row too.
//!
//! `COMMIT_CPU_ONLY_LOOP=1` runs only the first part (for `strace -c -f` / `perf record`).

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "counts and µs figures: small, positive numbers"
)]
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_audit::{AuditWriter, NewDecision, Outcome};
use serde_json::json;

#[path = "common/rows.rs"]
mod rows;

/// An allowed call with nothing to redact.
fn row(i: u64) -> NewDecision {
    rows::allowed_echo(i, json!({ "message": format!("m{i}"), "path": "/tmp/notes.txt" }))
}

/// The process's CPU time so far (user + system, all threads).
#[cfg(unix)]
fn cpu_now() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let tv = |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    tv(usage.user_time()) + tv(usage.system_time())
}

#[cfg(not(unix))]
fn cpu_now() -> Duration {
    Duration::ZERO
}

/// One gateway-like call: record, wait for the commit, post the outcome.
fn call(writer: &AuditWriter, i: u64, tx: &mpsc::SyncSender<i64>, rx: &mpsc::Receiver<i64>) {
    let tx = tx.clone();
    writer.record(row(i), Box::new(move |result| tx.send(result.unwrap()).unwrap()));
    let id = rx.recv().unwrap();
    writer.complete(id, Outcome::Ok, 1, None);
}

/// `n` calls; returns (CPU, wall) for them.
fn calls(writer: &AuditWriter, next: &mut u64, n: u64) -> (Duration, Duration) {
    let (tx, rx) = mpsc::sync_channel(1);
    let (cpu0, wall0) = (cpu_now(), Instant::now());
    for _ in 0..n {
        call(writer, *next, &tx, &rx);
        *next += 1;
    }
    (cpu_now().saturating_sub(cpu0), wall0.elapsed())
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn page_size(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, "page_size", |r| r.get(0)).unwrap()
}

/// Repetitions of `rows` calls on the database at `path`; prints each and the median.
fn runs(label: &str, path: &Path, reps: u64, rows: u64) -> f64 {
    let writer = AuditWriter::open(path).unwrap();
    let mut next = 0;
    calls(&writer, &mut next, 2_000);
    let mut cpu_per_row = Vec::new();
    for rep in 0..reps {
        let (cpu, wall) = calls(&writer, &mut next, rows);
        let cpu_us = cpu.as_secs_f64() * 1e6 / rows as f64;
        let wall_us = wall.as_secs_f64() * 1e6 / rows as f64;
        println!(
            "commit_cpu {label} rep {rep}: CPU {cpu_us:.2} µs/row, wall {wall_us:.2} µs/row (load {})",
            load()
        );
        cpu_per_row.push(cpu_us);
    }
    let large = large_rows(&writer, &mut next);
    drop(writer);
    cpu_per_row.sort_by(f64::total_cmp);
    let median = cpu_per_row[cpu_per_row.len() / 2];
    println!(
        "commit_cpu {label}: page_size {}, {reps} × {rows} rows: CPU µs/row median {median:.2}, min {:.2}, max {:.2}",
        page_size(path),
        cpu_per_row[0],
        cpu_per_row[cpu_per_row.len() - 1]
    );
    println!("commit_cpu {label}: a 1 MiB row (arguments), CPU {large:.0} µs/row (median of 9)");
    median
}

/// CPU per committed row of 1 MiB arguments (median of 9): the large rows' side of the page size
/// (a row spills into a page-sized overflow chain, one log frame per page).
fn large_rows(writer: &AuditWriter, next: &mut u64) -> f64 {
    let blob = "x".repeat(1 << 20);
    let mut each: Vec<f64> = (0..9)
        .map(|_| {
            let mut r = row(*next);
            *next += 1;
            r.arguments = json!({ "data": blob });
            let cpu0 = cpu_now();
            writer.record_blocking(r).unwrap();
            cpu_now().saturating_sub(cpu0).as_secs_f64() * 1e6
        })
        .collect();
    each.sort_by(f64::total_cmp);
    each[each.len() / 2]
}

/// A database laid out as before 1 KiB pages: 4 KiB pages and the schema at its first version,
/// then opened by this build's writer (which migrates whatever is missing).
fn old_layout(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "page_size", 4096).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(
        "CREATE TABLE decisions (
            id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, session TEXT NOT NULL,
            client_name TEXT, client_version TEXT, server TEXT NOT NULL, tool TEXT NOT NULL,
            arguments TEXT NOT NULL, arguments_digest TEXT NOT NULL, decision TEXT NOT NULL,
            decided_by TEXT NOT NULL, rule TEXT, reason TEXT, wait_ms INTEGER, outcome TEXT,
            upstream_ms INTEGER, request_id TEXT) STRICT;
         CREATE INDEX decisions_time ON decisions (time_ms DESC, id DESC);
         CREATE INDEX decisions_server_time ON decisions (server, time_ms, id);
         CREATE INDEX decisions_server_decision ON decisions (server, decision, time_ms, id);
         CREATE INDEX decisions_server_tool ON decisions (server, tool, time_ms, id);
         CREATE INDEX decisions_decision ON decisions (decision, time_ms, id);
         PRAGMA user_version = 1;",
    )
    .unwrap();
}

fn commit_cpu(c: &mut Criterion) {
    let reps = env("COMMIT_CPU_REPS", 7);
    let rows = env("COMMIT_CPU_ROWS", 20_000);
    let dir = tempfile::tempdir().unwrap();
    runs("new database", &dir.path().join("audit.db"), reps, rows);
    if std::env::var_os("COMMIT_CPU_ONLY_LOOP").is_some() {
        return;
    }
    let old = dir.path().join("old.db");
    old_layout(&old);
    runs("old-layout database", &old, reps.min(3), rows);

    let writer = AuditWriter::open(&dir.path().join("criterion.db")).unwrap();
    let mut next = 0;
    calls(&writer, &mut next, 2_000);
    let mut g = c.benchmark_group("commit_cpu");
    g.bench_function("record_then_complete", |b| {
        b.iter_custom(|iters| calls(&writer, &mut next, iters).0);
    });
    g.finish();
}

criterion_group!(benches, commit_cpu);
criterion_main!(benches);
