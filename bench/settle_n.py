"""How long one decision takes to answer N held calls it settles (issue 13's closing figure).

N identical `echo` calls (same session, same arguments) are held on peers/hostile_server.py; one
"approve for this session" settles the first and, at once, the N-1 it covers (`also_settled`). The
figure is the time from sending that decision to the last client's answer arriving, p50 over the
rounds. A timing on a shared machine: reported, never a pass/fail (the "all N settled" assertion is
the e2e test `test_one_decision_settles_n_identical_calls`).

    cargo build -p portcullis
    tests/.peers/venv1/bin/python bench/settle_n.py --bin target/debug/portcullis [--n 10] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))

import held_calls  # noqa: E402


def one_round(gw, api, n: int, marker: str) -> float:
    """Seconds from the decision to the last of `n` answers."""
    s = held_calls.session(gw)
    calls = [held_calls.Call(gw, s, marker) for _ in range(n)]
    def all_held():
        ids = [p["id"] for p in api.pending() if p["arguments"].get("message") == marker]
        return ids if len(ids) == n else None
    ids = held_calls.harness.wait_until(all_held, 30, f"{n} calls to be held")
    start = time.perf_counter()
    answer = api.approve(ids[0], "session").json()
    for call in calls:
        call.thread.join(30)
    elapsed = time.perf_counter() - start
    assert len(answer["also_settled"]) == n - 1, answer
    assert all(c.result()["content"][0]["text"] == f"Echo: {marker}" for c in calls)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ["PORTCULLIS_BIN"] = str(Path(args.bin).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        gw = held_calls.start(Path(tmp), "settle-n", approval_timeout_secs=60)
        approver = held_calls.approver(gw)
        try:
            api = next(approver)
            times = [one_round(gw, api, args.n, f"settle-{r}") for r in range(args.rounds)]
        finally:
            approver.close()
            gw.stop()
    ms = sorted(t * 1000 for t in times)
    print(f"settle {args.n}: decision -> last answer, {args.rounds} rounds: "
          f"p50 {statistics.median(ms):.1f} ms, min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms")


if __name__ == "__main__":
    main()
