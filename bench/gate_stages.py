"""Where the gate's CPU goes per call, stage by stage (issue 31): `perf record` (cpu-clock, DWARF
call graphs) on the criterion bench `crates/gate/benches/gate_call.rs` while it runs one case,
then every sample of the bench process (its gate thread and the audit writer's threads; not the
echo server it starts) is put in one stage by its stack, first rule that matches (STAGES), and the
stages are printed as a share of the process's samples and as µs per call, given the case's CPU
per call as the bench's `gate_call_cpu/*` group measured it.

Usage:
  cargo bench -p portcullis-gate --bench gate_call --no-run   # prints the binary's path
  python3 bench/gate_stages.py --bench target/release/deps/gate_call-HASH \
      --case gate_call_cpu/modern_allowed --cpu-us 62.0 [--seconds 12] [--out DIR]
  python3 bench/gate_stages.py --script DIR/perf.script.txt --cpu-us 62.0   # classify a saved profile again

cpu-clock at 2,999 Hz (no hardware counters in this VM); `perf script --no-inline`.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import tempfile
from pathlib import Path

ALLOC = ("malloc", "free", "cfree", "_int_malloc", "_int_free", "realloc", "_int_realloc", "__rust_alloc",
         "__rdl_alloc", "__rust_dealloc", "__rdl_dealloc", "__rust_realloc", "__rdl_realloc", "malloc_consolidate",
         "unlink_chunk", "tcache_get", "calloc", "__libc_malloc", "__libc_free", "__libc_realloc", "_int_free_merge_chunk",
         "_int_free_create_chunk", "_int_free_maybe_consolidate")


def has(frames, *needles):
    return any(n in f for f in frames for n in needles)


def user_leaf(frames):
    """The innermost frames outside the kernel (kernel symbols have no `::` and run under a syscall)."""
    return [f for f in frames if not f.startswith(("__x64_sys", "do_syscall", "entry_SYSCALL")) and f != "[unknown]"][:3]


def is_alloc(frames):
    return any(f.split("@")[0] in ALLOC for f in user_leaf(frames)[:2])


# (stage, predicate over (is_main_thread, frames leaf-first)). First match wins.
STAGES = [
    ("allocation (malloc/free, anywhere)", lambda m, f: is_alloc(f)),
    ("audit writer's threads (outcomes on its tick, checkpoints)", lambda m, f: not m),
    ("the bench's client (writes the call, reads the answer)", lambda m, f: has(f, "gate_call::Client")),
    ("answer read + correlate (server's stdout: strict read, id map)", lambda m, f: has(f, "read_stdout", "correlator::Correlator::deliver")),
    ("outcome of the answer (Forwarded::finish)", lambda m, f: has(f, "Forwarded::finish", "gate::outcome_of")),
    ("write to the client (connection's writer)", lambda m, f: has(f, "local_conn::write_loop")),
    ("audit commit: SQLite insert + commit (WAL write)", lambda m, f: has(f, "sqlite3", "rusqlite::", "portcullis_audit::")),
    ("digest (keyed, canonical)", lambda m, f: has(f, "canonical::", "ArgumentDigester", "hmac::", "sha2::")),
    ("policy evaluation", lambda m, f: has(f, "portcullis_policy::")),
    ("rate limit", lambda m, f: has(f, "rate_limit::")),
    ("audit row build + hand-off (Gate::row, settle)", lambda m, f: has(f, "Gate::row", "audit_log::", "Gate::settle")),
    ("client line: UTF-8 + depth scan", lambda m, f: has(f, "check_client_message")),
    ("strict read of the client's line", lambda m, f: has(f, "Message::parse", "portcullis_wire::strict")),
    ("progress token of the forwarded call (correlator)", lambda m, f: has(f, "progress_token_of")),
    # Before issue 31 three readers (caller_for, the re-attach key, Call::from_message); after it,
    # the one read (Call::read → Message::tool_call) and the caller's clientInfo.
    ("call read: params + arguments (every reader of them)", lambda m, f: has(
        f, "Message::params", "Message::arguments", "Message::tool_call", "Call::from_message", "Call::read",
        "read_call", "caller_for", "client_info", "reattach_key", "::rejoin")),
    ("forward write (id map, stdin pipe)", lambda m, f: has(
        f, "ChildProcess::write", "stdin_pipe", "Correlator::register", "Upstream::request", "with_id", "send_upstream")),
    ("answer routing (reply stream)", lambda m, f: has(f, "session::reply")),
    ("session routing", lambda m, f: has(f, "portcullis_gate::session")),
    ("client line read + dispatch (local_conn)", lambda m, f: has(f, "local_conn::", "LineDecoder")),
    ("tracing spans", lambda m, f: has(f, "tracing::", "tracing_core::")),
    ("tokio: scheduler, park, timers, I/O driver", lambda m, f: has(f, "tokio::runtime")),
    ("other", lambda m, f: True),
]


def samples(script: str, pid: int):
    """(is_main_thread, frames leaf-first) of each sample of process `pid`."""
    for block in script.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        if not lines:
            continue
        head = lines[0].split()
        proc, tid = head[-1].split("/")
        if int(proc) != pid:
            continue
        frames = [line.split(None, 1)[1] if " " in line else line for line in lines[1:]]
        yield tid == proc, frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, help="the gate_call bench binary")
    ap.add_argument("--case", default="gate_call_cpu/modern_allowed")
    ap.add_argument("--cpu-us", type=float, required=True, help="the case's CPU per call (criterion's gate_call_cpu)")
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--script", type=Path, help="classify this saved perf.script.txt instead of profiling again")
    args = ap.parse_args()
    if args.script:
        script = args.script.read_text()
    else:
        out = args.out or Path(tempfile.mkdtemp(prefix="gate-stages-"))
        out.mkdir(parents=True, exist_ok=True)
        data = out / "perf.data"
        proc = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2999", "--call-graph", "dwarf,16384", "-o", str(data),
             "--", str(args.bench), "--bench", "--profile-time", str(args.seconds), args.case],
            stdout=subprocess.DEVNULL)
        proc.wait()
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid,tid,comm,ip,sym", "--no-inline"],
                                capture_output=True, text=True, check=True).stdout
        (out / "perf.script.txt").write_text(script)
    # The bench process is the one with the most samples whose name is the bench's (its echo server
    # child has the same name and fewer samples).
    counts = collections.Counter()
    for block in script.split("\n\n"):
        first = block.strip().splitlines()[:1]
        if first:
            counts[int(first[0].split()[-1].split("/")[0])] += 1
    pid = counts.most_common(1)[0][0]
    stages = collections.Counter()
    for main_thread, frames in samples(script, pid):
        stage = next(name for name, rule in STAGES if rule(main_thread, frames))
        stages[stage] += 1
    total = sum(stages.values())
    print(f"{args.case}: {total} samples of pid {pid} ({args.cpu_us:.1f} µs CPU per call)")
    print("| stage | share | µs per call |")
    print("|---|---|---|")
    for name, _ in STAGES:
        if stages[name]:
            share = stages[name] / total
            print(f"| {name} | {share * 100:.1f} % | {share * args.cpu_us:.1f} |")


if __name__ == "__main__":
    main()
