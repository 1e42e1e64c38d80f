"""The release app's footprint as a person runs it, without WebDriver (whose automation session
adds to the web processes): started with no window, a held call made over HTTP and decided with
`portcullis approvals deny`, twice, then left until the prompt and WebKit's network process are
ended. Prints PSS/USS/RSS of the app and its WebKit processes and how soon the prompt window was on
screen (and writes them as JSON to $PORTCULLIS_FOOTPRINT_OUT when set). Run under Xvfb and a
D-Bus session, like the desktop suite:

    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \\
        tests/.peers/desktop/bin/python -u src-tauri/tests/e2e/footprint_plain.py

PORTCULLIS_DESKTOP_BIN / PORTCULLIS_BIN choose the binaries (default: target/release).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import ROOT, McpClient, wait_until, write_config  # noqa: E402
from test_idle_plain import held_call_denied  # noqa: E402
from test_memory import memory_kib, mib, webkit_processes  # noqa: E402

APP = os.environ.get("PORTCULLIS_DESKTOP_BIN", str(ROOT / "target/release/portcullis-desktop"))
CLI = os.environ.get("PORTCULLIS_BIN", str(ROOT / "target/release/portcullis"))


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="portcullis-footprint-"))
    config = write_config(scratch)
    (scratch / "policies" / "everything.json").write_text(json.dumps({"version": "1", "default": "require_approval"}))
    data = scratch / "data"
    app = subprocess.Popen([APP, "--config", str(config), "--data-dir", str(data)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        info = wait_until(lambda: json.loads((data / "gateway.json").read_text()), 30, "the gateway")
        time.sleep(3)  # a measurement pause after the state was reached
        figures = {"binary": APP, "idle": memory_kib(app.pid)}
        print("idle in the tray, no window ever opened:", mib(figures["idle"]))
        client = McpClient(info["url"], info["token"], "everything")
        with ThreadPoolExecutor(2) as pool:
            figures["prompt_built_ms"] = held_call_denied(client, data, pool, 1, Path(CLI))
            time.sleep(3)
            figures["prompt"] = memory_kib(app.pid)
            print(f"prompt built for the call, on screen after {figures['prompt_built_ms']:.0f} ms; then:",
                  mib(figures["prompt"]))
            figures["prompt_reused_ms"] = held_call_denied(client, data, pool, 2, Path(CLI))
            print(f"prompt reused, on screen after {figures['prompt_reused_ms']:.0f} ms")
        wait_until(lambda: webkit_processes(app.pid) == 0, 90 + 30, "the hidden prompt and WebKit's network process to end")
        time.sleep(3)
        figures["idle_again"] = memory_kib(app.pid)
        print("idle again, the prompt and WebKit's network process ended:", mib(figures["idle_again"]))
        if out := os.environ.get("PORTCULLIS_FOOTPRINT_OUT"):
            Path(out).write_text(json.dumps(figures, indent=2))
    finally:
        app.terminate()
        app.wait(timeout=20)


if __name__ == "__main__":
    main()
