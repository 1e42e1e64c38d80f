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

from conftest import (APP_BIN, MAIN_TITLE, ROOT, App, app_processes, launch, wait_until, write_config,
                      x_close, x_window_id)

ROWS = 1000
SETTLE = 3.0


def memory_kib(pid: int) -> dict[str, Any]:
    """Summed RSS, PSS (shared pages counted once) and USS (pages no other process maps) of the
    app's processes, in KiB, the app process's own RSS, and each process's PSS by name."""
    rss = pss = uss = app_rss = 0
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
        uss += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith(("Private_Clean:", "Private_Dirty:")))
        each.append(f"{Path(f'/proc/{p}/comm').read_text().strip()} {one // 1024}")
    return {"rss": rss, "pss": pss, "uss": uss, "app_rss": app_rss, "processes": len(processes), "each": ", ".join(each)}


def open_main_like_a_second_launch(app: App, config: Path) -> None:
    """Starting the app again (single instance) brings up the running one's main window."""
    subprocess.run([str(APP_BIN), "--config", str(config), "--data-dir", str(app.data_dir)], timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app.window("main")


def settled_memory(pid: int) -> dict[str, Any]:
    """Memory after the app had a moment to finish painting and let go of what it no longer needs
    (a measurement pause, not a synchronisation: the state was waited for before)."""
    time.sleep(SETTLE)
    return memory_kib(pid)


def mib(m: dict[str, Any]) -> str:
    return f"{m['pss'] // 1024} MiB PSS ({m['uss'] // 1024} MiB USS, {m['rss'] // 1024} MiB RSS, {m['processes']} processes: {m['each']})"


def web_processes(pid: int) -> int:
    return sum(1 for p in app_processes(pid) if Path(f"/proc/{p}/comm").read_text().startswith("WebKitWebProces"))


def webkit_processes(pid: int) -> int:
    """The app's WebKit processes of any kind (web, network). Under WebDriver the network
    process stays (its automation session ends with it); without, the app ends it once no web
    view is left (test_idle_plain.py)."""
    return sum(1 for p in app_processes(pid) if Path(f"/proc/{p}/comm").read_text().startswith("WebKit"))


def close_main(app: App, pid: int) -> None:
    """Closes the main window as a person would: it is destroyed, and its web process ends."""
    before = web_processes(pid)
    x_close(x_window_id(MAIN_TITLE))
    app.handles.pop("main", None)
    wait_until(lambda: x_window_id(MAIN_TITLE) is None, 15, "the main window to close")
    wait_until(lambda: web_processes(pid) < before, 15, "the main web view's process to end")


def test_resident_memory_idle_prompt_main_window_and_after_closing_it(scratch: Path) -> None:
    config = write_config(scratch)
    policy = scratch / "policies" / "everything.json"
    policy.write_text(json.dumps({"version": "1", "default": "require_approval", "tools": {"echo": {}}}))
    # WebDriver needs a web view to attach to, so the app starts with its main window; closing it
    # leaves the app as it idles in the tray, with no web view at all.
    with launch(scratch, config) as app:
        pid = app.gateway()["pid"]
        close_main(app, pid)
        idle = settled_memory(pid)
        assert web_processes(pid) == 0, f"idle in the tray, no web process is left: {idle['each']}"

        client = app.client()
        held = app.call_async(client, "get-sum", {"a": 1, "b": 2})
        wait_until(app.prompt_viewable, 15, "the prompt on screen")
        prompt = settled_memory(pid)
        app.window("prompt")
        app.decide("deny")
        held.result(timeout=30)
        wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")

        # The hidden prompt lingers for the next call (PROMPT_LINGER, 30 s), then frees its web view.
        wait_until(lambda: web_processes(pid) == 0, 30 + 30, "the hidden prompt to free its web view")
        idle_again = settled_memory(pid)

        for i in range(ROWS):
            client.call_tool("echo", {"message": f"row {i}"})
        open_main_like_a_second_launch(app, config)
        app.click("tab-audit")
        wait_until(lambda: app.find_all("audit-row"), 15, "the first page")
        while app.find_all("load-more"):
            before = app.find("audit-count").text
            app.click("load-more")
            wait_until(lambda: app.find("audit-count").text != before, 15, "a page")
        assert app.find("audit-count").text == f"{ROWS + 1} rows", "the rows and the denied call"
        # Only the rows near the view are drawn; scrolled to the end, the oldest (the denied
        # call) is among them.
        app.driver.execute_script(
            "const l = document.querySelector('[data-testid=audit-list]'); l.scrollTop = l.scrollHeight;")
        wait_until(lambda: any(r.get_attribute("aria-rowindex") == str(ROWS + 2) for r in app.find_all("audit-row")),
                   15, "the last row drawn at the end of the list")
        full = settled_memory(pid)

        # Closing the main window destroys it: its web view and web process go, the app stays.
        close_main(app, pid)
        closed = settled_memory(pid)
        assert app.gateway()["pid"] == pid, "the app keeps running in the tray"

    figures = {"binary": str(APP_BIN), "idle": idle, "prompt": prompt, "main_window_1000_rows": full,
               "after_closing_main": closed, "idle_again": idle_again}
    out = Path(os.environ.get("PORTCULLIS_FOOTPRINT_OUT", ROOT / "target/bench/footprint-debug.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    print(f"\nresident memory of {APP_BIN.name}, the app + its WebKit processes:"
          f"\n  idle in the tray:            {mib(idle)}"
          f"\n  a prompt shown:              {mib(prompt)}"
          f"\n  idle again, prompt freed:    {mib(idle_again)}"
          f"\n  main window on {ROWS} rows:   {mib(full)}"
          f"\n  main window closed again:    {mib(closed)}"
          f"\n  (written to {out})")
    assert closed["uss"] < full["uss"], "closing the main window frees its web view"
    # (Not `idle_again < prompt` in PSS: a page the web processes shared with the app is counted
    # whole in the app once they are gone, so the app's PSS rises as theirs vanishes; the
    # private figure is the one that shows what the app itself kept.)
    assert idle_again["uss"] < prompt["uss"], "the freed prompt gives its memory back"
    assert idle["pss"] < 1024 * 1024 and full["pss"] < 2 * 1024 * 1024, (idle, full)
