"""The prompt is safe to type at, and shows every argument (issue 29 §3), in the real prompt window.

A critical tool's held call asks for its name to be typed. A click that misses the field, then the
name typed: the keys must go into the field, not act as the prompt's single-key shortcuts (the
issue saw "r" open "Deny, and tell the agent why" and the rest of the name fill the reason). And a
write-like call with a `path` and a long `content` shows both at a glance, the long one folded with
its size.

Its own app (module fixture): get-resource-links is critical in its policy, so its calls ask for the
typed name; server-everything ignores the extra `path` and `content` arguments when it runs.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any, Iterator

import pytest
from selenium.webdriver.common.action_chains import ActionChains

from conftest import CLI_BIN, PROMPT_TITLE, App, launch, wait_until, write_config
from test_prompt import control, held, marker, pointer_off_the_call, show

TOOL = "get-resource-links"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    scratch = tmp_path_factory.mktemp("portcullis-prompt-typing-e2e-")
    config = write_config(scratch)
    policy = scratch / "policies" / "everything.json"
    doc = json.loads(policy.read_text())
    doc["tools"][TOOL] = {"action": "require_approval", "class": "write", "risk": "critical"}
    policy.write_text(json.dumps(doc, indent=2) + "\n")
    with launch(scratch, config) as the_app:
        yield the_app


def active_testid(app: App) -> str | None:
    return app.driver.switch_to.active_element.get_attribute("data-testid")


def in_view(app: App, selector: str) -> bool:
    """Whether the element is drawn inside the prompt's card and, when in the arguments box, inside
    the box as scrolled: seen without scrolling anything."""
    return app.driver.execute_script(
        """
        const el = document.querySelector(arguments[0]);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        const within = (outer) => {
          const o = outer.getBoundingClientRect();
          return r.height > 0 && r.top >= o.top - 1 && r.bottom <= o.bottom + 1;
        };
        const box = el.closest('[data-testid="prompt-arguments"]');
        return within(document.querySelector('[data-testid="prompt-call"]')) && (!box || within(box));
        """, selector)


def audit_rows(app: App, m: str) -> list[dict[str, Any]]:
    out = subprocess.run([str(CLI_BIN), "audit", "--tool", TOOL, "--format", "jsonl", "--limit", "20",
                          "--data-dir", str(app.data_dir)], capture_output=True, text=True, check=True, timeout=20)
    return [json.loads(line) for line in out.stdout.splitlines() if m in line]


def test_a_name_typed_after_a_missed_click_goes_into_the_field_and_a_long_argument_is_folded(app: App) -> None:
    client = app.client()
    m = marker()
    path = f"/tmp/{m}/notes.md"
    content = "\n".join(["# Notes", *(f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(199))])
    pending = app.call_async(client, TOOL, {"count": 1, "path": path, "content": content})
    show(app, m)
    app.screenshot("prompt-critical-folded", PROMPT_TITLE)

    # Both arguments are present at a glance: the path whole, the content folded with its size.
    args = {a.get_attribute("data-key"): a for a in app.find_all("argument")}
    assert list(args) == ["count", "path", "content"], list(args)
    assert args["path"].find_element("css selector", '[data-testid="argument-value"]').text == path
    assert args["content"].get_attribute("data-folded") == "true"
    size = args["content"].find_element("css selector", '[data-testid="argument-size"]').text
    assert re.fullmatch(r"\d+\.\d kB, 200 lines, folded:", size), size
    # The heading names each of them, the folded one with its size, in view without scrolling.
    index = app.find("arguments-index")
    assert re.fullmatch(r"count·path·content \d+\.\d kB, folded", index.text), index.text
    assert in_view(app, '[data-testid="arguments-index"]'), "the arguments' heading is in view"
    # The box shows what it has room for, and says there is more below (the content's first lines).
    assert in_view(app, '[data-key="path"] [data-testid="argument-value"]'), "the path is in view, whole"
    assert in_view(app, '[data-testid="arguments-more-below"]'), "the box says there is more below"
    # …and the prompt still shows its decisions without scrolling.
    assert in_view(app, '[data-testid="deny-always"]') and in_view(app, '[data-testid="prompt-confirm-input"]')

    # The keys are off while the field is shown: no button offers one.
    assert not app.driver.find_elements("css selector", '[data-testid="prompt-call"] kbd'), "no key hints"

    # The field has the focus; a click on the call's text (not on the field) takes it away.
    wait_until(lambda: active_testid(app) == "prompt-confirm-input", 10, "the name field to have the focus")
    ActionChains(app.driver).move_to_element(app.find("prompt-agent")).click().perform()
    assert active_testid(app) != "prompt-confirm-input", "the click moved the focus out of the field"

    pointer_off_the_call(app)  # no tooltip of the clicked text over the screenshot
    ActionChains(app.driver).send_keys(TOOL).perform()
    field = app.find("prompt-confirm-input")
    wait_until(lambda: field.get_attribute("value") == TOOL, 10, "the typed name in the field")
    assert not app.find_all("deny-reason-form"), "no deny-with-reason form opened"
    assert not app.find_all("edit-panel") and not app.find_all("grant-panel"), "no other form opened"
    assert any(m in json.dumps(a["arguments"]) for a in control(app, "GET", "/control/approvals")), "still held"
    assert app.find("approve-once").is_enabled(), "the name typed unlocks Approve once"
    app.screenshot("prompt-critical-typed", PROMPT_TITLE)

    app.decide("approve-once")
    result = pending.result(timeout=30)
    assert not result.get("isError"), f"the approved call ran: {result}"
    rows = audit_rows(app, m)
    assert [(r["decision"], r["decided_by"]) for r in rows] == [("approved", "user")], rows
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")


def test_unfolding_shows_the_whole_value_and_says_more_below(app: App) -> None:
    client = app.client()
    m = marker()
    content = "\n".join(f"{m} line {i}" for i in range(120))
    pending = app.call_async(client, TOOL, {"count": 1, "path": f"/tmp/{m}.md", "content": content})
    show(app, m)
    held(app, m)
    app.click("argument-fold-toggle")
    value = app.find_all("argument-value")[2]
    wait_until(lambda: f"{m} line 119" in value.get_attribute("textContent"), 10, "the whole content")
    app.wait_testid("arguments-more-below")
    # Unfolded, the content is taller than the box: the box says so under it.
    app.decide("deny")
    assert pending.result(timeout=30).get("isError") is True
