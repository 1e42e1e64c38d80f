"""The approval prompt's decisions end to end (issue 13): the honest countdown, deny with a reason,
approve with edits, and a scoped grant and an "always" with their previews — pressed in the real
prompt window, checked against what the gateway says (`GET /control/approvals`, the audit) and what
the MCP client got back.

Its own app (module fixture): echo's policy holds calls for 25 s, so any interaction lands in the
last 30 s where the prompt asks the gateway for more time. Tests run in file order; each leaves no
call pending. The "always" test is last: it allows echo for good.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterator

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.keys import Keys

from conftest import CLI_BIN, PROMPT_TITLE, App, app_processes, cpu_seconds, launch, result_text, wait_until, write_config

#: The policy timeout of echo in this module (below the prompt's 30 s "interacting" threshold).
HOLD_SECS = 25
#: The policy timeout of get-sum in this module: a call nobody decides times out quickly.
SHORT_HOLD_SECS = 4


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    scratch = tmp_path_factory.mktemp("portcullis-prompt-e2e-")
    config = write_config(scratch)
    policy = scratch / "policies" / "everything.json"
    doc = json.loads(policy.read_text())
    # What comes back (issue 33): an echo that answers a secret is held again, for its answer.
    doc["tools"]["echo"] = {"action": "require_approval", "approval_timeout": HOLD_SECS,
                            "results": {"secrets": "hold"}}
    doc["tools"]["get-sum"] = {"action": "require_approval", "approval_timeout": SHORT_HOLD_SECS}
    # Another door (issue 32): reading the server's docs asks first.
    doc.setdefault("resources", {})["demo://resource/static/document/*"] = {
        "action": "require_approval", "approval_timeout": HOLD_SECS, "class": "read", "risk": "medium"}
    policy.write_text(json.dumps(doc, indent=2) + "\n")
    with launch(scratch, config) as the_app:
        yield the_app


def marker() -> str:
    return f"m-{uuid.uuid4().hex[:10]}"


def control(app: App, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    info = app.gateway()
    req = urllib.request.Request(f"{info['url'].rstrip('/')}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {info['token']}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def held(app: App, m: str) -> dict[str, Any]:
    """The gateway's copy of the held call whose arguments carry `m`."""
    return wait_until(lambda: next((a for a in control(app, "GET", "/control/approvals")
                                    if m in json.dumps(a["arguments"])), None), 15, f"the held call {m}")


def show(app: App, m: str) -> None:
    """Waits until the prompt shows the call carrying `m` (and has painted it)."""
    wait_until(app.prompt_viewable, 15, "the prompt window on screen")
    app.window("prompt")
    wait_until(lambda: m in app.find("prompt-call").text, 15, f"the prompt to show {m}")
    call = app.find("prompt-call")
    wait_until(lambda: int(call.get_attribute("data-painted-at") or 0), 15, "the prompt to paint")


def seconds_shown(app: App) -> int:
    """The countdown's text as seconds ("25 s", "1:05")."""
    text = app.find("countdown-value").text
    m = re.fullmatch(r"(?:(\d+):(\d\d)|(\d+) s)", text)
    assert m, f"the countdown shows a time: {text!r}"
    return int(m[1]) * 60 + int(m[2]) if m[1] else int(m[3])


def assert_shows_the_gateway_deadline(app: App, m: str) -> int:
    """The prompt's deadline is the gateway's, in its data and in its text (within the second
    the text rounds to and the time the two reads take). Returns the deadline."""
    def agree() -> int | None:
        expires = held(app, m)["expires_at_ms"]
        shown = int(app.find("countdown").get_attribute("data-expires-at") or 0)
        left = (expires - time.time() * 1000) / 1000
        return expires if shown == expires and abs(seconds_shown(app) - left) <= 1.5 else None
    return wait_until(agree, 10, "the prompt to show the gateway's deadline")


def pointer_off_the_call(app: App) -> None:
    """Moves the pointer to the page's margin, outside the call's card."""
    actions = ActionBuilder(app.driver)
    actions.pointer_action.move_to_location(2, 2)
    actions.perform()


def deny_and_wait(app: App, pending: Future) -> dict[str, Any]:
    app.decide("deny")
    result = pending.result(timeout=30)
    assert result.get("isError") is True, result
    return result


def test_the_countdown_is_the_gateway_deadline_after_typing_extend_and_hover(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    first = held(app, m)
    assert first["expires_at_ms"] == first["requested_at_ms"] + HOLD_SECS * 1000, "not extended before anyone acted"
    assert assert_shows_the_gateway_deadline(app, m) == first["expires_at_ms"]
    assert app.find_all("countdown-paused") == [], "the display never freezes"

    # A key press (no decision key) with under 30 s left moves the gateway's deadline; the
    # pointer is not involved.
    ActionChains(app.driver).send_keys(Keys.ARROW_DOWN).perform()
    typed = wait_until(lambda: held(app, m)["expires_at_ms"] > first["expires_at_ms"] and held(app, m), 10,
                       "typing to extend the gateway's deadline")
    assert typed["expires_at_ms"] - time.time() * 1000 > 35_000, f"about 45 s left after typing: {typed}"
    assert assert_shows_the_gateway_deadline(app, m) == typed["expires_at_ms"]

    # Extend adds exactly a minute at the gateway.
    app.click("countdown-extend")
    extended = wait_until(lambda: held(app, m)["expires_at_ms"] >= typed["expires_at_ms"] + 60_000 and held(app, m),
                          10, "Extend to add a minute")
    assert extended["expires_at_ms"] == typed["expires_at_ms"] + 60_000, (typed, extended)
    assert assert_shows_the_gateway_deadline(app, m) == extended["expires_at_ms"]
    app.screenshot("prompt-countdown", PROMPT_TITLE)
    pointer_off_the_call(app)
    deny_and_wait(app, pending)

    # Hovering a fresh call with under 30 s left extends it too.
    m2 = marker()
    pending = app.call_async(client, "echo", {"message": m2})
    show(app, m2)
    before = held(app, m2)["expires_at_ms"]
    ActionChains(app.driver).move_to_element(app.find("prompt-tool")).move_by_offset(3, 0).perform()
    hovered = wait_until(lambda: held(app, m2)["expires_at_ms"] > before and held(app, m2), 10,
                         "hovering to extend the gateway's deadline")
    assert assert_shows_the_gateway_deadline(app, m2) == hovered["expires_at_ms"]
    deny_and_wait(app, pending)


def test_deny_with_a_reason_reaches_the_agent(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    ActionChains(app.driver).send_keys("r").perform()
    reason = app.wait_testid("deny-reason")
    reason.send_keys("use the staging server")
    app.screenshot("prompt-reason", PROMPT_TITLE)
    app.decide("deny-reason-confirm")
    result = pending.result(timeout=30)
    assert result.get("isError") is True and "use the staging server" in result_text(result), result

    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    app.click("deny-with-reason")
    app.decide("deny-preset-ask-me-first")
    result = pending.result(timeout=30)
    assert result.get("isError") is True and "ask me first" in result_text(result), result
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")


def test_a_held_resource_read_is_asked_in_words_and_approved_reaches_the_agent(app: App) -> None:
    """A `resources/read` held by the `resources` section gets the same prompt, worded for what it
    is (the agent wants to read the URI), without the tool-only parts; approved once, the agent gets
    the document, and the audit's row says `resources/read`."""
    uri = "demo://resource/static/document/features.md"
    client = app.client()
    pending = app.pool.submit(client.request, "resources/read", {"uri": uri})
    wait_until(app.prompt_viewable, 15, "the prompt window on screen")
    app.window("prompt")
    wait_until(lambda: uri in app.find("prompt-asks").text, 15, "the prompt to word the read")
    asks = app.find("prompt-asks").text
    assert "wants to read" in asks and "everything" in asks, asks
    assert app.find("request-uri").text == uri
    assert app.find_all("edit-arguments") == [], "a resource read is approved or denied as asked, never edited"
    app.screenshot("prompt-resource-read", PROMPT_TITLE)
    app.decide("approve-once")
    reply = pending.result(timeout=30)
    assert reply["result"]["contents"][0]["uri"] == uri, reply
    out = subprocess.run([str(CLI_BIN), "audit", "--method", "resources/read", "--format", "jsonl", "--limit", "5",
                          "--data-dir", str(app.data_dir)], capture_output=True, text=True, timeout=30, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert rows and rows[0]["tool"] == uri and rows[0]["decision"] == "approved", rows
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")


def last_audit_row(app: App, m: str) -> dict[str, Any]:
    out = subprocess.run([str(CLI_BIN), "audit", "--tool", "echo", "--format", "jsonl", "--limit", "20",
                          "--data-dir", str(app.data_dir)], capture_output=True, text=True, check=True, timeout=20)
    rows = [json.loads(line) for line in out.stdout.splitlines() if m in line]
    assert rows, f"an audit row for {m}: {out.stdout}"
    return rows[0]


def test_approve_with_edits_runs_the_edited_call_and_the_audit_keeps_both(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    app.click("edit-arguments")
    text = app.wait_testid("edit-text")
    text.send_keys(Keys.CONTROL, "a")
    text.send_keys(json.dumps({"message": f"{m}-edited"}))
    assert json.loads(text.get_attribute("value")) == {"message": f"{m}-edited"}
    wait_until(lambda: not app.find_all("edit-problems"), 10, "the edit to validate")
    app.decide("edit-approve")
    result = pending.result(timeout=30)
    assert not result.get("isError") and f"{m}-edited" in result_text(result), f"the upstream ran the edit: {result}"
    row = last_audit_row(app, m)
    assert row["arguments"] == {"message": f"{m}-edited"} and row["original_arguments"] == {"message": m}, row


def test_a_wrong_edit_is_refused_in_the_prompt_against_the_input_schema(app: App) -> None:
    client = app.client()
    client.request("tools/list", {})  # the gateway learns echo's inputSchema from the list
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    app.click("edit-arguments")
    text = app.wait_testid("edit-text")
    text.send_keys(Keys.CONTROL, "a")
    text.send_keys('{"message": 5}')
    assert text.get_attribute("value") == '{"message": 5}'
    problems = app.wait_testid("edit-problems")
    assert "arguments.message must be string" in problems.text, problems.text
    assert not app.find("edit-approve").is_enabled()
    app.click("edit-cancel")
    deny_and_wait(app, pending)


def test_a_scoped_grant_previews_and_then_spares_the_next_matching_call(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": f"/tmp/{m}/a.txt"})
    show(app, m)
    app.click("grant-options")
    app.click("grant-which-condition")
    app.click("grant-for-300")
    select = app.wait_testid("grant-condition")
    assert f"message under /tmp/{m}" in select.text, select.text
    preview = app.wait_testid("grant-preview-matched")
    assert "Would have matched 0 of the last" in preview.text, preview.text
    assert f"/tmp/{m}" in app.find("grant-preview-rule").text
    app.decide("grant-confirm")
    assert not pending.result(timeout=30).get("isError")
    # The same session, a path under the directory: no prompt, allowed by the grant.
    result = client.call_tool("echo", {"message": f"/tmp/{m}/b.txt"}, timeout=20)
    assert not result.get("isError"), result
    grants = control(app, "GET", "/control/grants")
    assert any(f"/tmp/{m}" in json.dumps(g) for g in grants), grants


def notifications_shown(app: App, since: int) -> list[tuple[str, str]]:
    """(D-Bus id, summary) of each notification shown after log offset `since`."""
    return re.findall(r'notification shown id="?\d+"? notification=(\d+) calls="?([^"\n]*)', app.log()[since:])


def dunst_displayed() -> int:
    out = subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True, timeout=10, check=True)
    return int(out.stdout.strip())


def test_identical_calls_one_counting_notification_and_apply_to_all(app: App) -> None:
    client = app.client()
    m = marker()
    since = len(app.log())
    before = dunst_displayed()
    pending = [app.call_async(client, "echo", {"message": m}) for _ in range(3)]
    wait_until(lambda: len([a for a in control(app, "GET", "/control/approvals") if m in json.dumps(a)]) == 3, 15,
               "three held calls")
    shown = wait_until(lambda: (n := notifications_shown(app, since)) and "3 tool calls" in n[-1][1] and n, 15,
                       "the notification to count three calls")
    assert len({dbus_id for dbus_id, _ in shown}) == 1, f"one notification, replaced in place: {shown}"
    # Another module's app may have left notifications on the same daemon: count this app's.
    assert dunst_displayed() - before <= 1, "one notification on screen, not three"
    show(app, m)
    # The prompt hears of each held call by its own event: under load the third may come a moment
    # after the prompt first shows the banner (bounded wait, then the text as it stands).
    alike = app.wait_testid("prompt-alike")
    try:
        wait_until(lambda: "3 identical calls" in alike.text, 10, "the prompt to count three identical calls")
    except AssertionError:
        pass
    assert "3 identical calls" in alike.text, alike.text
    app.decide("alike-deny")
    for p in pending:
        assert p.result(timeout=30).get("isError") is True
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")
    wait_until(lambda: dunst_displayed() <= before, 10, "the notification to go")


def test_a_waiting_prompt_costs_almost_no_cpu(app: App) -> None:
    """The countdown repaints once a second, when its text changes: a prompt left waiting keeps
    the app and its WebKit processes near idle. Measured over a fixed window (a measurement, not
    a wait for anything); the bound is generous for a debug build under Xvfb."""
    pids = app_processes(app.gateway()["pid"])

    def share_of_a_core(seconds: float) -> float:
        start_cpu, start = cpu_seconds(pids), time.monotonic()
        time.sleep(seconds)
        return (cpu_seconds(pids) - start_cpu) / (time.monotonic() - start)

    idle = share_of_a_core(3)
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    pointer_off_the_call(app)
    used = share_of_a_core(4)
    print(f"\nCPU of the app + WebKit processes: {idle * 100:.1f}% of one core with nothing held, "
          f"{used * 100:.1f}% while a prompt waits")
    assert used < 0.15, f"a waiting prompt must be near idle, used {used * 100:.1f}% of a core"
    deny_and_wait(app, pending)


def test_a_held_answer_shows_what_came_back_and_is_passed_or_refused(app: App) -> None:
    """Issue 33: echo's entry holds answers that carry a secret. The call is approved; its answer,
    which carries an AWS key, is then held in the same prompt, worded as an answer, the key's
    finding marked (redacted), with only "Pass to the agent" and "Refuse". Passed, the agent gets
    the answer; refused, the agent is told why and gets nothing of it.

    After the idle-CPU test: for some seconds after a held answer is decided, a web process of the
    app stays busy (about a quarter of a core measured 10 s later, idle 25 s later; not explained
    yet), which that test would count."""
    key = "AKIAIOSFODNN7EXAMPLE"
    client = app.client()
    for choice in ("approve-once", "deny"):
        m = marker()
        pending = app.call_async(client, "echo", {"message": f"{m} deploy with {key}"})
        show(app, m)
        app.decide("approve-once")
        wait_until(app.prompt_viewable, 15, "the prompt window on screen for the answer")
        app.window("prompt")
        asks = wait_until(lambda: next((e.text for e in app.find_all("prompt-asks") if "holds" in e.text), None),
                          15, "the prompt to ask about the answer")
        assert asks.startswith("The answer of echo from everything holds AWS access key: pass it to"), asks
        marks = wait_until(lambda: [e.text for e in app.find_all("answer-mark")], 15, "the finding marked")
        assert "[redacted]" in marks, marks
        assert key not in app.find("answer-excerpt").text, "the prompt shows the answer as the audit keeps it"
        actions = [e.get_attribute("data-action") for e in app.find_all("answer-finding")]
        assert actions == ["hold"], actions
        assert app.find_all("approve-session") == [] and app.find_all("edit-arguments") == [], \
            "an answer is passed once or refused, nothing more"
        if choice == "approve-once":
            app.screenshot("prompt-held-answer", PROMPT_TITLE)
        app.decide(choice)
        result = pending.result(timeout=30)
        if choice == "approve-once":
            assert result_text(result) == f"Echo: {m} deploy with {key}", result
        else:
            text = result_text(result)
            assert result.get("isError") is True and "withheld" in text and key not in text, result
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")


def test_a_call_nobody_decides_says_timed_out_before_the_prompt_closes(app: App) -> None:
    client = app.client()
    n = int(uuid.uuid4().int % 900_000_000) + 100_000_000
    pending = app.call_async(client, "get-sum", {"a": n, "b": 1})
    show(app, str(n))
    call = held(app, str(n))
    # Nobody touches the prompt: the gateway's deadline is the policy's, and it passes.
    wait_until(lambda: app.find("countdown-value").text == "Timed out", SHORT_HOLD_SECS + 10,
               "the prompt to say the call timed out")
    assert str(n) in app.find("prompt-call").text, "the timed-out call is still the one on screen"
    assert app.find("deny").is_enabled() is False, "a timed-out call can no longer be decided"
    result = pending.result(timeout=30)
    assert result.get("isError") is True, result
    assert "no decision within 4 s" in result_text(result), result
    wait_until(lambda: not app.prompt_viewable(), 15, "the prompt to close after saying so")
    out = subprocess.run([str(CLI_BIN), "audit", "--tool", "get-sum", "--format", "jsonl", "--limit", "5",
                          "--data-dir", str(app.data_dir)], capture_output=True, text=True, check=True, timeout=20)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    row = next(r for r in rows if str(n) in json.dumps(r["arguments"]))
    assert (row["decision"], row["decided_by"]) == ("timed_out", "timeout"), row
    assert call["expires_at_ms"] == call["requested_at_ms"] + SHORT_HOLD_SECS * 1000, call


# Runs after the CPU test: right after it, while its Undo was on offer, the prompt's web views were
# seen using ~100% of a core (an open bug, in the closing note of issue 13); the CPU test measures
# a prompt waiting without that.
def test_an_always_with_a_condition_previews_its_rule_then_writes_only_that_rule(app: App) -> None:
    """Calls where… × Always: the preview names the rule as it will be written; confirming writes it
    into echo's entry, a later call under the directory passes by it, a `..` escape is still held."""
    client = app.client()
    m = marker()
    policy_file = app.policies / "everything.json"
    before = policy_file.read_text()
    pending = app.call_async(client, "echo", {"message": f"/tmp/{m}/a.txt"})
    show(app, m)
    app.click("grant-options")
    app.click("grant-which-condition")
    app.click("grant-for-always")
    name = wait_until(lambda: (e := app.find("grant-preview-rule-name")) and f"/tmp/{m}" in e.text and e, 15,
                      "the preview of the new rule")
    assert "tools.echo.rules[0]" in name.text and "path_under" in name.text, name.text
    assert "path_under" in app.find("grant-preview-rule").text
    app.screenshot("prompt-always-condition", PROMPT_TITLE)  # the condition builder in the prompt
    assert "Would have matched 0 of the last" in app.find("grant-preview-matched").text
    app.decide("grant-confirm")
    assert not pending.result(timeout=30).get("isError")
    written = wait_until(lambda: (t := policy_file.read_text()) != before and t, 10, "the rule to be written")
    echo = json.loads(written)["tools"]["echo"]
    assert echo["action"] == "require_approval" and echo["approval_timeout"] == HOLD_SECS, echo
    assert echo["rules"] == [{"when": {"arguments.message": {"path_under": f"/tmp/{m}"}}, "action": "allow"}], echo
    result = client.call_tool("echo", {"message": f"/tmp/{m}/b.txt"}, timeout=20)
    assert not result.get("isError"), f"a call under the directory passes by the rule: {result}"
    escape = app.call_async(client, "echo", {"message": f"/tmp/{m}/../{m}-escape"})
    held(app, f"{m}-escape")
    show(app, f"{m}-escape")
    deny_and_wait(app, escape)


def test_always_shows_the_rule_and_its_count_then_writes_it(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    show(app, m)
    out = subprocess.run([str(CLI_BIN), "audit", "--tool", "echo", "--format", "jsonl", "--limit", "1000",
                          "--data-dir", str(app.data_dir)], capture_output=True, text=True, check=True, timeout=20)
    earlier = len(out.stdout.splitlines())
    ActionChains(app.driver).send_keys("A").perform()
    rule = app.wait_testid("grant-preview-rule")
    assert '"echo"' in rule.text, f"the rule as it will be written names the tool: {rule.text}"
    matched = app.find("grant-preview-matched").text
    assert f"Would have matched {earlier} of the last {earlier}" in matched, (matched, earlier)
    app.screenshot("prompt-always-preview", PROMPT_TITLE)
    policy = Path(app.policies / "everything.json").read_text()
    app.decide("grant-confirm")
    assert not pending.result(timeout=30).get("isError")
    written = wait_until(lambda: (t := (app.policies / "everything.json").read_text()) != policy and t, 10,
                         "the policy file to change")
    assert json.loads(written)["tools"]["echo"].get("action", "allow") == "allow", written
    result = client.call_tool("echo", {"message": marker()}, timeout=20)
    assert not result.get("isError"), f"echo is allowed now: {result}"
