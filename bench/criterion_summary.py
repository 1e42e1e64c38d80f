"""Prints the criterion figures of the last `cargo bench` run as one table, with the issue-5 targets.

Reads target/criterion/<group>/<bench>/new/estimates.json (criterion's own output): the median
and the mean of the per-sample averages. Usage: python3 bench/criterion_summary.py [--json OUT]
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRITERION = ROOT / "target" / "criterion"

# (group, bench) -> (target in ns, what the target is)
TARGETS = {
    ("policy_1000", "*"): (2_000, "policy evaluation, 1,000 entries, p50 ≤ 2 µs"),
    ("audit_query_1m", "newest100_server_decision"): (20_000_000, "newest 100, server+decision, 1M rows ≤ 20 ms"),
    ("audit_query_1m", "newest100_server_rare_decision"): (20_000_000, "newest 100, server+decision, 1M rows ≤ 20 ms"),
    # Issue 14 point 7: a 20,000-tool tools/list filtered in ≤ 50 ms.
    ("tools_list_20k", "filter_one_hidden"): (50_000_000, "20,000-tool tools/list filtered ≤ 50 ms"),
    ("tools_list_20k", "filter_none_hidden"): (50_000_000, "20,000-tool tools/list filtered ≤ 50 ms"),
    ("tools_list_20k", "filter_no_policy"): (50_000_000, "20,000-tool tools/list filtered ≤ 50 ms"),
}


def fmt(ns: float) -> str:
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def main() -> None:
    rows = []
    for est in sorted(CRITERION.glob("*/*/new/estimates.json")):
        bench_dir = est.parent.parent
        group, bench = bench_dir.parent.name, bench_dir.name
        data = json.loads(est.read_text())
        median = data["median"]["point_estimate"]
        mean = data["mean"]["point_estimate"]
        target = TARGETS.get((group, bench)) or TARGETS.get((group, "*"))
        verdict = ""
        if target:
            verdict = ("MET " if median <= target[0] else "MISS") + f" (≤ {fmt(target[0])})"
        rows.append({"group": group, "bench": bench, "median_ns": median, "mean_ns": mean, "verdict": verdict})
    if not rows:
        sys.exit("no criterion results under target/criterion")
    print(f"  {'benchmark':<50} {'median':>10} {'mean':>10}  target")
    for r in rows:
        print(f"  {r['group'] + '/' + r['bench']:<50} {fmt(r['median_ns']):>10} {fmt(r['mean_ns']):>10}  {r['verdict']}")
    # Per-call distributions timed by the audit bench itself (criterion's figure for
    # audit/record_committed is a mean over batches, so it folds the checkpoint stalls in).
    audit = ROOT / "target" / "bench" / "audit.json"
    single = {}
    if audit.exists():
        single = json.loads(audit.read_text())
        print("\n  audit, single calls timed one by one (crates/audit/benches/audit.rs)")
        print(f"  {'measurement':<50} {'p50':>10} {'p99':>10} {'p99.9':>10} {'mean':>10}  target")
        for key, v in single.items():
            verdict = ""
            if key == "record_committed_single":
                verdict = ("MET " if v["p50_us"] <= 50 else "MISS") + " (p50 ≤ 50 µs)"
            elif key.startswith("query_newest100 server"):
                verdict = ("MET " if v["p50_us"] <= 20_000 else "MISS") + " (≤ 20 ms)"
            print(f"  {key:<50} {fmt(v['p50_us'] * 1e3):>10} {fmt(v['p99_us'] * 1e3):>10} "
                  f"{fmt(v['p999_us'] * 1e3):>10} {fmt(v['mean_us'] * 1e3):>10}  {verdict}")
    if len(sys.argv) == 3 and sys.argv[1] == "--json":
        Path(sys.argv[2]).write_text(json.dumps({"criterion": rows, "audit_single_calls": single}, indent=2))


if __name__ == "__main__":
    main()
