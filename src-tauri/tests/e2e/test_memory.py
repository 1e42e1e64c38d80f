"""Resident memory of the app (its process and the WebKit processes it started): idle in the tray,
and with the main window showing 1,000 audit rows. Reported, with a generous bound."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import APP_BIN, App, app_processes, launch, refresh_handles, wait_until, write_config

ROWS = 1000


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


def test_resident_memory_idle_and_with_1000_audit_rows(scratch: Path) -> None:
    config = write_config(scratch)
    policy = scratch / "policies" / "everything.json"
    policy.write_text(json.dumps({"version": "1", "default": "require_approval", "tools": {"echo": {}}}))
    with launch(scratch, config, show=False) as app:
        pid = app.gateway()["pid"]
        time.sleep(3)
        idle = memory_kib(pid)
        client = app.client()
        for i in range(ROWS):
            client.call_tool("echo", {"message": f"row {i}"})
        open_main_like_a_second_launch(app, config)
        app.click("tab-audit")
        wait_until(lambda: app.find_all("audit-row"), 15, "the first page")
        while app.find_all("load-more"):
            before = len(app.find_all("audit-row"))
            app.click("load-more")
            wait_until(lambda: len(app.find_all("audit-row")) > before or not app.find_all("load-more"), 15, "a page")
        assert len(app.find_all("audit-row")) == ROWS
        time.sleep(2)
        full = memory_kib(pid)
    print(f"\nresident memory, app + WebKit processes: idle in the tray {idle['rss'] // 1024} MiB RSS "
          f"({idle['pss'] // 1024} MiB PSS, {idle['processes']} processes); main window with {ROWS} audit rows "
          f"{full['rss'] // 1024} MiB RSS ({full['pss'] // 1024} MiB PSS, {full['processes']} processes)"
          f"\n  the app process alone (VmRSS): idle {idle['app_rss'] // 1024} MiB, with {ROWS} rows "
          f"{full['app_rss'] // 1024} MiB"
          f"\n  PSS MiB by process, idle: {idle['each']}; with rows: {full['each']}")
    assert idle["pss"] < 1024 * 1024 and full["pss"] < 2 * 1024 * 1024, (idle, full)
