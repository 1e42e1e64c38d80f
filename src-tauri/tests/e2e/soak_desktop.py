"""Soak of the desktop app: an hour (or --minutes N) of mixed use, measuring its memory at the same
quiet state after every round; growth beyond noise fails the run. Run by `scripts/bench.sh
--desktop-soak [MINUTES]` on the release build (not part of CI: it takes the time it measures).

One round, as a person and an agent would use the app:
  - an agent session makes allowed calls (echo) and held calls (get-sum);
  - each held call raises the prompt, which is decided in it: approve once, deny, deny with a
    reason, in turn;
  - the main window is opened, the audit tab browsed (a page more), the policies tab shown, and
    the window closed;
  - the agent's session ends (as an agent that exits: its server child stops);
  - then the app is left alone until it is idle in the tray again: the prompt freed (it lingers
    30 s hidden) and no web view left. That idle state is measured.

The audit log is first filled with --seed-rows rows (past the size of SQLite's page caches, as
after weeks of use), and the first `--warmup` rounds settle caches (WebKit's, allocator pools); the
growth is the last round's idle against the first measured one. Fails when RSS, PSS or USS grew
by more than SLACK_MIB + SLACK_FRACTION of the start, when RSS still rose by more than
SECOND_HALF_MIB over the second half of the rounds (no plateau), or when a web process is left at
idle.
(PSS and USS move with other processes mapping the same libraries — another WebKit app on the
machine lowers both — so RSS is the steadiest of the three.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import App, launch, wait_until, write_config  # noqa: E402
from test_memory import close_main, memory_kib, open_main_like_a_second_launch, web_processes  # noqa: E402

SLACK_MIB = 12
SLACK_FRACTION = 0.10
#: What the second half of the run may add to RSS: caches settle early, so memory that keeps
#: rising through the second half is growth whatever the total.
SECOND_HALF_MIB = 3
HELD_PER_ROUND = 3
ALLOWED_PER_ROUND = 40
DECISIONS = ["approve-once", "deny", "deny-reason"]


def decide_in_prompt(app: App, how: str) -> None:
    app.window("prompt")
    if how == "deny-reason":
        app.click("deny-with-reason")
        app.wait_testid("deny-reason").send_keys("not now (soak)")
        app.decide("deny-reason-confirm")
    else:
        app.decide(how)


def seed_audit(app: App, rows: int) -> None:
    """Fills the audit log as weeks of use would, before the first round: SQLite's page caches
    (three connections, 2 MiB each by default) then start full rather than filling with the
    soak's own rows, which would read as growth. A message of ~150 bytes makes each row ~0.5 KiB."""
    client = app.client()
    for i in range(rows):
        client.call_tool("echo", {"message": f"seed {i} " + "x" * 140})
    client.close()


def one_round(app: App, config: Path, n: int) -> None:
    client = app.client()
    for i in range(ALLOWED_PER_ROUND):
        client.call_tool("echo", {"message": f"soak {n}.{i}"})
    for i in range(HELD_PER_ROUND):
        held = app.call_async(client, "get-sum", {"a": n, "b": i})
        wait_until(app.prompt_viewable, 20, "the prompt on screen")
        decide_in_prompt(app, DECISIONS[(n + i) % len(DECISIONS)])
        held.result(timeout=60)
    open_main_like_a_second_launch(app, config)
    app.click("tab-audit")
    wait_until(lambda: app.find_all("audit-row"), 20, "the audit rows")
    if app.find_all("load-more"):
        app.click("load-more")
    app.click("tab-policies")
    app.wait_testid("policy-editor", 20)
    close_main(app, app.gateway()["pid"])
    client.close()


def idle(app: App, pid: int) -> dict:
    wait_until(lambda: web_processes(pid) == 0, 90, "the app idle in the tray, no web view left")
    time.sleep(3)  # a measurement pause after the state was reached, not a synchronisation
    return memory_kib(pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--warmup", type=int, default=2, help="rounds before the first measurement")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    parser.add_argument("--seed-rows", type=int, default=12_000,
                        help="audit rows written before the first round (an audit log past SQLite's caches)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="portcullis-soak-"))
    config = write_config(scratch)
    (scratch / "policies" / "everything.json").write_text(json.dumps({
        "version": "1", "default": "require_approval", "tools": {"echo": {"action": "allow"}}}))
    samples: list[dict] = []
    started = time.monotonic()
    with launch(scratch, config) as app:
        pid = app.gateway()["pid"]
        close_main(app, pid)
        seeded = time.monotonic()
        seed_audit(app, args.seed_rows)
        print(f"seeded {args.seed_rows} audit rows in {time.monotonic() - seeded:.0f} s", flush=True)
        n = 0
        while n < args.warmup or time.monotonic() - started < args.minutes * 60:
            one_round(app, config, n)
            m = idle(app, pid)
            n += 1
            if n > args.warmup:
                m["round"], m["minutes"] = n, round((time.monotonic() - started) / 60, 1)
                samples.append(m)
                print(f"round {n:3d} at {m['minutes']:5.1f} min: idle {m['pss'] // 1024} MiB PSS, "
                      f"{m['uss'] // 1024} MiB USS, {m['rss'] // 1024} MiB RSS ({m['each']})", flush=True)
    if len(samples) < 2:
        print("soak: too short to compare (give more --minutes)", file=sys.stderr)
        return 2
    first, last = samples[0], samples[-1]
    verdict = {}
    for key in ("rss", "pss", "uss"):
        grown = (last[key] - first[key]) / 1024
        allowed = SLACK_MIB + SLACK_FRACTION * first[key] / 1024
        verdict[key] = {"first_mib": first[key] // 1024, "last_mib": last[key] // 1024,
                        "grown_mib": round(grown, 1), "allowed_mib": round(allowed, 1), "ok": grown <= allowed}
    middle = samples[len(samples) // 2]
    late = (last["rss"] - middle["rss"]) / 1024
    verdict["rss_second_half"] = {"first_mib": middle["rss"] // 1024, "last_mib": last["rss"] // 1024,
                                  "grown_mib": round(late, 1), "allowed_mib": SECOND_HALF_MIB,
                                  "ok": late <= SECOND_HALF_MIB}
    summary = {"rounds": len(samples) + args.warmup, "minutes": last["minutes"], "verdict": verdict, "samples": samples}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2))
    for key, v in verdict.items():
        print(f"{key.upper().replace('_', ' ')}: {v['first_mib']} → {v['last_mib']} MiB "
              f"(+{v['grown_mib']} MiB, allowed {v['allowed_mib']}): {'ok' if v['ok'] else 'GREW'}")
    return 0 if all(v["ok"] for v in verdict.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
