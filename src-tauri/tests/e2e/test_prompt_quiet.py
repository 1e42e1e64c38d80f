"""The prompt is quiet: its web process sleeps while a call waits and while the Undo of an "always"
is offered (the gateway's undo deadline, 30 s). Measured on the prompt's own WebKit web process
(utime + stime from /proc over a fixed window — a measurement, not a wait), so the main window's
work does not hide or blame it. A busy loop (a timer, an animation frame or a relayout every frame)
uses most of a core and fails the bound by far; the figures are printed for the notes.

Its own app: echo and get-sum are held for 60 s (write_config), so nothing times out meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest
from selenium.webdriver.common.action_chains import ActionChains

from conftest import App, app_processes, cpu_seconds, launch, wait_until, write_config
from test_prompt import held, marker, pointer_off_the_call, show

#: Share of one core the prompt's web process may use while nothing changes but the countdown's
#: text once a second (measured: under 1 %; a busy loop uses 50–100 %).
QUIET = 0.05
WINDOW_SECS = 4.0


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    scratch = tmp_path_factory.mktemp("portcullis-quiet-e2e-")
    with launch(scratch, write_config(scratch)) as the_app:
        yield the_app


def web_processes(app: App) -> set[int]:
    return {p for p in app_processes(app.gateway()["pid"])
            if Path(f"/proc/{p}/comm").read_text().strip().startswith("WebKitWebProces")}


def share_of_a_core(pids: list[int], seconds: float = WINDOW_SECS) -> float:
    start_cpu, start = cpu_seconds(pids), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pids) - start_cpu) / (time.monotonic() - start)


def test_the_prompt_web_process_is_idle_while_a_call_waits_and_while_undo_is_offered(app: App) -> None:
    before = web_processes(app)  # the main window's
    client = app.client()
    m = marker()
    first = app.call_async(client, "echo", {"message": m})
    show(app, m)
    prompt = wait_until(lambda: sorted(web_processes(app) - before), 15, "the prompt's web process")
    assert len(prompt) == 1, f"one web process for the prompt: {prompt}"
    pointer_off_the_call(app)
    waiting = share_of_a_core(prompt)

    # "Always": the rule is written and its Undo offered until the gateway's deadline.
    ActionChains(app.driver).send_keys("A").perform()
    app.wait_testid("grant-preview-rule")
    app.decide("grant-confirm")
    assert not first.result(timeout=30).get("isError")
    app.wait_testid("prompt-undo")
    hidden = not app.prompt_viewable()
    offered_hidden = share_of_a_core(prompt)

    # The next held call comes while the Undo is still offered: both are on screen.
    n = str(int(time.time() * 1000) % 900_000_000 + 100_000_000)
    second = app.call_async(client, "get-sum", {"a": int(n), "b": 1})
    held(app, n)
    show(app, n)
    undo = app.wait_testid("prompt-undo")
    assert "everything.json" in undo.text, undo.text
    pointer_off_the_call(app)
    offered = share_of_a_core(prompt)
    assert app.find_all("prompt-undo"), "the Undo was still offered while measured (30 s)"

    print(f"\nthe prompt's web process ({prompt[0]}): {waiting * 100:.1f}% of a core with a call waiting, "
          f"{offered_hidden * 100:.1f}% with Undo offered and the prompt {'hidden' if hidden else 'shown'}, "
          f"{offered * 100:.1f}% with Undo offered beside the next call")
    for what, used in (("a call waiting", waiting), ("Undo offered, nothing waiting", offered_hidden),
                       ("Undo offered beside a waiting call", offered)):
        assert used < QUIET, f"{what}: the prompt's web process used {used * 100:.1f}% of a core"

    app.decide("deny")
    assert second.result(timeout=30).get("isError") is True
