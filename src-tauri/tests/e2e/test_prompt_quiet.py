"""The prompt is quiet: its web process sleeps while a call waits and while the Undo of an "always"
is offered (the gateway's undo deadline, 30 s). Measured on the prompt's own WebKit web process
(utime + stime from /proc over a fixed window — a measurement, not a wait), so the main window's
work does not hide or blame it. A busy loop (a timer, an animation frame or a relayout every frame)
uses most of a core and fails the bound by far; the figures are printed for the notes.

Each test runs twice, on an app with overlay scrollbars (WebKitWebDriver's default: it starts the
app with GTK_OVERLAY_SCROLLING=1) and on one with classic scrollbars (gtk-overlay-scrolling=false in
a GTK settings.ini, as a desktop or theme sets it), where a scrollbar takes room from the content.
A layout that changes the content's width when the scrollbar comes is the classic relayout loop
(scrollbar on, text rewraps, height drops, scrollbar off, repeat) at the height where it overflows:
the second test puts the Undo banner at exactly that length and measures there.

Its own app: echo and get-sum are held for 60 s (write_config), so nothing times out meanwhile.
"""

from __future__ import annotations

import os
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
#: After the card starts to scroll, an overlay scrollbar shows itself and fades out: its own
#: animation, 8% of a core for about 4 s (measured), then nothing. A relayout loop does not end.
SETTLE_SECS = 6.0


#: Width of a classic scrollbar in the page (0 with overlay scrollbars).
SCROLLBAR_WIDTH_JS = """
const probe = document.createElement('div');
probe.style.cssText = 'overflow: scroll; width: 100px; height: 100px; position: absolute; top: -200px';
document.body.append(probe);
const width = probe.offsetWidth - probe.clientWidth;
probe.remove();
return width;
"""


def classic_scrollbars(scratch: Path) -> dict[str, str]:
    """The app's environment for classic scrollbars. GTK_OVERLAY_SCROLLING=0 does not reach it under
    WebDriver (WebKitWebDriver sets it to 1 for the browser it starts); a system settings.ini does."""
    conf = scratch / "xdg"
    (conf / "gtk-3.0").mkdir(parents=True)
    (conf / "gtk-3.0" / "settings.ini").write_text("[Settings]\ngtk-overlay-scrolling=false\n")
    return {"XDG_CONFIG_DIRS": f"{conf}:{os.environ.get('XDG_CONFIG_DIRS') or '/etc/xdg'}"}


#: The main window's web process(es) of the app under test (the prompt's is any other).
main_web_processes: set[int] = set()


@pytest.fixture(scope="module", params=["overlay", "classic"])
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    scratch = tmp_path_factory.mktemp(f"portcullis-quiet-{request.param}-e2e-")
    env = classic_scrollbars(scratch) if request.param == "classic" else {}
    with launch(scratch, write_config(scratch), env=env) as the_app:
        the_app.window("main")
        width = the_app.driver.execute_script(SCROLLBAR_WIDTH_JS)
        assert (width > 0) == (request.param == "classic"), f"{request.param} scrollbars: {width} px wide"
        main_web_processes.clear()
        main_web_processes.update(web_processes(the_app))
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


#: The call's card (the prompt's scrolling area): its content width and whether it overflows.
CARD_JS = """
const card = document.querySelector('[data-testid="prompt-call"]');
return {width: card.clientWidth, overflows: card.scrollHeight > card.clientHeight};
"""

#: Sets the text of the Undo banner's path, after two frames (laid out and painted).
BANNER_PATH_JS = """
const done = arguments[arguments.length - 1];
document.querySelector('[data-testid="prompt-undo"] [title]').textContent = arguments[0];
requestAnimationFrame(() => requestAnimationFrame(() => done()));
"""


def test_the_prompt_is_idle_with_the_undo_banner_where_the_card_starts_to_scroll(app: App) -> None:
    """The Undo banner beside a waiting call, lengthened to the very character where the card
    starts to scroll (a bisection): there a scrollbar appears (classic scrollbars) and must not narrow
    the content — or the text rewraps, fits, the scrollbar goes, and the page relayouts for ever.
    The path is lengthened in the page: the real one's length depends on where the test runs."""
    client = app.client()
    first = app.call_async(client, "get-annotated-message", {"messageType": "success", "includeImage": False})
    show(app, "get-annotated-message")
    prompt = wait_until(lambda: sorted(web_processes(app) - main_web_processes), 15, "the prompt's web process")
    ActionChains(app.driver).send_keys("A").perform()
    app.wait_testid("grant-preview-rule")
    app.decide("grant-confirm")
    assert not first.result(timeout=30).get("isError")
    n = str(int(time.time() * 1000) % 900_000_000 + 100_000_000)
    second = app.call_async(client, "get-sum", {"a": int(n), "b": 1})
    held(app, n)
    show(app, n)
    app.wait_testid("prompt-undo")
    pointer_off_the_call(app)

    def card_with(length: int) -> dict[str, object]:
        app.driver.execute_async_script(BANNER_PATH_JS, ("policies/ " * 100)[:length])
        return app.driver.execute_script(CARD_JS)

    # The shortest path that makes the card scroll (overflowing grows with the length).
    low, high = 0, 1000
    assert not card_with(low)["overflows"] and card_with(high)["overflows"]
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if not card_with(mid)["overflows"] else (low, mid)
    fits, scrolls = card_with(low), card_with(high)
    time.sleep(SETTLE_SECS)
    at_threshold = share_of_a_core(prompt)
    scrolls_after = app.driver.execute_script(CARD_JS)
    card_with(low)
    time.sleep(1.0)
    just_below = share_of_a_core(prompt)
    assert app.find_all("prompt-undo"), "the Undo was still offered while measured (30 s)"

    kind = "classic" if app.driver.execute_script(SCROLLBAR_WIDTH_JS) else "overlay"
    print(f"\n{kind} scrollbars, banner path of {high} characters (the card scrolls from there): "
          f"content {fits['width']} px wide without the scrollbar, {scrolls['width']} px with it; "
          f"the prompt's web process {at_threshold * 100:.1f}% of a core at the threshold, "
          f"{just_below * 100:.1f}% one character below")
    assert scrolls_after == scrolls, f"the card's layout moved while measured: {scrolls} then {scrolls_after}"
    assert fits["width"] == scrolls["width"], \
        f"the scrollbar narrowed the card's content: {fits['width']} px, then {scrolls['width']} px"
    for what, used in (("at the threshold", at_threshold), ("one character below it", just_below)):
        assert used < QUIET, f"Undo banner {what}: the prompt's web process used {used * 100:.1f}% of a core"

    app.decide("deny")
    assert second.result(timeout=30).get("isError") is True
