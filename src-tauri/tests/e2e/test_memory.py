"""Resident memory of the app (its process and the WebKit processes it started): idle in the tray,
with a prompt shown, with the main window showing 1,000 audit rows, and after closing that window
again (which must free its web view). Reported (and written as JSON for scripts/bench.sh
--desktop, which runs it on the release build), with a generous bound on the debug build."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import (APP_BIN, MAIN_TITLE, ROOT, App, app_processes, launch, refresh_handles, wait_until, write_config,
                      x_close, x_window_id)

ROWS = 1000
SETTLE = 3.0


def memory_kib(pid: int) -> dict[str, Any]:
    """Summed RSS and PSS (shared pages counted once) of the app's processes, in KiB, the app
    process's own RSS, and each process's PSS by name."""
    rss = pss = app_rss = 0
    processes = app_processes(pid)
    each: list[str] = []
    for p in processes:
        try:
            status = Path(f"/proc/{p}/status").read_text()
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
        except OSError:
            continue
        one_rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        rss += one_rss
        if p == pid:
            app_rss = one_rss
        one = next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
        pss += one
        each.append(f"{Path(f'/proc/{p}/comm').read_text().strip()} {one // 1024}")
    return {"rss": rss, "pss": pss, "app_rss": app_rss, "processes": len(processes), "each": ", ".join(each)}


def open_main_like_a_second_launch(app: App, config: Path) -> None:
    """Starting the app again (single instance) brings up the running one's main window."""
    subprocess.run([str(APP_BIN), "--config", str(config), "--data-dir", str(app.data_dir)], timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: len(app.driver.window_handles) >= 2, 20, "the main window of the running app")
    refresh_handles(app)
    app.window("main")


def settled_memory(pid: int) -> dict[str, Any]:
    """Memory after the app had a moment to finish painting and let go of what it no longer needs
    (a measurement pause, not a synchronisation: the state was waited for before)."""
    time.sleep(SETTLE)
    return memory_kib(pid)


def mib(m: dict[str, Any]) -> str:
    return f"{m['pss'] // 1024} MiB PSS ({m['rss'] // 1024} MiB RSS, {m['processes']} processes: {m['each']})"


def test_resident_memory_idle_prompt_main_window_and_after_closing_it(scratch: Path) -> None:
    config = write_config(scratch)
    policy = scratch / "policies" / "everything.json"
    policy.write_text(json.dumps({"version": "1", "default": "require_approval", "tools": {"echo": {}}}))
    with launch(scratch, config, show=False) as app:
        pid = app.gateway()["pid"]
        wait_until(lambda: not app.prompt_viewable(), 15, "the prompt's start-up warm-up to end")
        idle = settled_memory(pid)

        client = app.client()
        held = app.call_async(client, "get-sum", {"a": 1, "b": 2})
        wait_until(app.prompt_viewable, 15, "the prompt on screen")
        prompt = settled_memory(pid)
        app.window("prompt")
        app.decide("deny")
        held.result(timeout=30)
        wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")

        for i in range(ROWS):
            client.call_tool("echo", {"message": f"row {i}"})
        open_main_like_a_second_launch(app, config)
        app.click("tab-audit")
        wait_until(lambda: app.find_all("audit-row"), 15, "the first page")
        while app.find_all("load-more"):
            before = len(app.find_all("audit-row"))
            app.click("load-more")
            wait_until(lambda: len(app.find_all("audit-row")) > before or not app.find_all("load-more"), 15, "a page")
        assert len(app.find_all("audit-row")) == ROWS + 1, "the rows and the denied call"
        full = settled_memory(pid)

        # Closing the main window destroys it: its web view and web process go, the app stays.
        x_close(x_window_id(MAIN_TITLE))
        app.handles.pop("main")
        app.window("prompt")
        wait_until(lambda: x_window_id(MAIN_TITLE) is None, 15, "the main window to close")
        wait_until(lambda: memory_kib(pid)["processes"] < full["processes"], 15, "the main web view's process to end")
        closed = settled_memory(pid)
        assert app.gateway()["pid"] == pid, "the app keeps running in the tray"

    figures = {"binary": str(APP_BIN), "idle": idle, "prompt": prompt, "main_window_1000_rows": full,
               "after_closing_main": closed}
    out = Path(os.environ.get("PORTCULLIS_FOOTPRINT_OUT", ROOT / "target/bench/footprint-debug.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    print(f"\nresident memory of {APP_BIN.name}, the app + its WebKit processes:"
          f"\n  idle in the tray:            {mib(idle)}"
          f"\n  a prompt shown:              {mib(prompt)}"
          f"\n  main window on {ROWS} rows:   {mib(full)}"
          f"\n  main window closed again:    {mib(closed)}"
          f"\n  (written to {out})")
    assert closed["pss"] < full["pss"], "closing the main window frees its web view"
    assert idle["pss"] < 1024 * 1024 and full["pss"] < 2 * 1024 * 1024, (idle, full)
