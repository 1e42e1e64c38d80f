"""Soak: mixed traffic through a real gateway for a given time; memory and descriptors must not grow.

Run by scripts/soak.sh (which picks the venv and the binary). One `portcullis serve` in front of
server-everything (stdio, so every legacy session is a child process the gateway starts and stops),
with a policy that gives each tool one decision:

  echo            allow
  get-sum         rate limit, 3 calls per minute per agent session: each session (40 calls, ~10 of
                  them get-sum) meets it whatever the machine's speed
  get-env         deny
  get-tiny-image  require approval; an approver thread (the control API, as the CLI and the app use
                  it) approves three in four and denies the fourth

WORKERS concurrent clients (mcp 1.x over Streamable HTTP) each open a session, make CALLS_PER_SESSION
calls at random among the four, close it and open the next, until the time is up.

Measured: the gateway's VmRSS and open descriptors (/proc/PID/fd), and its child processes, at two
quiet points — after a warm-up (traffic run, then stopped and every session closed) and at the end (the
same) — so both figures describe the same state: no session open, nothing held. Growth between them
beyond noise fails the run:
  RSS: more than RSS_SLACK_MIB + RSS_SLACK_FRACTION of the start (allocator pools and caches — the
       audit database's page cache, glibc arenas — settle during the warm-up but keep moving a little);
  fds: more than FD_SLACK, after giving closing connections SETTLE seconds (a descriptor per leaked
       session, stream or child would exceed it quickly);
  children: any left at the end (every session's server must have been stopped);
  errors: any call that failed in a way the policy does not explain.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "mcp1"))

import harness  # noqa: E402
from approvals import ControlApi  # noqa: E402
from v1client import first_text, open_session  # noqa: E402

WORKERS = 4
CALLS_PER_SESSION = 40
RSS_SLACK_MIB = 16.0
RSS_SLACK_FRACTION = 0.10
FD_SLACK = 2
SETTLE = 15.0  # seconds the end sample may wait for closing connections
POLICY = {
    "version": "1",
    "default": "deny",
    "tools": {
        "echo": {},
        "get-sum": {"rate_limit": {"max": 3, "window": 60}},
        "get-env": {"action": "deny", "reason": "soak: never"},
        "get-tiny-image": {"action": "require_approval"},
    },
}
KINDS = ["echo", "get-sum", "get-env", "get-tiny-image"]


def fd_targets(pid: int) -> list[str]:
    """What each open descriptor is (socket:[inode], pipe:[inode], a path), for a growth report."""
    out = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            out.append(os.readlink(fd))
        except OSError:
            pass
    return sorted(out)


def sample(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {"rss_mib": rss / 1024, "fds": len(list(Path(f"/proc/{pid}/fd").iterdir())), "children": len(children)}


class Approver:
    """Attached to /control/events (so calls are held, not refused) and deciding every pending call."""

    def __init__(self, api: ControlApi) -> None:
        self.api = api
        self.stream = api.subscribe()
        self.decided = Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            for p in self.api.pending():
                n += 1
                reply = self.api.deny(p["id"], "soak: every fourth") if n % 4 == 0 else self.api.approve(p["id"])
                self.decided["denied" if n % 4 == 0 else "approved"] += reply.status == 200
            self.stop.wait(0.02)  # a person's pace is far slower; this only paces the polling

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.stream.close()


def classify(tool: str, result) -> str:
    text = first_text(result)
    if not result.isError:
        return {"echo": "allowed", "get-sum": "allowed", "get-tiny-image": "approved"}.get(tool, "unexpected")
    if "rate limit" in text and tool == "get-sum":
        return "rate_limited"
    if "soak: never" in text and tool == "get-env":
        return "denied"
    if "soak: every fourth" in text and tool == "get-tiny-image":
        return "rejected"
    return "unexpected"


async def worker(gw, spec: dict, until: float, counts: Counter, errors: list[str], rng: random.Random) -> None:
    while time.monotonic() < until:
        try:
            async with open_session("http", "everything", spec, gw) as (s, _):
                counts["sessions"] += 1
                for _ in range(CALLS_PER_SESSION):
                    if time.monotonic() >= until:
                        break
                    tool = rng.choice(KINDS)
                    args = {"echo": {"message": "soak"}, "get-sum": {"a": 1, "b": 2}}.get(tool, {})
                    result = await asyncio.wait_for(s.call_tool(tool, args), 30)
                    kind = classify(tool, result)
                    counts[kind] += 1
                    if kind == "unexpected":
                        errors.append(f"{tool}: {first_text(result)[:200]}")
        except Exception as e:  # noqa: BLE001 — every failure is counted and reported
            counts["errors"] += 1
            errors.append(f"{type(e).__name__}: {e}"[:300])


async def traffic(gw, spec: dict, seconds: float, seed: int) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    errors: list[str] = []
    until = time.monotonic() + seconds
    rngs = [random.Random(seed + i) for i in range(WORKERS)]
    await asyncio.gather(*(worker(gw, spec, until, counts, errors, rng) for rng in rngs))
    return counts, errors


def quiet_sample(gw, fds_at_most: float | None = None) -> dict[str, float]:
    """Wait (bounded) until the gateway has no session children left, then sample. With
    `fds_at_most`, also give the last sessions' connections up to SETTLE seconds to close (the
    gateway notices a client's close a moment after it happens); still more then is growth."""
    harness.wait_until(lambda: sample(gw.pid)["children"] == 0, 30, "every upstream child to be stopped")
    if fds_at_most is None:
        return sample(gw.pid)
    try:
        return harness.wait_until(lambda: (lambda x: x if x["fds"] <= fds_at_most else None)(sample(gw.pid)),
                                  SETTLE, "descriptors to settle")
    except harness.HarnessError:
        return sample(gw.pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seconds", type=float, nargs="?", default=60.0)
    parser.add_argument("--warmup", type=float, default=None, help="seconds of warm-up traffic (default: 20%%, 5..30)")
    args = parser.parse_args()
    # The mcp client logs messages that arrive after a session closed (server-everything's late
    # notifications); they are not failures of the gateway.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    logging.getLogger().setLevel(logging.CRITICAL)
    warmup = args.warmup if args.warmup is not None else min(30.0, max(5.0, args.seconds * 0.2))

    with tempfile.TemporaryDirectory(prefix="portcullis-soak-") as tmp:
        root = Path(tmp)
        spec = harness.everything_stdio()
        config = harness.write_config(root, {"everything": spec}, {"everything": POLICY}, approval_timeout_secs=30)
        gw = harness.start_gateway(config, root / "data")
        approver = Approver(ControlApi.of(gw))
        try:
            warm, warm_errors = asyncio.run(traffic(gw, spec, warmup, seed=1))
            start = quiet_sample(gw)
            start_fds = fd_targets(gw.pid)
            began = time.monotonic()
            trend: list[float] = []  # RSS during the run, for the summary (not a quiet state: no verdict)
            stop_sampling = threading.Event()

            def sample_trend() -> None:
                while not stop_sampling.wait(max(5.0, args.seconds / 10)):
                    trend.append(round(sample(gw.pid)["rss_mib"], 1))

            sampler = threading.Thread(target=sample_trend, daemon=True)
            sampler.start()
            counts, errors = asyncio.run(traffic(gw, spec, args.seconds, seed=2))
            elapsed = time.monotonic() - began
            stop_sampling.set()
            sampler.join(5)
            end = quiet_sample(gw, fds_at_most=start["fds"] + FD_SLACK)
            end_fds = fd_targets(gw.pid)
        finally:
            approver.close()
            code = gw.stop()
        audit_rows = len(gw.audit_db()) if (root / "data" / "audit.db").exists() else 0

    calls = sum(v for k, v in counts.items() if k not in ("sessions", "errors"))
    rss_limit = start["rss_mib"] * (1 + RSS_SLACK_FRACTION) + RSS_SLACK_MIB
    problems = []
    if end["rss_mib"] > rss_limit:
        problems.append(f"RSS grew {start['rss_mib']:.1f} -> {end['rss_mib']:.1f} MiB (limit {rss_limit:.1f})")
    if end["fds"] > start["fds"] + FD_SLACK:
        new = Counter(end_fds) - Counter(start_fds)
        problems.append(f"open descriptors grew {start['fds']:.0f} -> {end['fds']:.0f} (slack {FD_SLACK}); "
                        f"new: {sorted(new.elements())}")
    if end["children"]:
        problems.append(f"{end['children']:.0f} upstream children left running")
    all_errors = warm_errors + errors
    if all_errors or counts["unexpected"]:
        problems.append(f"{len(all_errors)} calls or sessions failed unexpectedly")
    missing = [k for k in ("allowed", "denied", "rate_limited", "approved") if counts[k] == 0]
    if missing:
        problems.append(f"no call was {', '.join(missing)}: the mix did not run")

    summary = {
        "seconds": round(elapsed, 1),
        "warmup_seconds": warmup,
        "workers": WORKERS,
        "sessions": counts["sessions"],
        "calls": calls,
        "calls_per_second": round(calls / elapsed, 1) if elapsed else 0,
        "by_decision": {k: counts[k] for k in ("allowed", "denied", "rate_limited", "approved", "rejected")},
        "approver_decisions": dict(approver.decided),
        "errors": len(all_errors) + counts["unexpected"],
        "audit_rows": audit_rows,
        "rss_mib": [round(start["rss_mib"], 1), round(end["rss_mib"], 1)],
        "fds": [int(start["fds"]), int(end["fds"])],
        "children_at_end": int(end["children"]),
        "rss_mib_during_run": trend,
        "warmup": {k: warm[k] for k in ("sessions", "allowed", "denied", "rate_limited", "approved", "rejected")},
        "gateway_exit": code,
    }
    print(json.dumps(summary, indent=2))
    print(f"soak: {calls} calls in {elapsed:.0f} s over {counts['sessions']} sessions; "
          f"RSS {start['rss_mib']:.1f} -> {end['rss_mib']:.1f} MiB, fds {start['fds']:.0f} -> {end['fds']:.0f}")
    for e in all_errors[:10]:
        print(f"  error: {e}")
    for p in problems:
        print(f"soak: FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
